"""The analytics log: small shops' increments, many shops per item, folded into their day items about hourly.

Shops are spread over LOG_GROUPS groups (a hash of the project id). A batch writes, per group it touches, one
item `ALOG#<group>` / `L#<time>#<digest>` holding what the batch adds to every small shop of the group
(pageviews, counts, the visitor registers it raised and its session sketches per minute), compressed, billed
by its own size rather than by the shops' day items. `<time>` is the newest beacon of the batch (or the time
it is applied, for a batch that waited longer than LATE_SECONDS), and the put is create-only: the same batch
delivered again writes the same key and changes nothing.

Folding: `ALOG#<group>` / `FOLD` says up to which bound (`folded_to`) the group's log is in the day items. A
consumer that writes to a group whose oldest unfolded entry is older than FOLD_SECONDS (plus SETTLE_SECONDS)
claims the fold (a lease on that item, a conditional write), adds the entries older than SETTLE_SECONDS to
the day items and then moves `folded_to`. Each day item records the bound it includes (`folded`) and takes
only entries at or above its own bound, so a fold repeated (after a crash) or raced counts every entry once.
Reports read the day items, then the group's entries from `folded_to` on that a day item does not include yet:
freshness stays the batch's. Log items expire after LOG_KEEP_SECONDS (time to live)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from svc_shared.domain.analytics.day import DayFold, merged_day
from svc_shared.storage import keys
from svc_shared.storage.dal import ConditionFailed, Table, attr, item_absent

LOG_GROUPS = 16
FOLD_SECONDS = 3600  # a group's log is folded into its shops' day items at most about once an hour
SETTLE_SECONDS = 900  # entries younger than this are left for the next fold (a batch writes within its time)
LATE_SECONDS = 600  # a batch whose newest beacon is older than this logs at the time it is applied
LEASE_SECONDS = 300  # a fold claimed and not finished in this time may be taken over
LOG_KEEP_SECONDS = 8 * 86400
WRITE_ATTEMPTS = 8

Entries = dict[str, dict[str, dict[str, Any]]]  # project -> day -> DayFold.entry()
MergeWrite = Callable[[str, str, Callable[[dict[str, Any]], dict[str, Any] | None]], int]


def group_of(project_id: str) -> int:
    return int.from_bytes(hashlib.sha256(project_id.encode()).digest()[:4], "big") % LOG_GROUPS


def encode(entries: Entries) -> bytes:
    return zlib.compress(json.dumps(entries, separators=(",", ":"), sort_keys=True).encode(), 6)


def decode(data: Any) -> Entries:
    return json.loads(zlib.decompress(bytes(data.value if hasattr(data, "value") else data)))


def merge_write(
    table: Table, pk: str, sk: str, merge: Callable[[dict[str, Any]], dict[str, Any] | None]
) -> int:
    """Read-modify-write with optimistic concurrency: `merge` turns the stored item ({} when there is none)
    into the attributes to store, or None when there is nothing to change; the put is conditional on the
    version read, and a lost race merges again on what the winner left. Returns the writes made."""
    for _ in range(WRITE_ATTEMPTS):
        item = table.get(pk, sk, consistent=True) or {}
        changes = merge(item)
        if changes is None:
            return 0
        version = int(item.get("version", 0))
        try:
            table.put(
                {"pk": pk, "sk": sk, "version": version + 1, **changes},
                when=item_absent() if not item else attr("version").eq(version),
            )
            return 1
        except ConditionFailed:
            continue
    raise ConditionFailed(f"{pk}/{sk} kept changing")


class Log:
    def __init__(self, table: Table) -> None:
        self._table = table
        self._not_due: dict[
            int, float
        ] = {}  # group -> time before which its fold is not due (this container)

    def write(self, group: int, at: float, now: float, digest: str, entries: Entries) -> int:
        """One create-only log item; 0 when this batch's item is already there (delivered again)."""
        if at < now - LATE_SECONDS:
            at = now
        try:
            self._table.put(
                {
                    "pk": keys.analytics_log(group),
                    "sk": keys.log_entry(int(at * 1000), digest),
                    "data": encode(entries),
                    "expires_at": int(at) + LOG_KEEP_SECONDS,
                },
                when=item_absent(),
            )
        except ConditionFailed:
            return 0
        return 1

    def state(self, group: int) -> dict[str, Any]:
        return self._table.get(keys.analytics_log(group), keys.FOLD, consistent=True) or {}

    def read(self, group: int, low: str, high: str = keys.LOG_END) -> Iterator[tuple[str, Entries]]:
        for item in self._table.query(keys.analytics_log(group), sk_between=(low, high)):
            yield item["sk"], decode(item["data"])

    def fold_if_due(self, group: int, now: float, write: MergeWrite) -> int:
        """Fold the group when its oldest unfolded entry is old enough (checked at most hourly per container)."""
        if now < self._not_due.get(group, 0.0):
            return 0
        state = self.state(group)
        folded_to = str(state.get("folded_to", keys.log_bound(0)))
        oldest = next(
            iter(self._table.query(keys.analytics_log(group), sk_between=(folded_to, keys.LOG_END), limit=1)),
            None,
        )
        due = (keys.log_time(oldest["sk"]) / 1000 if oldest else now) + FOLD_SECONDS + SETTLE_SECONDS
        if now < due:
            self._not_due[group] = due
            return 0
        self._not_due[group] = now + FOLD_SECONDS
        return self.fold(group, now, write, state)

    def fold(self, group: int, now: float, write: MergeWrite, state: dict[str, Any] | None = None) -> int:
        """Add the group's entries older than SETTLE_SECONDS to the day items; returns the writes made."""
        state = self.state(group) if state is None else state
        pk = keys.analytics_log(group)
        folded_to = str(state.get("folded_to", keys.log_bound(0)))
        cutoff = keys.log_bound(int((now - SETTLE_SECONDS) * 1000))
        if cutoff <= folded_to or float(state.get("lease_until", 0)) > now:
            return 0  # nothing settled to fold, or another instance is folding
        if next(iter(self._table.query(pk, sk_between=(folded_to, cutoff), limit=1)), None) is None:
            return 0  # no entry to fold: the state stays as it is
        version = int(state.get("version", 0))
        claim = {"pk": pk, "sk": keys.FOLD, "folded_to": folded_to, "lease_until": int(now) + LEASE_SECONDS}
        try:
            self._put_state({**claim, "version": version + 1}, version if state else None)
        except ConditionFailed:
            return 1  # another instance claimed it first
        writes = 1
        days: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = {}
        for sk, entries in self.read(group, folded_to, cutoff):
            for project_id, per_day in entries.items():
                for day, entry in per_day.items():
                    days.setdefault((project_id, day), []).append((sk, entry))
        for (project_id, day), found in days.items():
            writes += write(keys.stats(project_id), keys.day(day), _fold_merge(found, cutoff))
        # A failed condition: taken over after the lease ran out; the day items' bounds keep the counts right.
        with contextlib.suppress(ConditionFailed):
            self._put_state(
                {**claim, "folded_to": cutoff, "lease_until": 0, "version": version + 2}, version + 1
            )
        return writes + 1

    def _put_state(self, item: dict[str, Any], version: int | None) -> None:
        self._table.put(
            item,
            when=item_absent() if version is None else attr("version").eq(version),
        )


def _fold_merge(
    found: list[tuple[str, dict[str, Any]]], cutoff: str
) -> Callable[[dict[str, Any]], dict[str, Any] | None]:
    def merge(item: dict[str, Any]) -> dict[str, Any] | None:
        bound = str(item.get("folded", ""))
        added = DayFold()
        for sk, entry in found:
            if sk >= bound:  # below its bound: already in this day item (a fold repeated or raced)
                added.merge(DayFold.from_entry(entry))
        if not added.pageviews:
            return None
        return {**merged_day(item, added), "folded": max(bound, cutoff)}

    return merge
