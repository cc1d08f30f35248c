"""Account tools: who the caller is, and the workspaces they belong to."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from svc_shared.mcp.registry import NoArguments, ToolContext, ToolInput
from svc_shared.mcp.tools.common import Output, registry
from svc_shared.wiring import services


class WorkspaceArguments(ToolInput):
    workspace_id: str | None = Field(
        default=None,
        max_length=100,
        description="Workspace id from list_workspaces; omit it for your personal workspace.",
    )


class Workspace(Output):
    id: str
    name: str
    role: str
    project_count: int
    created_at: str
    personal: bool


class Workspaces(Output):
    workspaces: list[Workspace]


class Me(Output):
    id: str
    email: str
    display_name: str | None
    plan: str
    default_workspace_id: str
    avatar_url: str | None
    repo_host_connected: bool
    repo_host_username: str | None


@registry.tool("Who am I", output=Me)
def get_me(ctx: ToolContext, _: NoArguments) -> dict[str, Any]:
    """The authenticated user: id, email, display name, plan (free or paid), default workspace id, and
    whether a repo_host account is connected."""
    return services.accounts().get_user(ctx.user_id).public()


@registry.tool("List workspaces", output=Workspaces)
def list_workspaces(ctx: ToolContext, _: NoArguments) -> dict[str, Any]:
    """Every workspace you belong to (your personal one first), with your role and the number of projects."""
    return {"workspaces": [w.public() for w in services.accounts().list_workspaces(ctx.user_id)]}


@registry.tool("Get a workspace", output=Workspace)
def get_workspace(ctx: ToolContext, args: WorkspaceArguments) -> dict[str, Any]:
    """One workspace: name, your role, project count and created date. Defaults to your personal workspace."""
    accounts = services.accounts()
    return accounts.get_workspace(accounts.get_user(ctx.user_id), args.workspace_id).public()
