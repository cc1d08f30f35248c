"""Start-to-ready time of the local stack (`python -m svc_local`, as `make dev` runs it, embedded PostgreSQL):
a first start on an empty state directory, then restarts on the same state. Target: under 5 s after the first
install (recorded, not asserted)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from bench.harness import Context, Result, Target, benchmark, median

TARGET_S = 5.0


def _start(root: Path, state: Path) -> float:
    """Seconds from process start to `ready` (embedded PostgreSQL), then Ctrl-C."""
    helpers = str(root / "tests" / "e2e")
    if helpers not in sys.path:
        sys.path.insert(0, helpers)
    from stackproc import start_stack

    stack = start_stack(state, database_url=None)
    stack.interrupt()
    return stack.seconds_to_ready


@benchmark("stack-start", "Local stack: start to `ready` (make dev)")
def stack_start(ctx: Context) -> Result:
    restarts = 2 if ctx.quick else ctx.option("restarts", 5)
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        first = _start(ctx.root, state)
        again = [_start(ctx.root, state) for _ in range(restarts)]
    return Result(
        targets=[
            Target(
                "restart to `ready` (same state), median",
                f"< {TARGET_S:.0f} s",
                f"{median(again):.2f} s",
                median(again) < TARGET_S,
            ),
            Target(
                "first start to `ready` (initdb, migrations, seeding)",
                f"< {TARGET_S:.0f} s",
                f"{first:.2f} s",
                first < TARGET_S,
            ),
        ],
        columns=["start", "runs", "median s", "min s", "max s"],
        rows=[
            [
                "first (empty state: initdb, migrations, seeding)",
                "1",
                f"{first:.2f}",
                f"{first:.2f}",
                f"{first:.2f}",
            ],
            [
                "restart (same state)",
                str(len(again)),
                f"{median(again):.2f}",
                f"{min(again):.2f}",
                f"{max(again):.2f}",
            ],
        ],
        notes=[
            "From process start to the `ready` line, measured by the parent; each run stops with SIGINT (Ctrl-C).",
            "Includes the embedded PostgreSQL, embedded AWS with the template's tables, buckets, secrets and state "
            "machine, the provider sandbox, the demo store backoffice process and the gateway.",
            "Target: under 5 s after the first install (recorded, not asserted), read for both the first start "
            "on an empty state and a restart.",
        ],
    )
