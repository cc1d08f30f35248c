"""Publishing's deploy as an MCP task with the official Python SDK 1.x, the one official client that implements
2025-11-25's tasks (SDK 2.x dropped them; neither implements the 2026-07-28 extension, which
tests/integration/test_mcp_tasks.py drives with a raw JSON-RPC client written from the spec text): over HTTP
against the running local stack, with a token from the real OAuth flow, the demo store deployed as a task and
followed to completed in words."""

from __future__ import annotations

from sdkclients import run_sdk1_client
from test_journeys import connect, signed_in


def test_python_sdk_1x_deploys_as_a_task_and_follows_it_to_completed(gateway):
    with signed_in(gateway, "demo@svc.local", "demo-password-123") as browser:
        connect(browser, "static_host")  # the demo store's site is in the sandbox's default account
    outcome = run_sdk1_client("sdk1_tasks_client.py", gateway, timeout=180)
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
