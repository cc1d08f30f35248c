"""Every /mcp request is measured: one embedded-metric-format line (what CloudWatch Logs turns into metrics)
with its latency and one count for its outcome, which the 5xx-rate alarm and the dashboard read."""

from __future__ import annotations

import json

from svc_shared.core.metrics import MCP_OUTCOMES
from svc_shared.wiring import services


def rpc(api, bearer, payload):
    return api.post("/mcp", body=json.dumps(payload), headers=bearer)


def call(method, id_=1, **params):
    return {"jsonrpc": "2.0", "id": id_, "method": method, **({"params": params} if params else {})}


def emf_lines(captured: str) -> list[dict]:
    return [json.loads(line) for line in captured.splitlines() if line.startswith('{"_aws"')]


def outcome_of(line: dict) -> str:
    (name,) = [name for name in MCP_OUTCOMES.values() if name in line]
    return name


def test_each_request_counts_once_by_outcome_with_its_latency(api, bearer, monkeypatch, capsys):
    capsys.readouterr()  # the sign-in that made the token is not /mcp traffic
    assert rpc(api, bearer, call("ping")).status == 200
    assert api.request("GET", "/mcp").status == 405
    assert api.post("/mcp", body="{", headers=bearer).status == 400
    assert api.post("/mcp", json_body=call("ping")).status == 401
    assert rpc(api, bearer, [call("ping", id_=i) for i in range(59)]).status == 200  # 60 in the window
    assert rpc(api, bearer, call("ping")).status == 429
    lines = emf_lines(capsys.readouterr().out)
    assert [outcome_of(line) for line in lines] == [
        "McpOk",
        "McpClientError",
        "McpClientError",
        "McpDenied",
        "McpOk",
        "McpRateLimited",
    ]
    for line in lines:
        (directive,) = line["_aws"]["CloudWatchMetrics"]
        assert directive["Namespace"] == "svc"
        assert directive["Dimensions"] == [["env", "service"]]
        assert {m["Name"]: m["Unit"] for m in directive["Metrics"]} == {
            outcome_of(line): "Count",
            "McpLatency": "Milliseconds",
        }
        assert (line["env"], line["service"]) == ("dev", "svc")
        assert line[outcome_of(line)] == [1.0]
        assert 0 < line["McpLatency"][0] < 10_000


def test_a_failure_inside_a_tool_and_an_unhandled_one_count_as_server_errors(
    api, bearer, app_env, monkeypatch, capsys
):
    # The provider-token table is gone: the tool fails inside a 200 reply (JSON-RPC internal error).
    monkeypatch.setenv("TOKENS_TABLE_NAME", app_env["TOKENS_TABLE_NAME"] + "-gone")
    services.wire()
    capsys.readouterr()
    inside = rpc(
        api, bearer, call("tools/call", name="create_project", arguments={"prompt": "Candles for cosy homes"})
    )
    assert inside.status == 200
    assert inside.json()["error"]["code"] == -32603
    # The app table is gone too: the request fails before any method runs (HTTP 500).
    monkeypatch.setenv("TABLE_NAME", app_env["TABLE_NAME"] + "-gone")
    services.wire()
    assert rpc(api, bearer, call("ping")).status == 500
    assert [outcome_of(line) for line in emf_lines(capsys.readouterr().out)] == [
        "McpServerError",
        "McpServerError",
    ]
