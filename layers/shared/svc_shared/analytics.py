"""Site analytics kept as aggregates: live sites send a beacon per pageview; each event updates one daily
item and one session marker, so a 90-day report reads at most 90 items and never raw events.

Per project and UTC day (`STATS#<project>` / `D#<day>`): pageviews, page, referrer and country counts
(at most MAX_KEYS distinct keys each per day; further keys count under "(other)"), and a HyperLogLog sketch
of visitors (2^12 registers stored as a map, each register raised with a conditional update), so unique
visitors over any range are the merged sketches (standard error about 1.6%). Sessions of the last minutes
are marker items (`LIVE#<project>` / `<minute>#<session>`) that expire after an hour.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from svc_shared import keys
from svc_shared.clock import Clock
from svc_shared.dal import ConditionFailed, Table
from svc_shared.errors import InvalidInput

HLL_BITS = 12
HLL_REGISTERS = 1 << HLL_BITS
MAX_KEYS = 200
MAX_RANGE_DAYS = 90
TREND_MINUTES = 5
OTHER = "(other)"


@dataclass(frozen=True)
class Beacon:
    project_id: str
    path: str
    referrer: str
    visitor: str
    session: str
    country: str


def _register(visitor_key: str) -> tuple[int, int]:
    """HyperLogLog register index and rank (position of the first 1 bit) of a visitor."""
    digest = int.from_bytes(hashlib.sha256(visitor_key.encode()).digest()[:8], "big")
    index = digest >> (64 - HLL_BITS)
    rest = (digest << HLL_BITS) & ((1 << 64) - 1)
    rank = 1
    while rank <= 64 - HLL_BITS and not rest & (1 << 63):
        rank += 1
        rest <<= 1
    return index, rank


def estimate(registers: dict[int, int]) -> int:
    """HyperLogLog cardinality estimate with the small-range correction."""
    import math

    m = HLL_REGISTERS
    alpha = 0.7213 / (1 + 1.079 / m)
    total = sum(2.0 ** -registers.get(i, 0) for i in range(m))
    raw = alpha * m * m / total
    zeros = m - len(registers)
    if raw <= 2.5 * m and zeros:
        return round(m * math.log(m / zeros))
    return round(raw)


def referrer_host(referrer: str) -> str:
    if not referrer:
        return "(direct)"
    host = urlsplit(referrer).hostname or ""
    return host.removeprefix("www.") or "(direct)"


class Analytics:
    def __init__(self, table: Table, clock: Clock) -> None:
        self._table = table
        self._clock = clock
        self._known_days: set[tuple[str, str]] = set()

    def _day(self, project_id: str, day: str) -> None:
        if (project_id, day) in self._known_days:
            return
        with contextlib.suppress(ConditionFailed):  # created by an earlier event
            self._table.put(
                {
                    "pk": keys.stats(project_id),
                    "sk": keys.day(day),
                    "pageviews": 0,
                    "pages": {},
                    "referrers": {},
                    "countries": {},
                    "hll": {},
                    "keys": {"pages": 0, "referrers": 0, "countries": 0},
                },
                condition="attribute_not_exists(pk)",
            )
        self._known_days.add((project_id, day))

    def record(self, beacon: Beacon) -> None:
        now = self._clock.now()
        moment = datetime.fromtimestamp(now, UTC)
        day = moment.strftime("%Y-%m-%d")
        pk = keys.stats(beacon.project_id)
        self._day(beacon.project_id, day)
        # The pageview is counted by the same write that counts its page.
        self._count(pk, keys.day(day), "pages", beacon.path, also=" ADD pageviews :one")
        self._count(pk, keys.day(day), "referrers", referrer_host(beacon.referrer))
        self._count(pk, keys.day(day), "countries", beacon.country)
        index, rank = _register(f"{beacon.project_id}:{beacon.visitor}")
        with contextlib.suppress(ConditionFailed):  # the register already holds this rank or more
            self._table.update(
                pk,
                keys.day(day),
                "SET hll.#r = :rank",
                condition="attribute_not_exists(hll.#r) OR hll.#r < :rank",
                names={"#r": str(index)},
                values={":rank": rank},
            )
        minute = moment.strftime("%Y%m%d%H%M")
        session = hashlib.sha256(f"{beacon.project_id}:{beacon.session}".encode()).hexdigest()[:24]
        self._table.put(
            {
                "pk": keys.live(beacon.project_id),
                "sk": keys.live_visit(minute, session),
                "expires_at": int(now) + 3600,
            }
        )

    def _count(self, pk: str, sk: str, group: str, key: str, also: str = "") -> None:
        """Count `key` in a map of the day; a new key is admitted while the map has fewer than MAX_KEYS.
        `also` is an update clause applied exactly once, by whichever write succeeds."""
        try:
            self._table.update(
                pk,
                sk,
                "SET #g.#k = if_not_exists(#g.#k, :zero) + :one" + also,
                condition="attribute_exists(#g.#k)",
                names={"#g": group, "#k": key},
                values={":zero": 0, ":one": 1},
            )
            return
        except ConditionFailed:
            pass
        try:
            self._table.update(
                pk,
                sk,
                "SET #g.#k = if_not_exists(#g.#k, :zero) + :one, #keys.#g = #keys.#g + :one" + also,
                condition="#keys.#g < :max",
                names={"#g": group, "#k": key, "#keys": "keys"},
                values={":zero": 0, ":one": 1, ":max": MAX_KEYS},
            )
        except ConditionFailed:
            self._table.update(
                pk,
                sk,
                "SET #g.#k = if_not_exists(#g.#k, :zero) + :one" + also,
                names={"#g": group, "#k": OTHER},
                values={":zero": 0, ":one": 1},
            )

    def report(self, project_id: str, start: date, end: date) -> dict[str, Any]:
        if end < start:
            raise InvalidInput("end_date must not be before start_date")
        if (end - start).days + 1 > MAX_RANGE_DAYS:
            raise InvalidInput(f"the date range is at most {MAX_RANGE_DAYS} days")
        days = list(
            self._table.query(
                keys.stats(project_id), sk_between=(keys.day(start.isoformat()), keys.day(end.isoformat()))
            )
        )
        pages: Counter[str] = Counter()
        referrers: Counter[str] = Counter()
        countries: Counter[str] = Counter()
        registers: dict[int, int] = {}
        views = 0
        for item in days:
            views += int(item.get("pageviews", 0))
            pages.update(item.get("pages", {}))
            referrers.update(item.get("referrers", {}))
            countries.update(item.get("countries", {}))
            for key, rank in item.get("hll", {}).items():
                registers[int(key)] = max(registers.get(int(key), 0), int(rank))
        return {
            "project_id": project_id,
            "start_date": start.isoformat(),
            "end_date": end.isoformat(),
            "unique_visitors": estimate(registers) if registers else 0,
            "pageviews": views,
            "top_pages": [{"path": p, "pageviews": n} for p, n in pages.most_common(5)],
            "referrers": [{"source": r, "visits": n} for r, n in referrers.most_common(10)],
            "countries": [{"country": c, "visits": n} for c, n in countries.most_common(10)],
        }

    def trend(self, project_id: str) -> dict[str, Any]:
        now = datetime.fromtimestamp(self._clock.now(), UTC).replace(second=0, microsecond=0)
        minutes = [now - timedelta(minutes=i) for i in range(TREND_MINUTES - 1, -1, -1)]
        first, last = minutes[0].strftime("%Y%m%d%H%M"), minutes[-1].strftime("%Y%m%d%H%M")
        per_minute: dict[str, set[str]] = {m.strftime("%Y%m%d%H%M"): set() for m in minutes}
        for item in self._table.query(keys.live(project_id), sk_between=keys.live_minutes(first, last)):
            minute, session = keys.live_minute(item["sk"])
            if minute in per_minute:
                per_minute[minute].add(session)
        return {
            "project_id": project_id,
            "unique_sessions": len(set().union(*per_minute.values())),
            "per_minute": [
                {
                    "minute": datetime.strptime(m, "%Y%m%d%H%M")
                    .replace(tzinfo=UTC)
                    .isoformat()
                    .replace("+00:00", "Z"),
                    "sessions": len(s),
                }
                for m, s in per_minute.items()
            ],
        }
