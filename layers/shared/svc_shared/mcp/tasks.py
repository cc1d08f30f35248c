"""MCP tasks: a tool call that may take minutes (a publish, a deploy's build, a builder message) answered at once
with a task the client polls, in each era's dialect.

- 2025-11-25 (a handshake client that declared the `tasks` capability at `initialize`): a `tools/call` with
  `params.task` answers `{"task": Task}`; `tasks/get`, `tasks/result` (waits for the end within the function's
  time budget), `tasks/cancel` (answers the cancelled task; an ended one is refused) and `tasks/list`. A tool that
  refused makes a failed task.
- 2026-07-28 (the `io.modelcontextprotocol/tasks` extension declared in a request's capabilities): the server
  decides, and a task tool always answers a flat CreateTaskResult (`resultType: "task"`); `tasks/get` inlines
  the result once completed (a refusal is a completed task whose result is an error, as the extension says);
  `tasks/cancel` and `tasks/update` answer an empty acknowledgement.

In both, a publish task's `tasks/get` carries the run's state (the tool's own answer) in `_meta["svc/progress"]`,
for the publish view's step list. A client that declared neither sees none of it. Tasks are kept under their user in DynamoDB
(svc_shared.domain.tool_tasks); what a task's work is doing is read from the work itself at every poll."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from svc_shared.core.catalogue import say
from svc_shared.core.clock import iso_utc
from svc_shared.core.errors import DomainError, InvalidInput, NotFound
from svc_shared.domain.projects import Project
from svc_shared.domain.tool_tasks import (
    CANCELLED,
    COMPLETED,
    FAILED,
    POLL_INTERVAL_MS,
    TERMINAL,
    WORKING,
    Progress,
    Task,
    ToolTasks,
    ttl_ms,
)
from svc_shared.mcp import failures
from svc_shared.mcp.messages import INVALID_PARAMS, META_CAPABILITIES, error
from svc_shared.mcp.registry import EXTENSION_TASKS, HANDSHAKE_TASKS, Registry, Tool, ToolContext
from svc_shared.wiring.container import Services
from svc_shared.wiring.services import Service

EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
PROGRESS_META = "svc/progress"  # tasks/get's `_meta`: the followed run's state, as its tool answers it
METHOD_NOT_FOUND, STILL_WORKING, MISSING_CLIENT_CAPABILITY = -32601, -32000, -32021
# What a 2025-11-25 server declares: tasks/list, tasks/cancel, and task-augmented tools/call.
HANDSHAKE_CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
# tasks/result waits for the end at most this long (functions stop at 25 s), polling at this pace.
RESULT_WAIT_SECONDS = 18.0
RESULT_POLL_SECONDS = 2.0

Handler = Callable[[dict[str, Any], Any, ToolContext], dict[str, Any]]
Recorder = Callable[[ToolContext, str, Any, Any, "str | None"], None]


def _store(s: Services) -> ToolTasks:
    return ToolTasks(s.table, s.clock)


store = Service(_store)


def request_offers_tasks(params: dict[str, Any]) -> bool:
    """A 2026-07-28 request: whether its capabilities declare the tasks extension."""
    meta = params.get("_meta")
    capabilities = meta.get(META_CAPABILITIES) if isinstance(meta, dict) else None
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)


def server_capabilities(capabilities: dict[str, Any], dialect: str | None) -> dict[str, Any]:
    """The server's capabilities with its tasks, for a client that speaks them."""
    if dialect == HANDSHAKE_TASKS:
        return {**capabilities, "tasks": HANDSHAKE_CAPABILITY}
    if dialect == EXTENSION_TASKS:
        return {**capabilities, "extensions": {**capabilities.get("extensions", {}), EXTENSION: {}}}
    return capabilities


def refused(tool: Tool, params: dict[str, Any], context: ToolContext) -> str | None:
    """2025-11-25: a tool without task support called as a task is Method not found (the spec's answer)."""
    if context.tasks == HANDSHAKE_TASKS and isinstance(params.get("task"), dict) and tool.task is None:
        return say("tasks.tool_not_task", name=tool.name)
    return None


def wanted(tool: Tool, params: dict[str, Any], context: ToolContext) -> bool:
    """Whether this call runs as a task: asked for in 2025-11-25, decided by the server in 2026-07-28."""
    if tool.task is None or context.tasks is None:
        return False
    return context.tasks == EXTENSION_TASKS or isinstance(params.get("task"), dict)


def start(
    tool: Tool, context: ToolContext, args: Any, params: dict[str, Any], record: Recorder | None
) -> Any:
    """Run the tool's starting part and answer with its task (which starts working, whatever comes next)."""
    assert tool.task is not None
    args = tool.task.arguments(args)
    asked = params.get("task")
    ttl = ttl_ms(asked.get("ttl") if isinstance(asked, dict) else None)
    project_id = str(getattr(args, "project_id", ""))
    tasks = store()
    try:
        value = tool.run(context, args)
    except DomainError as exc:
        if record is not None:
            record(context, tool.name, args, None, exc.message)
        refusal = {"code": exc.code, "message": exc.message, "retryable": failures.retryable(exc)}
        task = tasks.create(context.user_id, tool.name, project_id, ttl=ttl, refusal=refusal)
    else:
        if record is not None:
            record(context, tool.name, args, value, None)
        task = tasks.create(
            context.user_id, tool.name, project_id, ttl=ttl, ref=tool.task.ref(value), value=value
        )
    fields = _fields(task, Progress(WORKING, say("tasks.started")), context.tasks)
    if context.tasks == EXTENSION_TASKS:
        return {**fields, "resultType": "task"}
    return {"task": fields}


# -- what a task is now ------------------------------------------------------------------------------------
def _progress(registry: Registry, context: ToolContext, task: Task, project: Project | None) -> Progress:
    if task.cancelled_at is not None:
        return Progress(CANCELLED, say("tasks.cancelled"), updated_at=task.cancelled_at)
    if task.refusal is not None:
        return Progress(
            FAILED, str(task.refusal["message"]), refusal=task.refusal, updated_at=task.created_at
        )
    tool = registry.tools.get(task.tool)
    if tool is None or tool.task is None:
        return Progress(
            FAILED, say("tasks.tool_gone"), refusal={"code": "gone", "message": say("tasks.tool_gone")}
        )
    try:
        return tool.task.follow(context, task, project)
    except DomainError as exc:
        # The work cannot be read now (its provider down, its connection gone): the task goes on, in words.
        return Progress(WORKING, say("tasks.unreadable", reason=exc.message))


def _fields(task: Task, progress: Progress, dialect: str | None) -> dict[str, Any]:
    status = progress.status
    if dialect == EXTENSION_TASKS and status == FAILED:
        status = COMPLETED  # the extension: a tool that ran and refused completed, with an error result
    fields: dict[str, Any] = {
        "taskId": task.task_id,
        "status": status,
        "statusMessage": progress.words,
        "createdAt": iso_utc(task.created_at),
        "lastUpdatedAt": iso_utc(max(progress.updated_at or task.created_at, task.created_at)),
    }
    if dialect == EXTENSION_TASKS:
        return {**fields, "ttlMs": task.ttl_ms, "pollIntervalMs": POLL_INTERVAL_MS}
    return {**fields, "ttl": task.ttl_ms, "pollInterval": POLL_INTERVAL_MS}


def _tool_result(registry: Registry, task: Task, progress: Progress) -> dict[str, Any]:
    """What the tool call would have answered, once the task has ended."""
    if progress.status == COMPLETED:
        return registry.tools[task.tool].result(progress.value)
    if progress.status == CANCELLED:
        return failures.tool_error(say("tasks.cancelled"), "cancelled")
    refusal = progress.refusal or {}
    return failures.tool_error(
        str(refusal.get("message") or progress.words),
        str(refusal.get("code") or "failed"),
        retryable=bool(refusal.get("retryable")),
    )


class Tasks:
    """The tasks/* methods of both eras over a tool registry."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry

    def handlers(self, stateless: bool) -> dict[str, Handler]:
        if stateless:
            methods = {"tasks/get": self._get, "tasks/cancel": self._cancel, "tasks/update": self._update}
        else:
            methods = {
                "tasks/get": self._get,
                "tasks/result": self._result,
                "tasks/cancel": self._cancel,
                "tasks/list": self._list,
            }
        return {name: self._declared(handler, stateless) for name, handler in methods.items()}

    @staticmethod
    def _declared(handler: Handler, stateless: bool) -> Handler:
        """The method for clients that declared tasks; to others it does not exist (2026-07-28: the missing
        capability is named, as the extension says)."""

        def method(params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
            if context.tasks is not None:
                return handler(params, id_, context)
            if stateless:
                required: dict[str, Any] = {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
                return error(id_, MISSING_CLIENT_CAPABILITY, say("tasks.not_declared"), required)
            return error(id_, METHOD_NOT_FOUND, say("mcp.method_not_found"))

        return method

    def _read(self, params: dict[str, Any], context: ToolContext) -> tuple[Task, Project | None, Progress]:
        task_id = params.get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise InvalidInput(say("tasks.task_id_invalid"), field="taskId")
        task, project = store().read(context.user_id, task_id)
        return task, project, _progress(self._registry, context, task, project)

    def _answer(self, id_: Any, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """A task method's reply: its result, or Invalid params naming the unknown task or the bad argument."""
        try:
            return {"jsonrpc": "2.0", "id": id_, "result": run()}
        except (NotFound, InvalidInput) as exc:
            return error(id_, INVALID_PARAMS, exc.message)

    def _get(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            task, _, progress = self._read(params, context)
            fields = _fields(task, progress, context.tasks)
            if progress.detail is not None:  # the publish view's step list follows the task with it
                fields["_meta"] = {PROGRESS_META: progress.detail}
            if context.tasks == EXTENSION_TASKS and progress.status in (COMPLETED, FAILED):
                fields["result"] = _tool_result(self._registry, task, progress)
            return fields

        return self._answer(id_, run)

    def _result(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        deadline = time.monotonic() + RESULT_WAIT_SECONDS
        while True:
            try:
                task, _, progress = self._read(params, context)
            except (NotFound, InvalidInput) as exc:
                return error(id_, INVALID_PARAMS, exc.message)
            if progress.status in TERMINAL:
                answer = _tool_result(self._registry, task, progress)
                answer["_meta"] = {**answer.get("_meta", {}), RELATED_TASK: {"taskId": task.task_id}}
                return {"jsonrpc": "2.0", "id": id_, "result": answer}
            if time.monotonic() + RESULT_POLL_SECONDS > deadline:
                return error(id_, STILL_WORKING, say("tasks.still_working", seconds=int(RESULT_WAIT_SECONDS)))
            time.sleep(RESULT_POLL_SECONDS)

    def _cancel(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            task, project, progress = self._read(params, context)
            if progress.status in TERMINAL:
                if context.tasks == EXTENSION_TASKS:
                    return {}  # the extension: cancelling an ended task is acknowledged, and changes nothing
                raise InvalidInput(say("tasks.already_ended", status=progress.status), field="taskId")
            task = store().cancel(task)
            support = self._registry.tools[task.tool].task
            if support is not None:
                support.stop(context, task, project)
            if context.tasks == EXTENSION_TASKS:
                return {}
            return _fields(task, _progress(self._registry, context, task, project), context.tasks)

        return self._answer(id_, run)

    def _list(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            cursor = params.get("cursor")
            page, after = store().page(context.user_id, cursor if isinstance(cursor, str) else None)
            projects = store().projects(page)
            listed = [
                _fields(t, _progress(self._registry, context, t, projects.get(t.project_id)), context.tasks)
                for t in page
            ]
            return {"tasks": listed, **({"nextCursor": after} if after else {})}

        return self._answer(id_, run)

    def _update(self, params: dict[str, Any], id_: Any, context: ToolContext) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            self._read(params, context)  # an unknown task is refused; a known one is acknowledged
            return {}  # no task of this server asks for input: answers to requests it never made are ignored

        return self._answer(id_, run)
