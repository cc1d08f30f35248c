"""The audit of a user's state-changing MCP tool calls (tool, project, time, outcome), kept 90 days and shown
on the workspace's MCP access page. Read-only tools are not recorded: they change nothing, and /mcp's hot
path (tools/list, reads) keeps its single storage call."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from svc_shared.core.clock import Clock
from svc_shared.core.logs import get_logger
from svc_shared.storage import keys
from svc_shared.storage.dal import Table

logger = get_logger()
RETENTION_SECONDS = 90 * 24 * 3600
RECENT = 25
MAX_ERROR = 300


@dataclass(frozen=True)
class ToolCall:
    tool: str
    project_id: str | None
    at: float
    ok: bool
    error: str | None
    client_id: str


@dataclass(eq=False)
class ToolAudit:
    table: Table
    clock: Clock

    def record(
        self,
        user_id: str,
        *,
        tool: str,
        client_id: str,
        project_id: str | None,
        ok: bool,
        error: str | None = None,
    ) -> None:
        """Best effort: a failed audit write is logged and never fails the tool call it describes."""
        now = self.clock.now()
        item: dict[str, Any] = {
            "pk": keys.user(user_id),
            "sk": keys.tool_call(int(now * 1000), uuid.uuid4().hex[:8]),
            "tool": tool,
            "client_id": client_id,
            "ok": ok,
            "at": int(now),
            "expires_at": int(now) + RETENTION_SECONDS,
        }
        if project_id:
            item["project_id"] = project_id[:64]
        if error:
            item["error"] = error[:MAX_ERROR]
        try:
            self.table.put(item)
        except Exception as exc:  # noqa: BLE001 - the audit never breaks the call it records
            logger.warning("tool call audit not written", extra={"tool": tool, "reason": type(exc).__name__})

    def recent(self, user_id: str, limit: int = RECENT) -> list[ToolCall]:
        now = self.clock.now()
        calls = []
        for item in self.table.query(
            keys.user(user_id), sk_prefix=keys.CALL_PREFIX, newest_first=True, limit=limit
        ):
            if int(item.get("expires_at", 0)) <= now:
                continue  # DynamoDB deletes expired items within days, not at once
            calls.append(
                ToolCall(
                    tool=str(item["tool"]),
                    project_id=item.get("project_id"),
                    at=float(item["at"]),
                    ok=bool(item["ok"]),
                    error=item.get("error"),
                    client_id=str(item.get("client_id", "")),
                )
            )
        return calls
