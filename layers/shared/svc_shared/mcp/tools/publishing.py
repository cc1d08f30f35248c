"""Publishing tools: run (or resume) a project's publish sequence, and deploy a published project again."""

from __future__ import annotations

from typing import Any

from svc_shared.mcp.apps import PUBLISH
from svc_shared.mcp.registry import ToolContext
from svc_shared.mcp.tools.common import Output, ProjectArguments, registry
from svc_shared.wiring import services


class PublishProgress(Output):
    project_id: str
    publish_status: str
    publish_stage: str
    publish_error: str | None
    live_url: str | None


class Deployment(Output):
    deployment_id: str
    workspace_url: str


def publish_state(project: Any) -> dict[str, Any]:
    """Where the project's publish run is, in the words the workspace's publish view uses."""
    from svc_shared.domain.provisioning import Provisioning

    report = Provisioning.report(project)
    return {
        "publish_status": report["status"],
        "publish_stage": report["stage"],
        "publish_error": report["error"] if report["status"] == "failed" else None,
    }


@registry.tool(
    "resume_publish",
    "Publish or retry publishing",
    "Start the publish sequence of one of your projects, or resume a stopped one from the stage where it "
    "stopped (the Retry of the publish view). Owner only, paid plan only.",
    ProjectArguments,
    read_only=False,
    idempotent=False,
    open_world=True,
    output=PublishProgress,
    ui_resource=PUBLISH,
    visibility=("app",),
)
def resume_publish(ctx: ToolContext, args: ProjectArguments) -> dict[str, Any]:
    user = services.accounts().get_user(ctx.user_id)
    report = services.provisioning().provision(user, args.project_id, start=True)
    return {
        "project_id": args.project_id,
        "publish_status": report["status"],
        "publish_stage": report["stage"],
        "publish_error": report["error"] if report["status"] == "failed" else None,
        "live_url": report["live_url"],
    }


@registry.tool(
    "deploy_project",
    "Deploy a project",
    "Start a new build and deploy of a published project on its static host. The Free plan includes 3 deploys "
    "per 30 days (the first deploy at publish is not counted). Returns the deployment id and the workspace URL "
    "where the build streams.",
    ProjectArguments,
    read_only=False,
    idempotent=False,
    open_world=True,
    output=Deployment,
    ui_resource=PUBLISH,
)
def deploy_project(ctx: ToolContext, args: ProjectArguments) -> dict[str, Any]:
    deploy_id = services.workbench().deploy(ctx.user_id, args.project_id)
    return {
        "deployment_id": deploy_id,
        "workspace_url": f"{services.workspace_url(args.project_id)}/deployments/{deploy_id}",
    }
