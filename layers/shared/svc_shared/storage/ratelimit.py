"""Rate limits in DynamoDB, each decided by one conditional write (when the instance's view is current).

`take` (and the /mcp gate, svc_shared.oauth.mcpauth) keep a sliding log: the times of the events accepted in the
last `window` seconds, at most `limit` of them. An event is accepted by writing its time over one that is at least
`window` seconds old (or over an empty place), so no span of `window` seconds ever accepts more than `limit` (a
fixed calendar window lets twice the limit through across its boundary), and a refusal knows exactly when the next
event will pass: when the oldest event in the window leaves it.

The log's places are held in a few string attributes, `l0`..`l<g-1>` (at most GROUPS of them, places dealt
round robin), each the times of its places written as fixed-width base-36 milliseconds since 2020, newest
first: a 60-place log is six attributes of 80 characters. A write replaces one group under the condition
that it is still what this instance last saw (group `l3` equal to the string it saw, or absent): the item
stays small and the condition as lean as a counter's, and two instances writing the same log at once collide
only when they pick the same group (they pick at random among the groups with room). A group whose newest time
has left the window can be taken without knowing it (group `l3` below the cutoff's string followed by `~`: it
sorts there exactly when its newest place is that old), which is how an instance that has never seen the log
writes first (on an item whose `lg`, the group count its places are laid out in, is the current one).

Which group to write is chosen from the item as this instance last saw it (its own writes, and the whole item
whenever a write failed). When another instance wrote that group since, the write fails, its answer carries
the item as it is (ReturnValuesOnConditionCheckFailure), and the next attempt uses it: one round trip when the
view is current, two when another instance wrote the same group in between. An instance writes the group it
wrote last while that has room (it knows it best: another instance rarely picks it), then another at random. A
refusal is always decided on the item as it is, never on a cached view. Logs of an earlier layout, one number
attribute per place (`t<i>`) or twelve groups of five (`l6`..`l11` beyond today's six), are folded into today's
groups by their first write, under the condition that they are unchanged, and their extra attributes removed.

Six groups of ten, not twelve of five: the write costs what a counter's does in the embedded DynamoDB, which copies
every attribute on each write, and collisions per request stay where they were (docs/decisions.md).

`hit` and `count` are fixed-window counters (sign-in attempts per address). `backoff`, `fail` and `clear`
keep a failure count with the time of the last failure, for an exponential backoff (sign-in failures per
address and account).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from svc_shared.core.clock import Clock, system_clock
from svc_shared.core.tokens import hash_token
from svc_shared.storage import keys
from svc_shared.storage.dal import Cond, ConditionFailed, Table, all_of, attr, item_absent

MAX_LOG = 100  # the most places a log has
GROUPS = 6  # the most attributes a log's places are held in (a log of earlier layouts had 12)
EPOCH_MS = 1_577_836_800_000  # 2020-01-01T00:00:00Z: log times are milliseconds since then
WIDTH = 8  # base-36 digits a time takes: 36**8 ms is 89 years
MARK = "lg"  # the group count of the places' layout, set by every write that knows no other is left
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"  # in the byte order DynamoDB compares strings in
_ATTEMPTS = 10  # writes before giving up on a race (other requests taking the free places each time)
_REMEMBERED = 10_000  # item views kept per instance

# send(attributes to set, condition, attributes to remove) performs the conditional UpdateItem (ReturnValues
# NONE: the log knows what it wrote, and an answer with the item would cost the service more work); it raises
# ConditionFailed carrying the item as it is.
Send = Callable[[dict[str, Any], Cond | None, list[str]], object]


def log_time(clock: Clock) -> float:
    """The time stored in a log: milliseconds are enough, and keep the item small."""
    return round(clock.now(), 3)


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000) - EPOCH_MS)


_PAIRS = [high + low for high in _DIGITS for low in _DIGITS]  # every two-digit string, by its value
_PAIR = len(_PAIRS)  # 36**2


def _encode(times: list[int]) -> str:
    """The places as WIDTH (8) base-36 digits each, written as four two-digit pairs (the log is encoded on
    every request), newest first."""
    out = []
    for value in sorted(times, reverse=True):
        high, low = divmod(value, _PAIR * _PAIR)
        out.append(
            _PAIRS[high // _PAIR % _PAIR] + _PAIRS[high % _PAIR] + _PAIRS[low // _PAIR] + _PAIRS[low % _PAIR]
        )
    return "".join(out)


def _decode(text: str) -> list[int]:
    return [int(text[i : i + WIDTH], 36) for i in range(0, len(text) - WIDTH + 1, WIDTH)]


def _carried(name: str, value: Any) -> list[int]:
    """The places held by an attribute of an earlier layout: `t<i>` a time in seconds, `l<g>` a group."""
    return _decode(str(value)) if name[:1] == "l" else [_ms(float(value))]


@dataclass
class _View:
    """A log as this instance last saw it: each group's places (ms, newest first; absent groups None) and the
    stored string each condition compares with, plus the attributes of an earlier layout still on the item."""

    groups: list[list[int] | None]
    stored: dict[int, str] = field(default_factory=dict)
    legacy: dict[str, Any] = field(default_factory=dict)
    marked: bool = False  # the item's MARK is today's group count: no attribute of an earlier layout is left
    last: int | None = None  # the group this instance wrote last: it knows that one best

    def carried(self) -> list[int]:
        """The places still held by attributes of an earlier layout."""
        return [t for name, value in self.legacy.items() for t in _carried(name, value)]

    def times(self) -> list[int]:
        return [t for places in self.groups if places for t in places] + self.carried()


class SlidingLog:
    """The group choice and refusal arithmetic of one kind of sliding-log limit, with this instance's view
    of each log it has written."""

    def __init__(self, limit: int, window: int) -> None:
        if not 0 < limit <= MAX_LOG:
            raise ValueError(f"a sliding log has 1 to {MAX_LOG} places")
        self.limit = limit
        self.window = window
        self.sizes = [len(range(g, limit, min(limit, GROUPS))) for g in range(min(limit, GROUPS))]
        self._seen: dict[str, _View] = {}

    def _view(self, item: dict[str, Any]) -> _View:
        view = _View(groups=[None] * len(self.sizes))
        for name, value in item.items():
            if name[:1] == "l" and name[1:].isdecimal() and int(name[1:]) < len(self.sizes):
                g = int(name[1:])
                # a group of the twelve-group layout holds five places: the rest of today's ten are free
                places = _decode(str(value))[: self.sizes[g]]
                view.groups[g] = places + [0] * (self.sizes[g] - len(places))
                view.stored[g] = str(value)
            elif name[:1] in "lt" and name[1:].isdecimal():
                view.legacy[name] = value
        view.marked = item.get(MARK) == len(self.sizes)
        return view

    def _remember(self, key: str, view: _View) -> None:
        if len(self._seen) >= _REMEMBERED:
            self._seen.clear()
        self._seen[key] = view

    def live(self, view: _View, cutoff: int) -> list[int]:
        return sorted(t for t in view.times() if t > cutoff)

    def retry_after(self, live: list[int], now: float, amount: int) -> int:
        """Whole seconds until `amount` events fit (at least 1): when enough of the window's events left."""
        need = amount - (self.limit - len(live))
        if need <= 0:
            return 1
        return max(1, math.ceil((live[need - 1] + EPOCH_MS) / 1000 + self.window - now))

    def _plan(self, view: _View, cutoff: int, stamp: int, amount: int) -> dict[int, list[int]] | None:
        """The groups to write so that `amount` places hold `stamp` (and the earlier format's live places
        move into groups): a random group with room first. None when the view has no room."""
        pending = [t for t in view.carried() if t > cutoff] + [stamp] * amount
        changed: dict[int, list[int]] = {}

        def order() -> Iterator[int]:
            # The group this instance wrote last first (it is the least likely changed), then the others at
            # random, drawn only when that one has no room
            if view.last is not None:
                yield view.last
            yield from (g for g in random.sample(range(len(self.sizes)), len(self.sizes)) if g != view.last)

        for g in order():
            places = list(view.groups[g] or [0] * self.sizes[g])
            free = [i for i, t in enumerate(places) if t <= cutoff]
            if not free or not pending:
                continue
            for i in free[: len(pending)]:
                places[i] = pending.pop()
            changed[g] = places
            if not pending:
                return changed
        return None

    def _blind(self, cutoff: int, stamp: int, amount: int) -> tuple[dict[int, list[int]], Cond | None]:
        """Groups to take whole without knowing them: absent, or every place older than the window."""
        groups: dict[int, list[int]] = {}
        left = amount
        for g in random.sample(range(len(self.sizes)), len(self.sizes)):
            take = min(left, self.sizes[g])
            groups[g] = [stamp] * take + [0] * (self.sizes[g] - take)
            left -= take
            if not left:
                break
        expired = _encode([cutoff]) + "~"  # sorts after every group whose newest place is <= cutoff
        taken = all_of(attr(f"l{g}").missing() | attr(f"l{g}").lt(expired) for g in groups)
        assert taken is not None
        # An item of an earlier layout has another MARK or none: the write fails and the next one folds it in.
        return groups, item_absent() | (attr(MARK).eq(len(self.sizes)) & taken)

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
        stamp, cutoff = _ms(now), _ms(now - self.window)
        view = self._seen.get(key)
        for _ in range(_ATTEMPTS):
            plan = self._plan(view, cutoff, stamp, amount) if view is not None else None
            remove: list[str] = []
            if plan is None:
                # Never seen, or full as far as this view goes (views are only ever behind): take groups whose
                # places all left the window; if there are none the write fails and brings the item as it is,
                # so a refusal and its Retry-After rest on the item itself.
                plan, when = self._blind(cutoff, stamp, amount)
                mark = True
            else:
                assert view is not None
                unchanged = [
                    attr(f"l{g}").eq(view.stored[g]) if g in view.stored else attr(f"l{g}").missing()
                    for g in plan
                ]
                remove = sorted(view.legacy)  # places of the earlier format move into groups, unchanged
                when = all_of([*unchanged, *(attr(n).eq(v) for n, v in view.legacy.items())])
                mark = not view.marked
            sets: dict[str, Any] = {f"l{g}": _encode(places) for g, places in plan.items()}
            if mark:
                sets[MARK] = len(self.sizes)
            try:
                send(sets, when, remove)
            except ConditionFailed as refused:
                actual = refused.item or {}
                if holds is not None and not holds(actual):
                    return False, 0, True
                view = self._view(actual)
                self._remember(key, view)
                live = self.live(view, cutoff)
                if len(live) + amount > self.limit:
                    return False, self.retry_after(live, now, amount), False
                continue
            known = view if view is not None else _View(groups=[None] * len(self.sizes))
            for g, places in plan.items():
                known.groups[g] = sorted(places, reverse=True)
                known.stored[g] = _encode(places)
                known.last = g
            if remove or view is None or not view.legacy:
                known.legacy, known.marked = {}, True
            self._remember(key, known)
            return True, 0, False
        return False, 1, False  # lost every race for a free place: the client may try again at once


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

        def send(sets: dict[str, Any], when: Cond | None, remove: list[str]) -> dict[str, Any]:
            return self._table.update(
                pk,
                sk,
                set={**sets, "expires_at": int(now) + window + 60},
                remove=remove,
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
