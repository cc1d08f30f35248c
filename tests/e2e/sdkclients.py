"""The official MCP Python SDK 1.x's client scripts (tests/e2e/clients/) run against the local stack by the
interpreter of .venv-sdk1; each prints its outcome as one JSON line."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from stackproc import ROOT

SDK1_PYTHON = ROOT / ".venv-sdk1" / "bin" / "python"


def run_sdk1_client(script: str, gateway: str, *, timeout: float) -> dict[str, Any]:
    """The outcome of clients/`script` run as the demo user against the gateway's /mcp."""
    assert SDK1_PYTHON.exists(), ".venv-sdk1 is missing: run `make install`"
    run = subprocess.run(
        [
            str(SDK1_PYTHON),
            str(ROOT / "tests" / "e2e" / "clients" / script),
            f"{gateway}/mcp",
            "demo@svc.local",
            "demo-password-123",
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    outcome: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return outcome
