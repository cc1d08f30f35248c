"""Rate limits in DynamoDB, each decided by one conditional write.

`take` keeps a sliding log: the times of the last `limit` accepted events, oldest first, in attributes
t0..t{limit-1} of one item. An event is accepted only if the oldest of them is at least `window` seconds old,
so no span of `window` seconds ever holds more than `limit` accepted events (a fixed calendar window lets
twice the limit through across its boundary), and a refusal knows exactly when the next event will pass.
Accepting shifts the log by one in the same UpdateItem (`SET t0 = t1, ...`: the right-hand sides read the
item as it was), so concurrent requests on any number of instances are serialised by DynamoDB.

`hit` and `count` are fixed-window counters, for limits that count failures (sign-in).
"""

from __future__ import annotations

import math
from typing import Any

from svc_shared import keys
from svc_shared.clock import Clock, system_clock
from svc_shared.dal import Table
from svc_shared.tokens import hash_token

MAX_LOG = 100  # the longest sliding log (the update expression grows with it; 4 KB is DynamoDB's limit)


def sliding_log(
    limit: int, window: int, now: float, amount: int = 1
) -> tuple[list[str], str, dict[str, Any]]:
    """The parts of a conditional update that accepts `amount` events at `now` into a log of `limit`:
    (SET clauses, condition, values). 0 < amount <= limit <= MAX_LOG."""
    if not 0 < amount <= limit <= MAX_LOG:
        raise ValueError("amount must be 1..limit and limit at most MAX_LOG")
    keep = limit - amount
    clauses = [f"t{i} = if_not_exists(t{i + amount}, :zero)" for i in range(keep)]
    clauses += [f"t{i} = :now" for i in range(keep, limit)]
    oldest = f"t{amount - 1}"
    condition = f"(attribute_not_exists({oldest}) OR {oldest} <= :cutoff)"
    values: dict[str, Any] = {":now": now, ":cutoff": round(now - window, 3)}
    if keep:
        values[":zero"] = 0
    return clauses, condition, values


def seconds_until_room(item: dict[str, Any] | None, window: int, now: float, amount: int = 1) -> int:
    """Whole seconds until a refused `amount` fits in the log again (at least 1): when its
    `amount`-th oldest entry leaves the window."""
    oldest = float((item or {}).get(f"t{amount - 1}", 0))
    return max(1, math.ceil(oldest + window - now))


def log_time(clock: Clock) -> float:
    """The time stored in a log: milliseconds are enough, and keep the item small."""
    return round(clock.now(), 3)


class RateLimiter:
    def __init__(self, table: Table, clock: Clock = system_clock) -> None:
        self._table = table
        self._clock = clock

    def _window(self, window: int) -> tuple[int, int]:
        now = self._clock.now()
        start = int(now // window * window)
        return start, max(1, math.ceil(start + window - now))

    @staticmethod
    def _pk(scope: str, key: str) -> str:
        # Keys may be emails or addresses: store a digest, not the value.
        return keys.rate(scope, hash_token(key)[:32])

    def hit(self, scope: str, key: str, window: int) -> tuple[int, int]:
        """Count one event; returns (count in this window including it, seconds until the window ends)."""
        start, remaining = self._window(window)
        item = self._table.update(
            self._pk(scope, key),
            keys.window(start),
            "ADD #n :one SET expires_at = if_not_exists(expires_at, :exp)",
            names={"#n": "count"},
            values={":one": 1, ":exp": start + window + 60},
        )
        return int(item["count"]), remaining

    def take(self, scope: str, key: str, window: int, limit: int, amount: int = 1) -> tuple[bool, int]:
        """Accept `amount` events if they all fit in the last `window` seconds' `limit` (nothing is counted
        otherwise); returns (allowed, seconds until they would fit: 0 when allowed). One UpdateItem."""
        from svc_shared.dal import ConditionFailed

        if amount > limit:
            return False, window
        now = log_time(self._clock)
        clauses, condition, values = sliding_log(limit, window, now, amount)
        try:
            self._table.update(
                self._pk(scope, key),
                keys.window(window),  # one log per scope, key and window length
                "SET " + ", ".join([*clauses, "expires_at = :exp"]),
                condition=condition,
                values={**values, ":exp": int(now) + window + 60},
                returns="NONE",
                old_on_failure=True,
            )
        except ConditionFailed as refused:
            return False, seconds_until_room(refused.item, window, now, amount)
        return True, 0

    def count(self, scope: str, key: str, window: int) -> tuple[int, int]:
        """Events counted so far in the current window, and seconds until it ends."""
        start, remaining = self._window(window)
        item = self._table.get(self._pk(scope, key), keys.window(start), consistent=True)
        return (int(item["count"]) if item else 0), remaining
