"""Project and knowledge tools through POST /mcp (providers not involved)."""

from __future__ import annotations

import uuid

import pytest

from apiclient import call_tool
from apiclient import tool_error as error_text
from apiclient import tool_ok as ok
from svc_shared.wiring import services


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


@pytest.mark.parametrize("visibility", ["private", "public", "workspace"])
def test_project_status_follows_the_visibility_rule_for_workspace_members(api, demo_user, visibility):
    """A member of the owner's workspace reads a project's status only while it is shared with the workspace;
    otherwise the answer is the unknown project's, word for word."""
    from apiclient import authorize_client

    project = services.projects().create(
        owner_id=demo_user.id,
        workspace_id=demo_user.default_workspace_id,
        prompt="Handmade candles for cosy homes, warm tone",
        name="Candle Shop",
    )
    services.projects().set_visibility(project, visibility)
    member = services.accounts().create_user(email="m@example.com", password="member-password-1")
    services.accounts().add_collaborator(demo_user.default_workspace_id, member.id)
    tokens = authorize_client(api, "m@example.com", "member-password-1")
    api.cookies.clear()
    headers = {
        "Authorization": f"Bearer {tokens['access_token']}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    answer = call_tool(api, headers, "get_project_status", project_id=project.id)
    if visibility == "workspace":
        assert ok(answer)["name"] == "Candle Shop"
    else:
        unknown = call_tool(api, headers, "get_project_status", project_id=str(uuid.uuid4()))
        assert error_text(answer) == error_text(unknown) == "project not found"
