"""Publishing's deploy as an MCP task with the official Python SDK 1.x, the one official client that implements
2025-11-25's tasks (SDK 2.x dropped them; neither implements the 2026-07-28 extension, which
tests/integration/test_mcp_tasks.py drives with a raw JSON-RPC client written from the spec text): over HTTP
against the running local stack, with a token from the real OAuth flow, the demo store deployed as a task and
followed to completed in words."""

from __future__ import annotations

import json
import subprocess

from stackproc import ROOT
from test_journeys import connect, signed_in

SDK1_PYTHON = ROOT / ".venv-sdk1" / "bin" / "python"


def test_python_sdk_1x_deploys_as_a_task_and_follows_it_to_completed(gateway):
    assert SDK1_PYTHON.exists(), ".venv-sdk1 is missing: run `make install`"
    with signed_in(gateway, "demo@svc.local", "demo-password-123") as browser:
        connect(browser, "static_host")  # the demo store's site is in the sandbox's default account
    run = subprocess.run(
        [
            str(SDK1_PYTHON),
            str(ROOT / "tests" / "e2e" / "clients" / "sdk1_tasks_client.py"),
            f"{gateway}/mcp",
            "demo@svc.local",
            "demo-password-123",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    outcome = json.loads(run.stdout.strip().splitlines()[-1])
    assert outcome["protocol"] == "2025-11-25"
    assert outcome["server_tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert outcome["task_tools"] == ["deploy_project", "send_message"]
    assert outcome["created"] == {"status": "working", "ttl": 600000, "poll": 3000}
    assert outcome["states"][-1] == "completed" and set(outcome["states"][:-1]) <= {"working"}
    assert outcome["seen"][0] == "Started: poll the task for its progress."
    deployment = outcome["result"]["structured"]
    assert outcome["result"]["isError"] is False and deployment["deployment_id"]
    assert outcome["seen"][-1].startswith(f"Deploy {deployment['deployment_id']} is live at http")
    assert outcome["related"] == {"taskId": outcome["task_id"]}
    assert [outcome["task_id"], "completed"] in outcome["listed"]
    assert outcome["cancel_refused"] == {
        "code": -32602,
        "message": "Cannot cancel the task: it has already ended (completed).",
    }
    assert outcome["unknown"] == -32602
