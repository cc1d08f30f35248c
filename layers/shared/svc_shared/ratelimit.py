"""Fixed-window rate limits kept as atomic DynamoDB counters that expire with the window."""

from __future__ import annotations

import math

from svc_shared import keys
from svc_shared.clock import Clock, system_clock
from svc_shared.dal import Table
from svc_shared.tokens import hash_token


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
        """Spend `amount` of the window's `limit` if it all fits (nothing is spent otherwise); returns
        (allowed, seconds until the window ends)."""
        from svc_shared.dal import ConditionFailed

        start, remaining = self._window(window)
        if amount > limit:
            return False, remaining
        try:
            self._table.update(
                self._pk(scope, key),
                keys.window(start),
                "ADD #n :amount SET expires_at = if_not_exists(expires_at, :exp)",
                condition="attribute_not_exists(#n) OR #n <= :room",
                names={"#n": "count"},
                values={":amount": amount, ":exp": start + window + 60, ":room": limit - amount},
            )
        except ConditionFailed:
            return False, remaining
        return True, remaining

    def count(self, scope: str, key: str, window: int) -> tuple[int, int]:
        """Events counted so far in the current window, and seconds until it ends."""
        start, remaining = self._window(window)
        item = self._table.get(self._pk(scope, key), keys.window(start), consistent=True)
        return (int(item["count"]) if item else 0), remaining
