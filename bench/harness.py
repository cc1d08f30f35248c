"""What the benchmarks share: the registry the runner reads, results, percentiles and the machine description.

A benchmark is a function in a `bench/bench_*.py` module, registered with `@benchmark`:

    @benchmark("cold-import", "Cold import time of the function modules")
    def cold_import(ctx: Context) -> Result:
        ...
        return Result(columns=[...], rows=[[...], ...], notes=[...])

It returns its figures as a table; the runner writes them, with the command and the machine, into its own
section of bench/RESULTS.md. A benchmark that cannot run yet returns `Result.unavailable(reason)`, or names
what a failed import means with `@benchmark(..., on_import_error=...)`.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import platform
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Context:
    """What the runner hands every benchmark."""

    root: Path
    quick: bool = False  # fewer runs: a smoke test of the benchmark, not a measurement
    options: dict[str, str] = field(default_factory=dict)  # `-o key=value` from the command line

    def option(self, key: str, default: int) -> int:
        return int(self.options.get(key, default))


@dataclass(frozen=True)
class Target:
    """One target of the issue tracker or the spec, beside the value this run measured for it."""

    what: str  # "/mcp tools/list median vs the floor"
    limit: str  # "at most 1.15x"
    measured: str  # "1.08x (3.41 ms vs 3.16 ms)"
    met: bool


@dataclass
class Result:
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    status: str = "ok"  # ok | unavailable | failed
    targets: list[Target] = field(default_factory=list)  # read back into "Where the targets stand"

    @classmethod
    def unavailable(cls, reason: str, notes: Sequence[str] = ()) -> Result:
        return cls(status="unavailable", notes=[f"not measured: {reason}", *notes])

    @classmethod
    def failed(cls, reason: str, notes: Sequence[str] = ()) -> Result:
        return cls(status="failed", notes=[f"failed: {reason}", *notes])


@dataclass(frozen=True)
class Benchmark:
    name: str
    title: str
    run: Callable[[Context], Result]


REGISTRY: dict[str, Benchmark] = {}


def benchmark(
    name: str, title: str, *, on_import_error: str = ""
) -> Callable[[Callable[[Context], Result]], Callable[[Context], Result]]:
    """Register `fn` with the runner under `name` (used on the command line and as the RESULTS.md section).
    `on_import_error` says what is missing when an import of the benchmark fails ("the backoffice is not
    importable"): the result is then unavailable rather than failed."""

    def register(fn: Callable[[Context], Result]) -> Callable[[Context], Result]:
        if name in REGISTRY:
            raise ValueError(f"benchmark {name!r} is registered twice")
        REGISTRY[name] = Benchmark(
            name, title, _unavailable_on_import_error(fn, on_import_error) if on_import_error else fn
        )
        return fn

    return register


def _unavailable_on_import_error(fn: Callable[[Context], Result], reason: str) -> Callable[[Context], Result]:
    def run(ctx: Context) -> Result:
        try:
            return fn(ctx)
        except ImportError as exc:
            return Result.unavailable(f"{reason} ({exc})")

    return run


# ---------------------------------------------------------------- statistics


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile: the smallest sample with at least `pct` percent of the samples at or below."""
    if not values:
        raise ValueError("no samples")
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


# ---------------------------------------------------------------- the machine


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def git_revision(root: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    revision = out.stdout.strip() if out.returncode == 0 else "no commit"
    dirty = subprocess.run(
        # RESULTS.md is what the run itself writes: a change there is not a change of the code measured.
        [
            "git",
            "-C",
            str(root),
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            ".",
            ":!bench/RESULTS.md",
        ],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    return f"{revision} (uncommitted changes)" if dirty.stdout.strip() else revision


def machine() -> dict[str, str]:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "CPU": cpu_model(),
        "cores": f"{os.cpu_count()} ({affinity} usable)",
        "arch": platform.machine(),
        "OS": f"{platform.system()} {platform.release()}",
        "Python": f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "revision": git_revision(ROOT),
    }
