"""Site analytics kept as aggregates, written in batches.

Live sites send a beacon per pageview to the collect route, which validates it and puts it on a queue (SQS);
nothing is written per pageview. The aggregator consumes the queue in batches (the event source mapping's
batch size and window) and folds each batch in memory, per (project, UTC day). What it writes depends on the
shop's traffic in the batch, so that a write carries many pageviews (docs/decisions.md, "Analytics on a
shared queue"):

- a busy shop (at least BUSY_PAGEVIEWS in the batch): one read-modify-write of its day item (day.py) with a
  version condition, and one session sketch per (project, minute) (`LIVE#<project>` / `M#<minute>`, 768
  bytes, expiring after an hour);
- a shop alone in its log group in the batch (a quiet shop): its day item directly, when it stays within
  1 KB (sparse visitor sketch, its last minutes' sessions in the same item): one write unit per batch;
- every other shop: the log item of its group for this batch (log.py), many shops in one item, folded into
  the day items about once an hour.

Reports and the trend read the day items plus the group's log entries not folded yet, so a beacon counts in
the next report once its batch is written, whichever way it went.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.errors import InvalidInput, RateLimited
from svc_shared.core.logs import get_logger
from svc_shared.domain.analytics.beacon import (
    _COUNTRY,
    _HOST,
    INVALID,
    Beacon,
    _valid,
    clean_path,
    clean_referrer,
)
from svc_shared.domain.analytics.day import (
    KEPT_BATCHES,
    MAX_KEYS,
    OTHER,
    DayFold,
    item_size,
    merged_day,
    merged_recent,
    referrer_host,
)
from svc_shared.domain.analytics.log import LOG_GROUPS, Entries, Log, group_of, merge_write
from svc_shared.domain.analytics.sketch import (
    HLL_REGISTERS,
    SESSION_BITS,
    SESSION_REGISTERS,
    Registers,
    _register,
    dense,
    estimate,
    pack,
    raise_to,
    sparse_unpack,
    stored_visitors,
    union,
    unpack,
)
from svc_shared.storage import keys
from svc_shared.storage.dal import Table
from svc_shared.storage.ratelimit import WindowCounters

__all__ = [
    "HLL_REGISTERS",
    "LOG_GROUPS",
    "MAX_KEYS",
    "OTHER",
    "Analytics",
    "BatchResult",
    "Beacon",
    "DayFold",
    "_register",
    "clean_path",
    "clean_referrer",
    "estimate",
    "pack",
    "referrer_host",
    "unpack",
]

logger = get_logger()

MAX_RANGE_DAYS = 90
TREND_MINUTES = 5
LIVE_SECONDS = 3600
BUSY_PAGEVIEWS = 250  # in one batch: its day item costs less than its share of the log (and its fold)
SMALL_ITEM = 1000  # bytes: a quiet shop's day item written directly stays within one write unit
# How many beacons a client and a site may send (docs/decisions.md, Analytics).
BEACONS_PER_ADDRESS, BEACONS_PER_SITE, BEACON_WINDOW = 600, 120_000, 60


def _shown(counts: Counter[str], valid: Callable[[str], bool]) -> Counter[str]:
    shown: Counter[str] = Counter()
    for key, n in counts.items():
        shown[key if key == OTHER or valid(key) else INVALID] += n
    return shown


def _minute(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y%m%d%H%M")


@dataclass
class BatchResult:
    failed_message_ids: list[str]
    writes: int


class Analytics:
    def __init__(self, table: Table, clock: Clock) -> None:
        self._table = table
        self._clock = clock
        self._counters = WindowCounters(table, clock)
        self._log = Log(table)

    # -- the collect route's gate ---------------------------------------------------------------------------
    def admit(self, address: str, site: str) -> None:
        """Count a beacon against its client address's and its site's limits, or RateLimited. The site is
        counted whether it exists or not, so the answer says nothing about which sites exist."""
        for scope, key, limit in (
            ("beacon-address", address, BEACONS_PER_ADDRESS),
            ("beacon-site", site, BEACONS_PER_SITE),
        ):
            allowed, wait = self._counters.admit(scope, key, limit, BEACON_WINDOW)
            if not allowed:
                raise RateLimited(
                    say("analytics.too_many_pageviews"),
                    retry_after=wait,
                    code="rate_limited",
                )

    # -- writing (the aggregator) ---------------------------------------------------------------------------
    def fold(self, messages: list[tuple[str, Beacon]]) -> dict[tuple[str, str], DayFold]:
        folds: dict[tuple[str, str], DayFold] = {}
        for message_id, beacon in messages:
            day = datetime.fromtimestamp(beacon.at, UTC).strftime("%Y-%m-%d")
            folds.setdefault((beacon.project_id, day), DayFold()).add(
                beacon.path,
                beacon.referrer,
                beacon.country,
                _register(beacon.visitor),  # the sketch is the project's own: the visitor id suffices
                _minute(beacon.at),
                _register(beacon.session, SESSION_BITS),
                message_id,
            )
        return folds

    def apply(self, messages: list[tuple[str, Beacon]]) -> BatchResult:
        """Write a batch (busy shops' day items, quiet shops' small day items, everyone else's log entries),
        then fold the log of a group it wrote to when that is due. Returns the ids of the messages whose
        writes failed (to be delivered again); the others are done."""
        now = self._clock.now()
        folds = self.fold(messages)
        views: Counter[str] = Counter()
        members: dict[int, set[str]] = {}
        for (project_id, _), fold in folds.items():
            views[project_id] += fold.pageviews
            members.setdefault(group_of(project_id), set()).add(project_id)
        failed: list[str] = []
        writes = 0
        logged: dict[int, list[tuple[str, str, DayFold]]] = {}
        for (project_id, day), fold in folds.items():
            group = group_of(project_id)
            try:
                if views[project_id] >= BUSY_PAGEVIEWS:
                    writes += self._write_day(project_id, day, fold) + self._write_minutes(project_id, fold)
                    continue
                if len(members[group]) == 1:
                    written = self._write_small_day(project_id, day, fold)
                    if written is not None:
                        writes += written
                        continue
            except Exception as exc:  # noqa: BLE001 - this shop is retried; the rest of the batch stands
                logger.warning(
                    "analytics day write failed",
                    extra={"project_id": project_id, "reason": type(exc).__name__},
                )
                failed.extend(fold.ids)
                continue
            logged.setdefault(group, []).append((project_id, day, fold))
        latest = max((beacon.at for _, beacon in messages), default=now)
        # One more group in turn (a group a minute) is checked too, so a group whose shops went quiet is still
        # folded while anything at all arrives on the queue.
        for group in {*logged, int(now // 60) % LOG_GROUPS} - set(logged):
            writes += self._fold_if_due(group, now)
        for group, found in logged.items():
            entries: Entries = {}
            ids: list[str] = []
            for project_id, day, fold in found:
                entries.setdefault(project_id, {})[day] = fold.entry()
                ids.extend(fold.ids)
            try:
                writes += self._log.write(group, latest, now, DayFold(ids=ids).digest(), entries)
            except Exception as exc:  # noqa: BLE001 - as above
                logger.warning(
                    "analytics log write failed", extra={"group": group, "reason": type(exc).__name__}
                )
                failed.extend(ids)
                continue
            writes += self._fold_if_due(group, now)
        return BatchResult(failed_message_ids=failed, writes=writes)

    def _fold_if_due(self, group: int, now: float) -> int:
        try:
            return self._log.fold_if_due(group, now, self._merge_write)
        except Exception as exc:  # noqa: BLE001 - the log keeps the entries: a later fold takes them
            logger.warning("analytics fold failed", extra={"group": group, "reason": type(exc).__name__})
            return 0

    def compact_all(self) -> int:
        """Fold every group's settled log now (whether due or not); returns the writes made."""
        now = self._clock.now()
        return sum(self._log.fold(group, now, self._merge_write) for group in range(LOG_GROUPS))

    def _merge_write(self, pk: str, sk: str, merge: Callable[[dict[str, Any]], dict[str, Any] | None]) -> int:
        return merge_write(self._table, pk, sk, merge)

    def _write_day(self, project_id: str, day: str, fold: DayFold) -> int:
        """Merge the fold into the day item; a batch already applied (same messages) is skipped."""
        digest = fold.digest()

        def merge(item: dict[str, Any]) -> dict[str, Any] | None:
            applied = list(item.get("batches", []))
            if digest in applied:
                return None
            return {**merged_day(item, fold), "batches": [*applied, digest][-KEPT_BATCHES:]}

        return self._merge_write(keys.stats(project_id), keys.day(day), merge)

    def _write_small_day(self, project_id: str, day: str, fold: DayFold) -> int | None:
        """The day item with the fold and its sessions in it, when it stays within SMALL_ITEM bytes (one write
        unit); None when it would not (the fold then goes to the log)."""
        digest = fold.digest()
        too_big = False

        def merge(item: dict[str, Any]) -> dict[str, Any] | None:
            nonlocal too_big
            applied = list(item.get("batches", []))
            if digest in applied:
                return None
            changed = {
                **merged_day(item, fold),
                "batches": [*applied, digest][-KEPT_BATCHES:],
                "recent": merged_recent(item.get("recent", {}), fold.sessions),
            }
            too_big = (
                item_size({"pk": keys.stats(project_id), "sk": keys.day(day), "version": 1, **changed})
                > SMALL_ITEM
            )
            return None if too_big else changed

        written = self._merge_write(keys.stats(project_id), keys.day(day), merge)
        return None if too_big else written

    def _write_minutes(self, project_id: str, fold: DayFold) -> int:
        """Merge a batch's session sketches into the minute items (a maximum per register: a batch applied
        twice changes nothing)."""
        writes = 0
        for minute, added in fold.sessions.items():
            at = datetime.strptime(minute, "%Y%m%d%H%M").replace(tzinfo=UTC).timestamp()

            def merge(
                item: dict[str, Any], added: Registers = added, at: float = at
            ) -> dict[str, Any] | None:
                registers = dict(enumerate(unpack(item.get("hll"), SESSION_REGISTERS)))
                if not raise_to(registers, added):
                    return None
                return {
                    "hll": pack(dense(registers, SESSION_REGISTERS)),
                    "expires_at": int(at) + LIVE_SECONDS,
                }

            writes += self._merge_write(keys.live(project_id), keys.live_minute(minute), merge)
        return writes

    # -- reading --------------------------------------------------------------------------------------------
    def _unfolded(self, project_id: str, since: float, days: dict[str, str]) -> list[tuple[str, DayFold]]:
        """The project's log entries not in its day items yet, from `since` on: (day, what it adds). `days`:
        each stored day item's bound (entries below it are in it). Read after the day items, so a fold that
        ends in between is counted once."""
        group = group_of(project_id)
        folded_to = str(self._log.state(group).get("folded_to", keys.log_bound(0)))
        low = max(folded_to, keys.log_bound(int(since * 1000)))
        out = []
        for sk, entries in self._log.read(group, low):
            for day, entry in entries.get(project_id, {}).items():
                if sk >= days.get(day, ""):
                    out.append((day, DayFold.from_entry(entry)))
        return out

    def _days(self, project_id: str, start: date, end: date) -> dict[str, DayFold]:
        """What each day of the range holds: its stored day item and the log entries not folded into it."""
        if end < start:
            raise InvalidInput(say("analytics.range_reversed"))
        if (end - start).days + 1 > MAX_RANGE_DAYS:
            raise InvalidInput(say("analytics.range_too_long", days=MAX_RANGE_DAYS))
        first, last = start.isoformat(), end.isoformat()
        items = list(self._table.query(keys.stats(project_id), sk_between=(keys.day(first), keys.day(last))))
        per_day: dict[str, DayFold] = {}
        for item in items:
            per_day[keys.day_of(item["sk"])] = DayFold(
                pageviews=int(item.get("pageviews", 0)),
                pages=Counter({k: int(v) for k, v in item.get("pages", {}).items()}),
                referrers=Counter({k: int(v) for k, v in item.get("referrers", {}).items()}),
                countries=Counter({k: int(v) for k, v in item.get("countries", {}).items()}),
                registers=stored_visitors(item),
            )
        bounds = {keys.day_of(item["sk"]): str(item.get("folded", "")) for item in items}
        since = datetime.combine(start, datetime.min.time(), UTC).timestamp()
        for day, added in self._unfolded(project_id, since, bounds):
            if first <= day <= last:
                per_day.setdefault(day, DayFold()).merge(added)
        return per_day

    def report(self, project_id: str, start: date, end: date) -> dict[str, Any]:
        first, last = start.isoformat(), end.isoformat()
        total = DayFold()
        for fold in self._days(project_id, start, end).values():
            total.merge(fold)
        # Kept before these checks existed, or changed in the table: a key that is not what a beacon may
        # carry is reported as "(invalid)", never as its text.
        pages = _shown(total.pages, lambda p: _valid(clean_path, p))
        referrers = _shown(total.referrers, lambda r: r == "(direct)" or bool(_HOST.fullmatch(r)))
        countries = _shown(total.countries, lambda c: c == "unknown" or bool(_COUNTRY.fullmatch(c)))
        views = total.pageviews
        return {
            "project_id": project_id,
            "start_date": first,
            "end_date": last,
            "unique_visitors": estimate(dense(total.registers)) if views else 0,
            "pageviews": views,
            "top_pages": [{"path": p, "pageviews": n} for p, n in pages.most_common(5)],
            "referrers": [{"source": r, "visits": n} for r, n in referrers.most_common(5)],
            "countries": [{"country": c, "visits": n} for c, n in countries.most_common(5)],
        }

    def daily(self, project_id: str, start: date, end: date) -> dict[str, Any]:
        """Pageviews and unique visitors of each day of the range (a day with no beacon counts zero)."""
        per_day = self._days(project_id, start, end)
        days = []
        for offset in range((end - start).days + 1):
            day = (start + timedelta(days=offset)).isoformat()
            fold = per_day.get(day) or DayFold()
            views = fold.pageviews
            visitors = estimate(dense(fold.registers)) if views else 0
            days.append({"date": day, "pageviews": views, "unique_visitors": visitors})
        return {
            "project_id": project_id,
            "start_date": start.isoformat(),
            "end_date": end.isoformat(),
            "days": days,
        }

    def trend(self, project_id: str) -> dict[str, Any]:
        now = datetime.fromtimestamp(self._clock.now(), UTC).replace(second=0, microsecond=0)
        minutes = [now - timedelta(minutes=i) for i in range(TREND_MINUTES - 1, -1, -1)]
        first, last = minutes[0].strftime("%Y%m%d%H%M"), minutes[-1].strftime("%Y%m%d%H%M")
        per_minute: dict[str, Registers] = {m.strftime("%Y%m%d%H%M"): {} for m in minutes}

        def add(minute: str, sketch: Registers) -> None:
            if minute in per_minute:
                raise_to(per_minute[minute], sketch)

        # Busy shops' minute items; small shops' day items (their last minutes) and log entries.
        for item in self._table.query(keys.live(project_id), sk_between=keys.live_minutes(first, last)):
            add(
                keys.minute_of(item["sk"]),
                {i: r for i, r in enumerate(unpack(item.get("hll"), SESSION_REGISTERS)) if r},
            )
        span = (keys.day(minutes[0].date().isoformat()), keys.day(minutes[-1].date().isoformat()))
        for item in self._table.query(keys.stats(project_id), sk_between=span):
            for minute, sketch in item.get("recent", {}).items():
                add(minute, sparse_unpack(sketch))
        for _, fold in self._unfolded(project_id, minutes[0].timestamp(), {}):
            for minute, sketch in fold.sessions.items():
                add(minute, sketch)
        return {
            "project_id": project_id,
            "unique_sessions": estimate(dense(union(per_minute.values()), SESSION_REGISTERS)),
            "per_minute": [
                {
                    "minute": datetime.strptime(m, "%Y%m%d%H%M")
                    .replace(tzinfo=UTC)
                    .isoformat()
                    .replace("+00:00", "Z"),
                    "sessions": estimate(dense(r, SESSION_REGISTERS)),
                }
                for m, r in per_minute.items()
            ],
        }
