"""Project tools: create, list, inspect, share and remix the caller's projects."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from svc_shared.mcp.apps import PROJECT_CARD
from svc_shared.mcp.registry import NoArguments, ToolContext, ToolInput
from svc_shared.mcp.tools.common import Output, ProjectArguments, registry
from svc_shared.mcp.tools.publishing import publish_state
from svc_shared.wiring import services


class CreateProjectArguments(ToolInput):
    prompt: str = Field(
        min_length=10,
        max_length=4000,
        description="What the shop sells, to whom, and in what tone (at least 10 characters).",
    )
    template_id: str | None = Field(
        default=None, max_length=64, description="A template id from list_template_projects."
    )
    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="Project name; derived from the prompt when omitted.",
    )


class VisibilityArguments(ProjectArguments):
    visibility: Literal["private", "workspace", "public"] = Field(
        description="private (only you), workspace (members of its workspace); public is reserved and behaves like private."
    )


class CreatedProject(Output):
    project_id: str
    workspace_url: str
    name: str
    status: str


class ProjectSummary(Output):
    id: str
    name: str
    slug: str
    status: str
    visibility: str
    live_url: str | None
    workspace_url: str
    created_at: str | None


class Projects(Output):
    projects: list[ProjectSummary]


class ProjectDetails(ProjectSummary):
    vertical: str | None
    description: str | None
    build_status: str | None
    last_deploy_at: str | None
    repo_host_repo: str | None
    repo_host_branch: str | None
    last_pushed_sha: str | None
    last_pushed_at: str | None
    deployed_sha: str | None = None  # the commit the live site serves
    build_error: str | None = None  # why the newest build failed, in words (None when it did not)
    db_project_ref: str | None
    publish_status: str
    publish_stage: str
    publish_error: str | None


class Visibility(Output):
    project_id: str
    visibility: str


class Remix(Output):
    project_id: str
    workspace_url: str
    name: str
    vertical: str | None
    description: str | None
    prompt: str


@registry.tool(
    "Create a project", read_only=False, idempotent=False, output=CreatedProject, ui_resource=PROJECT_CARD
)
def create_project(ctx: ToolContext, args: CreateProjectArguments) -> dict[str, Any]:
    """Create a new shop from a natural-language prompt (what is sold, to whom, the tone), optionally
    starting from a template of list_template_projects. Needs GitHub and Supabase connected in the
    workspace. Returns the project id and the workspace URL; generation starts when the URL is opened."""
    services.connections().require_for_projects(ctx.user_id)
    user = services.accounts().get_user(ctx.user_id)
    project = services.projects().create(
        owner_id=user.id,
        workspace_id=user.default_workspace_id,
        prompt=args.prompt,
        name=args.name,
        template_id=args.template_id,
    )
    return {
        "project_id": project.id,
        "workspace_url": services.workspace_url(project.id),
        "name": project.name,
        "status": project.status,
    }


@registry.tool("List projects", output=Projects, ui_resource=PROJECT_CARD)
def list_projects(ctx: ToolContext, _: NoArguments) -> dict[str, Any]:
    """Every project you own, newest first, with its status and live URL when deployed."""
    return {
        "projects": [
            p.summary(services.workspace_url(p.id)) for p in services.projects().list_owned(ctx.user_id)
        ]
    }


@registry.tool("Get project status", output=ProjectDetails, ui_resource=PROJECT_CARD)
def get_project_status(ctx: ToolContext, args: ProjectArguments) -> dict[str, Any]:
    """Build status, live URL and last deploy time of one of your projects, or of a project shared with
    your workspace, with the commit the live site serves and why the newest build failed, if it did."""
    from svc_shared.domain.projects import OWNER

    user = services.accounts().get_user(ctx.user_id)
    project, role = services.projects().viewable(user, args.project_id, services.accounts())
    if role == OWNER:  # the deploy is read with the owner's own connection
        project = services.workbench().refresh_status(ctx.user_id, project)
    return {**project.details(services.workspace_url(project.id)), **publish_state(project)}


@registry.tool("Set project visibility", read_only=False, output=Visibility)
def set_project_visibility(ctx: ToolContext, args: VisibilityArguments) -> dict[str, Any]:
    """Make a project private or visible to its workspace. public is reserved and stored as private."""
    projects = services.projects()
    project = projects.set_visibility(projects.owned(args.project_id, ctx.user_id), args.visibility)
    return {"project_id": project.id, "visibility": project.visibility}


@registry.tool("Remix a project", read_only=False, idempotent=False, output=Remix)
def remix_project(ctx: ToolContext, args: ProjectArguments) -> dict[str, Any]:
    """Start a new project from an existing project's brief (name, vertical, description) with a prefilled
    prompt. The repository and assets are not copied."""
    projects = services.projects()
    source = projects.owned(args.project_id, ctx.user_id)
    user = services.accounts().get_user(ctx.user_id)
    remix = projects.remix(source, user)
    return {
        "project_id": remix.id,
        "workspace_url": services.workspace_url(remix.id),
        "name": remix.name,
        "vertical": remix.vertical,
        "description": remix.description,
        "prompt": remix.prompt,
    }
