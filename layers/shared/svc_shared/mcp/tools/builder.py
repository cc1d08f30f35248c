"""Builder tools: message a project's AI builder, poll its answer, and list its edit sessions. A message may run
as an MCP task (svc_shared.mcp.tasks) that follows the message at the builder."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from svc_shared.core.catalogue import say
from svc_shared.domain.credits import MESSAGE_COST, CreditsShort
from svc_shared.domain.projects import Project
from svc_shared.domain.tool_tasks import COMPLETED, FAILED, WORKING, Progress, Task
from svc_shared.mcp.registry import TaskSupport, ToolContext, ToolInput
from svc_shared.mcp.tools.common import Output, ProjectArguments, registry
from svc_shared.wiring import services


class SendMessageArguments(ProjectArguments):
    message: str = Field(
        min_length=1, max_length=20000, description="What the builder should change or build."
    )
    edit_session_id: str | None = Field(
        default=None,
        max_length=100,
        description="Continue this edit session (from list_edits); omit to start a new one.",
    )
    wait: bool = Field(
        default=True,
        description="Wait for the builder's final response (up to about 20 s); false "
        "returns a message_id to poll with get_message.",
    )


class MessageArguments(ToolInput):
    message_id: str = Field(min_length=1, max_length=100, description="The message_id send_message returned.")


class Message(Output):
    """A builder message; the builder's fields appear as they become known."""

    message_id: str
    status: str
    edit_session_id: str | None = None
    response: str | None = None
    commit_sha: str | None = None
    error: str | None = None
    created_at: str | None = None
    completed_at: str | None = None


class EditSessions(Output):
    edit_sessions: list[dict[str, object]]


def follow_message(ctx: ToolContext, task: Task, project: Project | None) -> Progress:
    """A builder message task: the message as the builder reports it now."""
    known = services.workbench().builder().message(task.ref or "").known()
    if known.get("status") == "complete":
        return Progress(COMPLETED, say("tasks.message_done"), known)
    if known.get("status") == "error":
        message = say("tasks.message_failed", error=known.get("error") or "")
        return Progress(FAILED, message, refusal={"code": "builder_failed", "message": message})
    return Progress(WORKING, say("tasks.message_working"))


def _without_waiting(args: SendMessageArguments) -> SendMessageArguments:
    return args.model_copy(update={"wait": False})  # as a task, the builder's answer comes with the task


@registry.tool(
    "Message the builder",
    description=(  # not the docstring: the words name the cost
        "Send a chat message to the AI builder of one project; it edits the project's repository. Project "
        "and workspace knowledge are sent along. With wait=true (default) the final response is returned; "
        f"otherwise poll get_message. Each message costs {MESSAGE_COST} credits (see get_credits); a balance "
        "short of that refuses it, with nothing sent."
    ),
    read_only=False,
    idempotent=False,
    open_world=True,
    output=Message,
    task=TaskSupport(follow_message, arguments=_without_waiting, ref=lambda value: str(value["message_id"])),
)
def send_message(ctx: ToolContext, args: SendMessageArguments) -> dict[str, Any]:
    user = services.accounts().get_user(ctx.user_id)
    knowledge = services.accounts().workspace_knowledge(user.default_workspace_id)
    try:
        return services.workbench().send_message(
            ctx.user_id, args.project_id, args.message, args.edit_session_id, args.wait, knowledge
        )
    except CreditsShort as exc:  # the refusal names where to top up
        where = say("credits.top_up_where", refusal=exc.message, url=services.billing_url())
        raise CreditsShort(where) from None


@registry.tool("Get a builder message", open_world=True, output=Message)
def get_message(ctx: ToolContext, args: MessageArguments) -> dict[str, Any]:
    """The state of a message sent with wait=false: in_progress, complete (with the response) or error."""
    return services.workbench().get_message(ctx.user_id, args.message_id)


@registry.tool("List edit sessions", open_world=True, output=EditSessions)
def list_edits(ctx: ToolContext, args: ProjectArguments) -> dict[str, Any]:
    """The project's AI editing sessions, newest first."""
    return {"edit_sessions": services.workbench().list_edits(ctx.user_id, args.project_id)}
