"""The sandbox's fault injection: a status, a delay or a dropped connection for the requests a fault matches,
set and cleared by tests through the admin routes."""

from __future__ import annotations

import fnmatch
import threading
from dataclasses import dataclass
from typing import Any


@dataclass
class Fault:
    method: str  # "*" matches any method
    path: str  # exact path or a glob (fnmatch), e.g. /repos/*
    status: int | None = None
    delay_ms: int = 0
    drop: bool = False
    times: int | None = None  # None: until cleared
    retry_after: int | None = None  # a Retry-After header on the status answer (a 429's, a 503's)

    def matches(self, method: str, path: str) -> bool:
        return self.method in ("*", method.upper()) and (
            self.path == path or fnmatch.fnmatchcase(path, self.path)
        )


def parse_fault(data: Any) -> Fault:
    """Validate an admin request body into a Fault; raises ValueError with a readable message."""
    if not isinstance(data, dict):
        raise ValueError("body must be a JSON object")
    unknown = set(data) - {"method", "path", "status", "delay_ms", "drop", "times", "retry_after"}
    if unknown:
        raise ValueError(f"unknown field(s): {', '.join(sorted(unknown))}")
    method, path = data.get("method"), data.get("path")
    if not isinstance(method, str) or not method or not isinstance(path, str) or not path.startswith("/"):
        raise ValueError("method and path (starting with /) are required")
    status, delay, drop, times = (
        data.get("status"),
        data.get("delay_ms", 0),
        data.get("drop", False),
        data.get("times"),
    )
    if status is not None and (
        isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599
    ):
        raise ValueError("status must be an HTTP status code")
    if isinstance(delay, bool) or not isinstance(delay, int) or not 0 <= delay <= 600_000:
        raise ValueError("delay_ms must be an integer between 0 and 600000")
    if not isinstance(drop, bool):
        raise ValueError("drop must be a boolean")
    if times is not None and (isinstance(times, bool) or not isinstance(times, int) or times < 1):
        raise ValueError("times must be a positive integer")
    if status is None and not delay and not drop:
        raise ValueError("a fault needs status, delay_ms or drop")
    retry_after = data.get("retry_after")
    if retry_after is not None and (
        isinstance(retry_after, bool) or not isinstance(retry_after, int) or retry_after < 0
    ):
        raise ValueError("retry_after must be a non-negative integer (seconds)")
    return Fault(method.upper(), path, status, delay, drop, times, retry_after)


class FaultInjector:
    """Active faults; the first matching one applies and uses up one of its `times`."""

    def __init__(self) -> None:
        self._faults: list[Fault] = []
        self._lock = threading.Lock()

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def list(self) -> list[Fault]:
        with self._lock:
            return list(self._faults)

    def take(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.matches(method, path):
                    if fault.times is not None:
                        fault.times -= 1
                        if fault.times <= 0:
                            self._faults.remove(fault)
                    return fault
        return None
