"""Start-to-ready time of the local stack (`python -m svc_local`, as `make dev` runs it, embedded PostgreSQL):
a first start on an empty state directory, then restarts on the same state. Target: under 5 s after the first
install (recorded, not asserted)."""

from __future__ import annotations

import socket
import sys
import tempfile
from pathlib import Path

from bench.harness import Context, Result, Target, benchmark, median

TARGET_S = 5.0


def _free_ports(count: int) -> dict[str, str]:
    """Ports free now, one per service: every start of a run uses the same ones, as `make dev` always uses
    3000, 4566 and 4010 (the public base URL is part of what a restart finds already built)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for one in sockets:
            one.bind(("127.0.0.1", 0))
        ports = [str(one.getsockname()[1]) for one in sockets]
    finally:
        for one in sockets:
            one.close()
    names = ("SVC_PORT", "SVC_AWS_PORT", "SVC_SANDBOX_PORT", "SVC_BACKOFFICE_PORT")
    return dict(zip(names, ports, strict=True))


def _start(root: Path, state: Path, ports: dict[str, str]) -> float:
    """Seconds from process start to `ready` (embedded PostgreSQL), then Ctrl-C."""
    helpers = str(root / "tests" / "e2e")
    if helpers not in sys.path:
        sys.path.insert(0, helpers)
    from stackproc import start_stack

    stack = start_stack(state, database_url=None, extra_env=ports)
    stack.interrupt()
    return stack.seconds_to_ready


@benchmark("stack-start", "Local stack: start to `ready` (make dev)")
def stack_start(ctx: Context) -> Result:
    restarts = 2 if ctx.quick else ctx.option("restarts", 5)
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        ports = _free_ports(4)
        first = _start(ctx.root, state, ports)
        again = [_start(ctx.root, state, ports) for _ in range(restarts)]
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
            "Includes the embedded PostgreSQL, embedded AWS with the stack the rehearsal creates from the SAM "
            "transform of template.yaml (tables, buckets, secrets, the state machine), the IAM model, the provider "
            "sandbox, the demo store and the gateway. Every start of the run uses the same four free ports, as "
            "`make dev` uses fixed ones: a restart finds the transform it needs in the state directory.",
            "Target: under 5 s after the first install (recorded, not asserted), read for both the first start "
            "on an empty state and a restart.",
        ],
    )
