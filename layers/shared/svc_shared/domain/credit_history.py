"""The lines of a user's credit history (USER#<id>, CREDITLOG#...), and the opening balance a new account gets
with its first line: written by accounts (at creation) and credits (top-ups, spends) alike."""

from __future__ import annotations

import uuid
from typing import Any

from svc_shared.storage import keys
from svc_shared.storage.dal import Table

WELCOME_CREDITS = 500  # a new account's opening balance ($5, the smallest top-up): 50 messages


def history_line(user_id: str, kind: str, credits: int, at: int, **fields: Any) -> dict[str, Any]:
    """One line of a user's credit history: `kind` is welcome, top_up or message; `credits` signed."""
    entry_id = uuid.uuid4().hex[:12]
    return {
        "pk": keys.user(user_id),
        "sk": keys.credit_log(at, entry_id),
        "kind": kind,
        "credits": credits,
        "created_at": at,
        **fields,
    }


def opening_actions(table: Table, user_id: str, credits: int, at: int) -> list[dict[str, Any]]:
    """The transaction actions that give a new account its opening balance (and its history line)."""
    if credits <= 0:
        return []
    return [
        table.put_action(
            {"pk": keys.user(user_id), "sk": keys.CREDITS, "balance": credits, "updated_at": at}
        ),
        table.put_action(history_line(user_id, "welcome", credits, at)),
    ]
