"""Injectable clock: domain code asks the clock for the time so tests can move it."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch."""
        ...


class SystemClock:
    def now(self) -> float:
        return time.time()


class FrozenClock:
    """A clock that only moves when told to (tests)."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds


system_clock = SystemClock()


def iso_utc(ts: float) -> str:
    """A time in seconds since the epoch as ISO 8601 in UTC, ending in Z (as the API answers times)."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")
