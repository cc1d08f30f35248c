"""Rate limits in DynamoDB, each decided by one conditional write (when the instance's view is current).

`take` (and the /mcp gate, svc_shared.oauth.mcpauth) keep a sliding log: `limit` slots t0..t{limit-1} on one item,
each holding the time of an accepted event. An event is accepted by writing its time into a slot whose time
is at least `window` seconds old (or empty), under exactly that condition; so the log always holds every
event accepted in the last `window` seconds, no span of `window` seconds ever accepts more than `limit` (a
fixed calendar window lets twice the limit through across its boundary), and a refusal knows exactly when
the next event will pass: when the oldest event in the window leaves it.

Which slot to write is chosen from the item as this instance last saw it (its own writes, and the whole item
whenever a write failed): a slot that was free then is free now unless another instance took it since. Then
the write fails, its answer carries the item as it is (ReturnValuesOnConditionCheckFailure), and the next
attempt uses it: one round trip when the view is current, two when another instance wrote in between. A
refusal is always decided on the item as it is, never on a cached view.

`hit` and `count` are fixed-window counters (sign-in attempts per address). `backoff`, `fail` and `clear`
keep a failure count with the time of the last failure, for an exponential backoff (sign-in failures per
address and account).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from svc_shared.core.clock import Clock, system_clock
from svc_shared.core.tokens import hash_token
from svc_shared.storage import keys
from svc_shared.storage.dal import Cond, ConditionFailed, Table, all_of, attr, item_absent

MAX_LOG = 100  # the most slots a log has (one attribute each)
_ATTEMPTS = 10  # writes before giving up on a slot race (other requests taking the free slots each time)
_REMEMBERED = 10_000  # item views kept per instance

# send(attributes to set, condition) performs the conditional UpdateItem (ReturnValues NONE: the log knows
# what it wrote, and an answer with the item would cost the service more work); it raises ConditionFailed
# carrying the item as it is.
Send = Callable[[dict[str, Any], Cond | None], object]


def log_time(clock: Clock) -> float:
    """The time stored in a log: milliseconds are enough, and keep the item small."""
    return round(clock.now(), 3)


def _log_of(item: dict[str, Any] | None) -> dict[int, float]:
    return {
        int(name[1:]): float(value)
        for name, value in (item or {}).items()
        if name[:1] == "t" and name[1:].isdigit()
    }


class SlidingLog:
    """The slot choice and refusal arithmetic of one kind of sliding-log limit, with this instance's view
    of each log it has written."""

    def __init__(self, limit: int, window: int) -> None:
        if not 0 < limit <= MAX_LOG:
            raise ValueError(f"a sliding log has 1 to {MAX_LOG} slots")
        self.limit = limit
        self.window = window
        self._seen: dict[str, dict[int, float]] = {}

    def _free(self, log: dict[int, float], cutoff: float) -> list[int]:
        return [i for i in range(self.limit) if log.get(i, 0.0) <= cutoff]

    def _choose(self, log: dict[int, float] | None, cutoff: float, amount: int) -> list[int]:
        if log is None:  # never seen: any slot may be free
            return random.sample(range(self.limit), amount)
        free = self._free(log, cutoff)
        if len(free) >= amount:
            return random.sample(free, amount)  # at random: instances racing for one item rarely collide
        # Full as far as this view goes (views are only ever behind): the write fails and brings the item
        # as it is, so the refusal and its Retry-After rest on the item itself.
        return sorted(range(self.limit), key=lambda i: log.get(i, 0.0))[:amount]

    def _remember(self, key: str, log: dict[int, float]) -> None:
        if len(self._seen) >= _REMEMBERED:
            self._seen.clear()
        self._seen[key] = log

    def retry_after(self, log: dict[int, float], now: float, amount: int) -> int:
        """Whole seconds until `amount` events fit (at least 1): when enough of the window's events left."""
        cutoff = round(now - self.window, 3)
        busy = sorted(t for t in log.values() if t > cutoff)
        need = amount - (self.limit - len(busy))
        if need <= 0:
            return 1
        return max(1, math.ceil(busy[need - 1] + self.window - now))

    def admit(
        self,
        key: str,
        now: float,
        amount: int,
        send: Send,
        holds: Callable[[dict[str, Any]], bool] | None = None,
    ) -> tuple[bool, int, bool]:
        """Accept `amount` events at `now` if they fit: (allowed, retry after, False); (False, 0, True) when
        the caller's own part of the condition failed (`holds(item)` is false on the item as it is)."""
        if amount > self.limit:
            return False, self.window, False
        cutoff = round(now - self.window, 3)
        slots = self._choose(self._seen.get(key), cutoff, amount)
        for _ in range(_ATTEMPTS):
            still_free = all_of(attr(f"t{i}").missing() | attr(f"t{i}").le(cutoff) for i in slots)
            try:
                send({f"t{i}": now for i in slots}, still_free)
            except ConditionFailed as refused:
                actual = refused.item or {}
                if holds is not None and not holds(actual):
                    return False, 0, True
                log = _log_of(actual)
                self._remember(key, log)
                free = self._free(log, cutoff)
                if len(free) < amount:
                    return False, self.retry_after(log, now, amount), False
                slots = random.sample(free, amount)
                continue
            self._remember(key, {**self._seen.get(key, {}), **dict.fromkeys(slots, now)})
            return True, 0, False
        return False, 1, False  # lost every race for a free slot: the client may try again at once


class RateLimiter:
    def __init__(self, table: Table, clock: Clock = system_clock) -> None:
        self._table = table
        self._clock = clock
        self._logs: dict[tuple[int, int], SlidingLog] = {}

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
            add={"count": 1},
            set_missing={"expires_at": start + window + 60},
        )
        return int(item["count"]), remaining

    def take(self, scope: str, key: str, window: int, limit: int, amount: int = 1) -> tuple[bool, int]:
        """Accept `amount` events if they all fit in the last `window` seconds' `limit` (nothing is counted
        otherwise); returns (allowed, seconds until they would fit: 0 when allowed)."""
        log = self._logs.get((limit, window))
        if log is None:
            log = self._logs[(limit, window)] = SlidingLog(limit, window)
        pk = self._pk(scope, key)
        sk = keys.window(window)  # one log per scope, key and window length
        now = log_time(self._clock)

        def send(sets: dict[str, Any], when: Cond | None) -> dict[str, Any]:
            return self._table.update(
                pk,
                sk,
                set={**sets, "expires_at": int(now) + window + 60},
                when=when,
                returns="NONE",
                old_on_failure=True,
            )

        allowed, wait, _ = log.admit(f"{pk}/{sk}", now, amount, send)
        return allowed, wait

    def count(self, scope: str, key: str, window: int) -> tuple[int, int]:
        """Events counted so far in the current window, and seconds until it ends."""
        start, remaining = self._window(window)
        item = self._table.get(self._pk(scope, key), keys.window(start), consistent=True)
        return (int(item["count"]) if item else 0), remaining

    # -- exponential backoff on failures ----------------------------------------------------------------------
    def backoff(self, scope: str, key: str, *, free: int, base: int, cap: int, forget: int) -> int:
        """Seconds to wait before the next attempt (0: go ahead). The first `free` failures cost nothing;
        then each one doubles the wait after it, from `base` to at most `cap` seconds; failures are forgotten
        `forget` seconds after the last one. One strongly consistent read."""
        item = self._table.get(self._pk(scope, key), keys.BACKOFF, consistent=True)
        now = self._clock.now()
        if item is None or int(item.get("expires_at", 0)) <= now:
            return 0
        failures = int(item["count"])
        if failures < free:
            return 0
        delay = min(cap, base * 2 ** min(failures - free, 30))
        return max(0, math.ceil(float(item["last"]) + delay - now))

    def fail(self, scope: str, key: str, *, forget: int) -> int:
        """Count one failure (a count older than `forget` seconds starts again); returns the count."""
        now = self._clock.now()
        pk = self._pk(scope, key)
        try:
            item = self._table.update(
                pk,
                keys.BACKOFF,
                add={"count": 1},
                set={"last": round(now, 3), "expires_at": int(now) + forget},
                when=item_absent() | attr("expires_at").gt(round(now, 3)),
            )
        except ConditionFailed:  # expired but not yet deleted by the table's TTL: start again
            item = self._table.update(
                pk,
                keys.BACKOFF,
                set={"count": 1, "last": round(now, 3), "expires_at": int(now) + forget},
            )
        return int(item["count"])

    def clear(self, scope: str, key: str) -> None:
        self._table.delete(self._pk(scope, key), keys.BACKOFF)


class WindowCounters:
    """Fixed-window limits for events too frequent to write one by one (analytics beacons).

    Each key's count lives in one atomic counter per window (`ADD`, expiring with the window, as `hit` keeps
    them). An instance counts in memory and adds what it has counted to the shared counter, getting the total
    back, when `flush_seconds` have passed since its last write for that key or `flush_events` have piled up;
    a key's first event in an instance is written at once. An event is refused when the last total seen plus
    what this instance has not written yet reaches the limit, so the limit holds to within `flush_events` per
    instance. A busy key costs an instance about one write a second, not one per event; a key seen once costs
    one write."""

    def __init__(
        self, table: Table, clock: Clock = system_clock, *, flush_events: int = 20, flush_seconds: float = 1.0
    ) -> None:
        self._table = table
        self._clock = clock
        self._flush_events = flush_events
        self._flush_seconds = flush_seconds
        # (scope, key) -> [window start, last total seen, counted here and not yet written, last write time]
        self._seen: dict[tuple[str, str], list[float]] = {}

    def admit(self, scope: str, key: str, limit: int, window: int) -> tuple[bool, int]:
        """Count one event if the key is under `limit` in the current `window`: (allowed, seconds until the
        window ends when refused, else 0)."""
        now = self._clock.now()
        start = int(now // window * window)
        remaining = max(1, math.ceil(start + window - now))
        state = self._seen.get((scope, key))
        if state is None or state[0] != start:
            if len(self._seen) >= _REMEMBERED:
                self._seen.clear()
            state = self._seen[(scope, key)] = [start, 0, 0, -math.inf]
        if state[1] + state[2] >= limit:
            return False, remaining
        state[2] += 1
        if state[2] >= self._flush_events or now - state[3] >= self._flush_seconds:
            item = self._table.update(
                RateLimiter._pk(scope, key),
                keys.window(start),
                add={"count": int(state[2])},
                set_missing={"expires_at": start + window + 60},
                returns="UPDATED_NEW",
            )
            state[1], state[2], state[3] = int(item.get("count", 0)), 0, now
            if state[1] > limit:
                return False, remaining
        return True, 0
