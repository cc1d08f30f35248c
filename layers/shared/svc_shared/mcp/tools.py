"""The tool server's tools. Each body makes one call into the domain; errors are domain errors, which the
dispatcher turns into `isError` results."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from svc_shared import services
from svc_shared.mcp.registry import NoArguments, Registry, ToolContext, ToolInput

registry = Registry()


class WorkspaceArguments(ToolInput):
    workspace_id: str | None = Field(
        default=None,
        max_length=100,
        description="Workspace id from list_workspaces; omit it for your personal workspace.",
    )


@registry.tool(
    "get_me",
    "Who am I",
    "The authenticated user: id, email, display name, plan (free or paid), default workspace id, and whether "
    "a repo_host account is connected.",
)
def get_me(ctx: ToolContext, _: NoArguments) -> dict[str, Any]:
    return services.accounts().get_user(ctx.user_id).public()


@registry.tool(
    "list_workspaces",
    "List workspaces",
    "Every workspace you belong to (your personal one first), with your role and the number of projects.",
)
def list_workspaces(ctx: ToolContext, _: NoArguments) -> dict[str, Any]:
    return {"workspaces": [w.public() for w in services.accounts().list_workspaces(ctx.user_id)]}


@registry.tool(
    "get_workspace",
    "Get a workspace",
    "One workspace: name, your role, project count and created date. Defaults to your personal workspace.",
    WorkspaceArguments,
)
def get_workspace(ctx: ToolContext, args: WorkspaceArguments) -> dict[str, Any]:
    accounts = services.accounts()
    return accounts.get_workspace(accounts.get_user(ctx.user_id), args.workspace_id).public()


@registry.tool(
    "list_library_projects",
    "List library projects",
    "Projects shared in the public library. Kept for parity with other builders: always an empty list.",
)
def list_library_projects(ctx: ToolContext, _: NoArguments) -> dict[str, Any]:
    return {"projects": []}
