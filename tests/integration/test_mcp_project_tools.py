"""Project and knowledge tools through POST /mcp (providers not involved)."""

from __future__ import annotations

import pytest

from apiclient import call_tool
from apiclient import tool_error as error_text
from apiclient import tool_ok as ok


def test_create_project_needs_repo_and_database_connections(api, bearer):
    text = error_text(
        call_tool(api, bearer, "create_project", prompt="Handmade candles for cosy homes, warm tone")
    )
    assert "GitHub" in text and "Supabase" in text


def test_prompt_under_ten_characters_names_the_argument(api, bearer):
    assert "prompt" in error_text(call_tool(api, bearer, "create_project", prompt="too short"))


def test_templates_are_listed_and_library_is_empty(api, bearer):
    templates = ok(call_tool(api, bearer, "list_template_projects"))["templates"]
    assert len(templates) >= 3
    assert all({"template_id", "name", "prompt"} <= set(t) for t in templates)
    assert ok(call_tool(api, bearer, "list_library_projects")) == {"projects": []}


def test_list_projects_starts_empty(api, bearer):
    assert ok(call_tool(api, bearer, "list_projects")) == {"projects": []}


def test_workspace_knowledge_round_trip_and_clear(api, bearer):
    assert ok(call_tool(api, bearer, "get_workspace_knowledge"))["text"] == ""
    assert (
        ok(call_tool(api, bearer, "set_workspace_knowledge", text="Use British spelling."))["cleared"]
        is False
    )
    assert ok(call_tool(api, bearer, "get_workspace_knowledge"))["text"] == "Use British spelling."
    assert ok(call_tool(api, bearer, "set_workspace_knowledge", text=""))["cleared"] is True
    assert ok(call_tool(api, bearer, "get_workspace_knowledge"))["text"] == ""


def test_knowledge_limit_is_ten_kilobytes_in_bytes(api, bearer):
    assert ok(call_tool(api, bearer, "set_workspace_knowledge", text="a" * 10240))["bytes"] == 10240
    assert "10 KB" in error_text(call_tool(api, bearer, "set_workspace_knowledge", text="é" * 5121))
    assert "text" in error_text(call_tool(api, bearer, "set_workspace_knowledge", text="a" * 10241))


@pytest.mark.parametrize("tool", ["get_project_status", "get_project_knowledge", "remix_project"])
def test_unknown_project_is_not_found(api, bearer, tool):
    assert error_text(call_tool(api, bearer, tool, project_id="nope")) == "project not found"
