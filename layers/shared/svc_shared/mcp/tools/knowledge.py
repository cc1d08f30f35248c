"""Knowledge tools: the builder instructions of a workspace and of a project."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from svc_shared.mcp.registry import NoArguments, ToolContext, ToolInput
from svc_shared.mcp.tools.common import Output, ProjectArguments, registry
from svc_shared.wiring import services


class KnowledgeArguments(ToolInput):
    text: str = Field(
        max_length=10240,
        description="Instructions for the builder; at most 10 KB (UTF-8 bytes). An empty string clears them.",
    )


class ProjectKnowledgeArguments(ProjectArguments, KnowledgeArguments):
    pass


class WorkspaceKnowledge(Output):
    workspace_id: str
    text: str


class WorkspaceKnowledgeSaved(Output):
    workspace_id: str
    bytes: int
    cleared: bool


class ProjectKnowledge(Output):
    project_id: str
    text: str


class ProjectKnowledgeSaved(Output):
    project_id: str
    bytes: int
    cleared: bool


@registry.tool("Get workspace knowledge", output=WorkspaceKnowledge)
def get_workspace_knowledge(ctx: ToolContext, _: NoArguments) -> dict[str, Any]:
    """The builder instructions that apply to every project of your personal workspace."""
    user = services.accounts().get_user(ctx.user_id)
    return {
        "workspace_id": user.default_workspace_id,
        "text": services.accounts().workspace_knowledge(user.default_workspace_id),
    }


@registry.tool("Set workspace knowledge", read_only=False, output=WorkspaceKnowledgeSaved)
def set_workspace_knowledge(ctx: ToolContext, args: KnowledgeArguments) -> dict[str, Any]:
    """Save builder instructions for every project of your workspace (at most 10 KB; an empty string clears
    them). Project knowledge takes precedence."""
    from svc_shared.domain.projects import check_knowledge

    user = services.accounts().get_user(ctx.user_id)
    services.accounts().set_workspace_knowledge(user.default_workspace_id, check_knowledge(args.text))
    return {
        "workspace_id": user.default_workspace_id,
        "bytes": len(args.text.encode()),
        "cleared": not args.text,
    }


@registry.tool("Get project knowledge", output=ProjectKnowledge)
def get_project_knowledge(ctx: ToolContext, args: ProjectArguments) -> dict[str, Any]:
    """The builder instructions of one project."""
    project = services.projects().owned(args.project_id, ctx.user_id)
    return {"project_id": project.id, "text": project.knowledge}


@registry.tool("Set project knowledge", read_only=False, output=ProjectKnowledgeSaved)
def set_project_knowledge(ctx: ToolContext, args: ProjectKnowledgeArguments) -> dict[str, Any]:
    """Save builder instructions for one project (at most 10 KB; an empty string clears them). They take
    precedence over workspace knowledge."""
    from svc_shared.domain.projects import check_knowledge

    projects = services.projects()
    project = projects.owned(args.project_id, ctx.user_id)
    projects.update(project, {"knowledge": check_knowledge(args.text) or None})
    return {"project_id": project.id, "bytes": len(args.text.encode()), "cleared": not args.text}
