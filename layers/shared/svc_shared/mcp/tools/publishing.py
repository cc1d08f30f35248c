"""Publishing tools: run (or resume) a project's publish sequence, and deploy a published project again. Both
may run as MCP tasks (svc_shared.mcp.tasks): a publish task follows the publish record on the project (and its
cancel asks the run to stop at its next step), a deploy task follows its build at the static host."""

from __future__ import annotations

from typing import Any

from svc_shared.core.catalogue import say
from svc_shared.domain.projects import Project
from svc_shared.domain.publish_state import STAGES, PublishRecord
from svc_shared.domain.tool_tasks import COMPLETED, FAILED, WORKING, Progress, Task
from svc_shared.mcp.apps import PUBLISH
from svc_shared.mcp.registry import TaskSupport, ToolContext
from svc_shared.mcp.tools.common import Output, ProjectArguments, registry
from svc_shared.providers.static_host import FAILED_STATES, READY_STATES
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


def _progress(report: dict[str, Any]) -> dict[str, Any]:
    return {
        "publish_status": report["status"],
        "publish_stage": report["stage"],
        "publish_error": report["error"] if report["status"] == "failed" else None,
    }


def publish_state(project: Any) -> dict[str, Any]:
    """Where the project's publish run is, in the words the workspace's publish view uses."""
    from svc_shared.domain.provisioning import Provisioning

    return _progress(Provisioning.report(project))


def _stage_words() -> dict[str, str]:
    return {
        "db_creating": say("tasks.stages.db_creating"),
        "db_waiting_ready": say("tasks.stages.db_waiting_ready"),
        "db_applying_migrations": say("tasks.stages.db_applying_migrations"),
        "repo_host_creating_repo": say("tasks.stages.repo_host_creating_repo"),
        "repo_host_pushing_template": say("tasks.stages.repo_host_pushing_template"),
        "host_triggering_build": say("tasks.stages.host_triggering_build"),
    }


def _gone() -> Progress:
    message = say("tasks.project_gone")
    return Progress(FAILED, message, refusal={"code": "not_found", "message": message})


def follow_publish(ctx: ToolContext, task: Task, project: Project | None) -> Progress:
    """A publish task: where the publish record says the run is (one read: the project, with the task)."""
    from svc_shared.domain.provisioning import Provisioning

    if project is None:
        return _gone()
    report = Provisioning.report(project)
    value = {"project_id": project.id, **_progress(report), "live_url": report["live_url"]}
    updated = int(project.updated_at) if project.updated_at else None
    if report["status"] == "ready":
        words = say("tasks.publish_ready", url=report["live_url"])
        return Progress(COMPLETED, words, value, updated_at=updated, detail=value)
    if report["status"] == "failed":
        refusal = {"code": "publish_failed", "message": report["error"], "retryable": True}
        return Progress(FAILED, str(report["error"]), refusal=refusal, updated_at=updated, detail=value)
    stage = report["stage"]
    if report["status"] == "starting" or stage not in STAGES:
        return Progress(WORKING, say("tasks.publish_starting"), updated_at=updated, detail=value)
    if stage == "ready":  # the last step recorded its stage and is letting the project go
        stage = STAGES[-2]
    words = say(
        "tasks.publish_working",
        number=STAGES.index(stage) + 1,
        count=len(STAGES) - 1,
        stage=_stage_words()[stage],
    )
    return Progress(WORKING, words, updated_at=updated, detail=value)


def stop_publish(ctx: ToolContext, task: Task, project: Project | None) -> None:
    """A cancelled publish task: the run stops before its next step (a later press resumes there)."""
    if project is not None:
        PublishRecord(services.projects(), services.clock()).stop(project)


def follow_deploy(ctx: ToolContext, task: Task, project: Project | None) -> Progress:
    """A deploy task: its build as the static host reports it now."""
    if project is None:
        return _gone()
    deploy_id = task.ref or ""
    deploy = services.workbench().deploy_state(ctx.user_id, deploy_id)
    state = deploy.state or "new"
    if state in READY_STATES:
        url = deploy.deploy_ssl_url or deploy.ssl_url or project.live_url
        return Progress(COMPLETED, say("tasks.deploy_ready", deploy=deploy_id, url=url), task.value)
    if state in FAILED_STATES:
        message = say("tasks.deploy_failed", deploy=deploy_id, error=deploy.error_message or state)
        return Progress(FAILED, message, refusal={"code": "build_failed", "message": message})
    return Progress(WORKING, say("tasks.deploy_working", deploy=deploy_id, state=state))


@registry.tool(
    "Publish or retry publishing",
    read_only=False,
    idempotent=False,
    open_world=True,
    output=PublishProgress,
    ui_resource=PUBLISH,
    visibility=("app",),
    task=TaskSupport(follow_publish, stop=stop_publish),
)
def resume_publish(ctx: ToolContext, args: ProjectArguments) -> dict[str, Any]:
    """Start the publish sequence of one of your projects, or resume a stopped one from the stage where it
    stopped (the Retry of the publish view). Owner only, paid plan only."""
    user = services.accounts().get_user(ctx.user_id)
    report = services.provisioning().provision(user, args.project_id, start=True)
    return {"project_id": args.project_id, **_progress(report), "live_url": report["live_url"]}


@registry.tool(
    "Deploy a project",
    read_only=False,
    idempotent=False,
    open_world=True,
    output=Deployment,
    ui_resource=PUBLISH,
    task=TaskSupport(follow_deploy, ref=lambda value: str(value["deployment_id"])),
)
def deploy_project(ctx: ToolContext, args: ProjectArguments) -> dict[str, Any]:
    """Start a new build and deploy of a published project on its static host. The Free plan includes 3
    deploys per 30 days (the first deploy at publish is not counted). Returns the deployment id and the
    workspace URL where the build streams."""
    deploy_id = services.workbench().deploy(ctx.user_id, args.project_id)
    return {
        "deployment_id": deploy_id,
        "workspace_url": f"{services.workspace_url(args.project_id)}/deployments/{deploy_id}",
    }
