"""What a batch (or a fold of the log) adds to one (project, UTC day), and how it is merged into the day item.

The day item `STATS#<project>` / `D#<day>`: pageviews; page, referrer and country counts (at most MAX_KEYS
distinct keys each per day, further keys count under "(other)"); the visitor sketch (sparse or dense, see
sketch.py); the digests of the last batches written to it directly (a batch delivered again is not counted
twice); `folded`, the log bound it includes (log items of its shop's group below it are in it); and, for a
small shop written directly, `recent`: its session sketches of the last minutes (the trend)."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from svc_shared.domain.analytics.sketch import (
    Registers,
    raise_to,
    sparse_pack,
    sparse_unpack,
    stored_visitors,
    visitor_attributes,
)

MAX_KEYS = 200
OTHER = "(other)"
KEPT_BATCHES = 12  # digests of the last batches written directly to a day item
RECENT_MINUTES = 6  # session sketches kept in a small day item (the trend covers 5 minutes)


def referrer_host(referrer: str) -> str:
    from urllib.parse import urlsplit

    if not referrer:
        return "(direct)"
    host = urlsplit(referrer).hostname or ""
    return host.removeprefix("www.") or "(direct)"


@dataclass
class DayFold:
    """What one batch (or one fold of the log) adds to one (project, day)."""

    pageviews: int = 0
    pages: Counter[str] = field(default_factory=Counter)
    referrers: Counter[str] = field(default_factory=Counter)
    countries: Counter[str] = field(default_factory=Counter)
    registers: Registers = field(default_factory=dict)
    sessions: dict[str, Registers] = field(default_factory=dict)  # minute (YYYYMMDDHHMM) -> session sketch
    ids: list[str] = field(default_factory=list)

    def add(self, path: str, referrer: str, country: str, visitor: tuple[int, int], minute: str,
            session: tuple[int, int], message_id: str) -> None:  # fmt: skip
        self.pageviews += 1
        self.pages[path] += 1
        self.referrers[referrer_host(referrer)] += 1
        self.countries[country] += 1
        raise_to(self.registers, {visitor[0]: visitor[1]})
        raise_to(self.sessions.setdefault(minute, {}), {session[0]: session[1]})
        self.ids.append(message_id)

    def merge(self, other: DayFold) -> None:
        self.pageviews += other.pageviews
        self.pages.update(other.pages)
        self.referrers.update(other.referrers)
        self.countries.update(other.countries)
        raise_to(self.registers, other.registers)
        for minute, sketch in other.sessions.items():
            raise_to(self.sessions.setdefault(minute, {}), sketch)

    def digest(self) -> str:
        return hashlib.sha256("\n".join(sorted(self.ids)).encode()).hexdigest()[:12]

    # -- the log's form: plain JSON values --------------------------------------------------------------
    def entry(self) -> dict[str, Any]:
        return {
            "n": self.pageviews,
            "p": dict(self.pages),
            "r": dict(self.referrers),
            "c": dict(self.countries),
            "h": [(i << 6) | r for i, r in sorted(self.registers.items())],
            "s": {m: [(i << 6) | r for i, r in sorted(s.items())] for m, s in self.sessions.items()},
        }

    @classmethod
    def from_entry(cls, entry: dict[str, Any]) -> DayFold:
        return cls(
            pageviews=int(entry["n"]),
            pages=Counter({str(k): int(v) for k, v in entry["p"].items()}),
            referrers=Counter({str(k): int(v) for k, v in entry["r"].items()}),
            countries=Counter({str(k): int(v) for k, v in entry["c"].items()}),
            registers={int(x) >> 6: int(x) & 63 for x in entry["h"]},
            sessions={str(m): {int(x) >> 6: int(x) & 63 for x in xs} for m, xs in entry["s"].items()},
        )


def merge_counts(stored: dict[str, Any], added: Counter[str]) -> dict[str, int]:
    """Add counts to a day's map, admitting new keys while the map has fewer than MAX_KEYS (then "(other)")."""
    merged = {k: int(v) for k, v in stored.items()}
    distinct = sum(1 for k in merged if k != OTHER)
    for key, count in added.most_common():
        if key in merged or (key != OTHER and distinct < MAX_KEYS):
            if key not in merged and key != OTHER:
                distinct += 1
            merged[key] = merged.get(key, 0) + count
        else:
            merged[OTHER] = merged.get(OTHER, 0) + count
    return merged


def merged_day(item: dict[str, Any], fold: DayFold) -> dict[str, Any]:
    """The day item's attributes with `fold` added (everything but the version, the batches and the marker)."""
    registers = stored_visitors(item)
    raise_to(registers, fold.registers)
    kept: dict[str, Any] = {k: item[k] for k in ("batches", "folded", "recent") if k in item}
    return {
        **kept,
        "pageviews": int(item.get("pageviews", 0)) + fold.pageviews,
        "pages": merge_counts(item.get("pages", {}), fold.pages),
        "referrers": merge_counts(item.get("referrers", {}), fold.referrers),
        "countries": merge_counts(item.get("countries", {}), fold.countries),
        **visitor_attributes(registers),
    }


def merged_recent(stored: dict[str, Any], added: dict[str, Registers]) -> dict[str, bytes]:
    """A small day item's session sketches of its last RECENT_MINUTES minutes, with `added` raised in."""
    recent = {m: sparse_unpack(v) for m, v in stored.items()}
    for minute, sketch in added.items():
        raise_to(recent.setdefault(minute, {}), sketch)
    return {m: sparse_pack(recent[m]) for m in sorted(recent)[-RECENT_MINUTES:]}


def item_size(item: dict[str, Any]) -> int:
    """An item's size as DynamoDB bills it: attribute names plus values (numbers about 1 byte per 2 digits)."""

    def value(v: Any) -> int:
        if isinstance(v, bool) or v is None:
            return 1
        if isinstance(v, int | float):
            return 1 + (len(str(abs(v)).replace(".", "").lstrip("0") or "0") + 1) // 2
        if isinstance(v, str):
            return len(v.encode())
        if isinstance(v, bytes | bytearray):
            return len(v)
        if isinstance(getattr(v, "value", None), bytes):  # boto3's Binary, as a read returns it
            return len(v.value)
        if isinstance(v, dict):
            return 3 + sum(len(k.encode()) + value(x) + 1 for k, x in v.items())
        if isinstance(v, list | set | tuple):
            return 3 + sum(value(x) + 1 for x in v)
        return len(str(v))

    return sum(len(k.encode()) + value(v) for k, v in item.items())
