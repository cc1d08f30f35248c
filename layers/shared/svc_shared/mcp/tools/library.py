"""Library tools: the public project library (kept for parity, always empty) and the starter templates."""

from __future__ import annotations

from typing import Any

from svc_shared.mcp.registry import NoArguments, ToolContext
from svc_shared.mcp.tools.common import Output, registry


class LibraryProjects(Output):
    projects: list[dict[str, object]]


class Template(Output):
    template_id: str
    name: str
    vertical: str
    description: str
    prompt: str


class Templates(Output):
    templates: list[Template]


@registry.tool("List library projects", output=LibraryProjects)
def list_library_projects(ctx: ToolContext, _: NoArguments) -> dict[str, Any]:
    """Projects shared in the public library. Kept for parity with other builders: always an empty list."""
    return {"projects": []}


@registry.tool("List starter templates", output=Templates)
def list_template_projects(ctx: ToolContext, _: NoArguments) -> dict[str, Any]:
    """Starter templates: pass a template_id to create_project to start from one."""
    from svc_shared.domain.projects import TEMPLATES

    return {
        "templates": [
            {
                "template_id": t.id,
                "name": t.name,
                "vertical": t.vertical,
                "description": t.description,
                "prompt": t.prompt,
            }
            for t in TEMPLATES
        ]
    }
