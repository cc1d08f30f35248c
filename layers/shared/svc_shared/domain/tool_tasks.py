"""Tool calls run as MCP tasks: a task is a handle on work the platform already records (a publish run, a
deploy's build, a builder message), kept under its user for its ttl. What the work is doing is read from that
record at every poll, never copied onto the task: the task item holds only who asked, which project and what
to follow (a deploy or message id), the tool's first answer, and whether it was cancelled.

A task's id names its project (`<project id>.<random>`), so a poll reads the task and its project in one
request (BatchGetItem); the item lives under its user, so another user's task id reads as not found."""

from __future__ import annotations

import base64
import json
import secrets
from dataclasses import dataclass
from typing import Any

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.errors import InvalidInput, NotFound
from svc_shared.domain.projects import Project, project_of
from svc_shared.storage import keys
from svc_shared.storage.dal import ConditionFailed, Table, attr, item_exists

WORKING, COMPLETED, FAILED, CANCELLED = "working", "completed", "failed", "cancelled"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})
# A client may ask for a task's lifetime; it gets one between these (a publish may wait ten minutes for its
# database, and a client may come back later for the result).
MIN_TTL_MS = 60_000
DEFAULT_TTL_MS = 3_600_000
MAX_TTL_MS = 86_400_000
POLL_INTERVAL_MS = 3000
LIST_PAGE = 10


@dataclass(frozen=True)
class Task:
    task_id: str
    user_id: str
    tool: str
    project_id: str
    created_at: int
    ttl_ms: int
    ref: str | None = None  # what the task follows besides its project: a deploy id, a message id
    value: dict[str, Any] | None = None  # the tool's first answer
    refusal: dict[str, Any] | None = None  # the tool refused at once: {"code", "message"}
    cancelled_at: int | None = None


@dataclass(frozen=True)
class Progress:
    """Where the followed work is: a task status, its words, and the tool's result (completed) or the refusal
    (failed: code and message)."""

    status: str
    words: str
    value: dict[str, Any] | None = None
    refusal: dict[str, Any] | None = None
    updated_at: int | None = None
    detail: dict[str, Any] | None = None  # the run's state for a view beside the words (a publish's stage)


def ttl_ms(asked: Any) -> int:
    """The lifetime a task gets for the one asked (milliseconds; none asked: an hour)."""
    if not isinstance(asked, int) or isinstance(asked, bool):
        return DEFAULT_TTL_MS
    return min(max(asked, MIN_TTL_MS), MAX_TTL_MS)


def _task(item: dict[str, Any]) -> Task:
    return Task(
        task_id=str(item["sk"]).removeprefix(keys.TASK_PREFIX),
        user_id=str(item["user_id"]),
        tool=str(item["tool"]),
        project_id=str(item["project_id"]),
        created_at=int(item["created_at"]),
        ttl_ms=int(item["ttl_ms"]),
        ref=item.get("ref"),
        value=json.loads(item["value"]) if item.get("value") else None,
        refusal=json.loads(item["refusal"]) if item.get("refusal") else None,
        cancelled_at=int(item["cancelled_at"]) if item.get("cancelled_at") is not None else None,
    )


@dataclass(eq=False)
class ToolTasks:
    table: Table
    clock: Clock

    def create(
        self,
        user_id: str,
        tool: str,
        project_id: str,
        *,
        ttl: int,
        ref: str | None = None,
        value: dict[str, Any] | None = None,
        refusal: dict[str, Any] | None = None,
    ) -> Task:
        """Record the task (a consistent read finds it at once: the answer that names it is sent after)."""
        now = int(self.clock.now())
        task = Task(
            f"{project_id}.{secrets.token_urlsafe(12)}",
            user_id,
            tool,
            project_id,
            now,
            ttl,
            ref,
            value,
            refusal,
        )
        self.table.put(
            {
                "pk": keys.user(user_id),
                "sk": keys.task(task.task_id),
                "user_id": user_id,
                "tool": tool,
                "project_id": project_id,
                "created_at": now,
                "ttl_ms": ttl,
                "expires_at": now + -(-ttl // 1000),
                "ref": ref,
                "value": json.dumps(value, separators=(",", ":")) if value is not None else None,
                "refusal": json.dumps(refusal, separators=(",", ":")) if refusal is not None else None,
            }
        )
        return task

    def read(self, user_id: str, task_id: str) -> tuple[Task, Project | None]:
        """The caller's task and its project, in one request; NotFound for an unknown, expired or another
        user's task id."""
        project_id, dot, _ = task_id.rpartition(".")
        if not dot or not project_id:
            raise NotFound(say("tasks.not_found"))
        task_key = (keys.user(user_id), keys.task(task_id))
        items = self.table.batch_get([task_key, (keys.project(project_id), keys.META)], consistent=True)
        found = {(i["pk"], i["sk"]): i for i in items}
        item = found.get(task_key)
        if item is None or int(item.get("expires_at", 0)) <= int(self.clock.now()):
            raise NotFound(say("tasks.not_found"))
        meta = found.get((keys.project(project_id), keys.META))
        return _task(item), project_of(meta) if meta is not None else None

    def cancel(self, task: Task) -> Task:
        """Mark the task cancelled (once: a second cancel finds it so already)."""
        now = int(self.clock.now())
        try:
            self.table.update(
                keys.user(task.user_id),
                keys.task(task.task_id),
                set={"cancelled_at": now},
                when=item_exists() & attr("cancelled_at").missing(),
            )
        except ConditionFailed:
            return task
        return Task(**{**task.__dict__, "cancelled_at": now})

    def page(self, user_id: str, cursor: str | None) -> tuple[list[Task], str | None]:
        """The caller's live tasks, LIST_PAGE at a time, newest first, and the cursor of the next page."""
        after = _cursor(cursor)
        now = int(self.clock.now())
        tasks = []
        for item in self.table.query(keys.user(user_id), sk_prefix=keys.TASK_PREFIX):
            if int(item.get("expires_at", 0)) > now:
                tasks.append(_task(item))
        tasks.sort(key=lambda t: (t.created_at, t.task_id), reverse=True)
        if after is not None:
            tasks = [t for t in tasks if (t.created_at, t.task_id) < after]
        page = tasks[:LIST_PAGE]
        more = len(tasks) > LIST_PAGE
        last = page[-1] if page else None
        return page, _encode_cursor(last.created_at, last.task_id) if more and last else None

    def projects(self, tasks: list[Task]) -> dict[str, Project]:
        """The projects of a page of tasks, in one request."""
        wanted = sorted({t.project_id for t in tasks})
        items = self.table.batch_get([(keys.project(p), keys.META) for p in wanted], consistent=True)
        return {str(item["id"]): project_of(item) for item in items}


def _encode_cursor(created_at: int, task_id: str) -> str:
    return base64.urlsafe_b64encode(json.dumps([created_at, task_id]).encode()).decode()


def _cursor(cursor: str | None) -> tuple[int, str] | None:
    if cursor is None:
        return None
    try:
        created_at, task_id = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        return int(created_at), str(task_id)
    except (ValueError, TypeError):
        raise InvalidInput(say("tasks.cursor_invalid"), field="cursor") from None
