"""Real MCP clients and referees against the running local stack, each over HTTP with a token from the real
OAuth flow: the MCP conformance suite's server scenarios (2026-07-28 and 2025-11-25) and authorization-server
scenarios, the MCP Inspector's CLI in both protocol eras, and the official Python SDK 1.x.

The conformance suite does not speak OAuth to the server it tests, so its requests go through a loopback proxy
that adds the Bearer token (authproxy.py). Each scenario runs as its own user: the suite sends more requests
than one user's 60 per minute.
"""

from __future__ import annotations

import json
import secrets
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from authproxy import AuthProxy
from docserver import DocumentServer
from oauthflow import ScriptedBrowser, access_token
from sdkclients import run_sdk1_client
from stackproc import ROOT, RunningStack, create_user

NODE = ROOT / "node_modules" / ".bin" / "node"
CONFORMANCE = ROOT / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
INSPECTOR = ROOT / "node_modules" / ".bin" / "mcp-inspector"

# The 2026-07-28 server scenarios that apply to a server offering tools and its MCP Apps views as resources
# (docs/decisions.md lists the required ones that do not apply, and why).
SCENARIOS_2026 = [
    "server-stateless",
    "tools-list",
    "resources-list",
    "sep-2164-resource-not-found",
    "caching",
    "dns-rebinding-protection",
    "http-header-validation",
    "server-sse-multiple-streams",
    "input-required-result-missing-input-response",
    "input-required-result-unsupported-methods",
    "input-required-result-ignore-extra-params",
    "input-required-result-validate-input",
]
SCENARIOS_2025 = [
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "dns-rebinding-protection",
]
# Checks of those scenarios that need what this server does not have: the suite's own diagnostic tools, or
# prompts.
NOT_APPLICABLE = {
    "sep-2575-server-rejects-undeclared-capability": "needs the suite's tool test_missing_capability",
    "sep-2575-missing-capability-http-400": "needs the suite's tool test_missing_capability",
    "sep-2575-http-server-no-independent-requests-on-stream": "needs the suite's tool test_streaming_elicitation",
    "sep-2575-server-no-log-without-loglevel": "needs the suite's tool test_logging_tool",
    "sep-2549-prompts-list-caching-hints": "no prompts",
}
PASSING = {"SUCCESS", "INFO", "WARNING", "SKIPPED"}


def require(path: Path) -> None:
    assert path.exists(), f"{path.relative_to(ROOT)} is missing: run `make install`"


def checks_in(directory: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for checks in sorted(directory.rglob("checks.json")):
        found += [{**check, "scenario": checks.parent.name} for check in json.loads(checks.read_text())]
    return found


def fresh_token(stack: RunningStack, gateway: str) -> str:
    email, password = f"client-{secrets.token_hex(4)}@example.com", "client-pass-123"
    create_user(stack, email, password)
    return access_token(gateway, email, password, "Conformance suite")


@pytest.mark.parametrize(
    ("version", "scenarios"), [("2026-07-28", SCENARIOS_2026), ("2025-11-25", SCENARIOS_2025)]
)
def test_conformance_server_scenarios(stack, gateway, version, scenarios):
    require(NODE)
    require(CONFORMANCE)
    results: list[dict[str, Any]] = []
    for scenario in scenarios:
        with AuthProxy(gateway, fresh_token(stack, gateway)) as proxy, tempfile.TemporaryDirectory() as out:
            run = subprocess.run(
                [
                    str(NODE),
                    str(CONFORMANCE),
                    "server",
                    "--url",
                    f"{proxy.url()}/mcp",
                    "--scenario",
                    scenario,
                    "--spec-version",
                    version,
                    "-o",
                    out,
                ],
                capture_output=True,
                text=True,
                timeout=180,
                cwd=ROOT,
            )
            checks = checks_in(Path(out))
        assert checks, f"{scenario} produced no checks:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
        results += checks
    failed = [
        f"{c['scenario']}: {c['id']}: {c.get('errorMessage')}"
        for c in results
        if c["status"] not in PASSING and c["id"] not in NOT_APPLICABLE
    ]
    assert not failed, "\n".join(failed)
    passed = [c for c in results if c["status"] == "SUCCESS"]
    assert len(passed) >= (30 if version == "2026-07-28" else 8)


@pytest.mark.parametrize("identity", ["registered", "metadata-document"])
def test_conformance_authorization_server_scenarios(gateway, identity):
    """The suite as the OAuth client: once with a registered client_id, once with the URL of a client metadata
    document served on loopback (the local stack's local mode fetches it)."""
    require(NODE)
    require(CONFORMANCE)
    port = callback_port()
    callback = f"http://127.0.0.1:{port}/callback"
    with DocumentServer() as documents:
        if identity == "registered":
            client_id = httpx.post(
                f"{gateway}/oauth/register",
                json={
                    "redirect_uris": [callback],
                    "token_endpoint_auth_method": "none",
                    "client_name": "Conformance AS",
                },
                timeout=10,
            ).json()["client_id"]
        else:
            client_id = documents.document(
                "/conformance/client.json", client_name="Conformance AS", redirect_uris=[callback]
            )
        checks = run_authorization_scenarios(gateway, client_id, port, callback)
        fetched = documents.hits.get("/conformance/client.json", 0)
    assert {c["id"] for c in checks if c["status"] == "SUCCESS"} >= {
        "authorization-server-metadata",
        "authorization-code-grant",
    }
    # No warnings either: the metadata offers client metadata documents.
    assert all(c["status"] == "SUCCESS" for c in checks), checks
    assert fetched == (1 if identity == "metadata-document" else 0)


def callback_port() -> int:
    """A port for the suite's callback server: free now, and below the ephemeral range (32768-60999), where
    the suite's many outgoing connections would otherwise sometimes hold it."""
    for _ in range(50):
        port = 20000 + secrets.randbelow(10000)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port for the callback server")


def run_authorization_scenarios(
    gateway: str, client_id: str, port: int, callback: str
) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.Popen(
            [
                str(NODE),
                str(CONFORMANCE),
                "authorization",
                "--url",
                gateway,
                "--client-id",
                client_id,
                "--port",
                str(port),
                "--resource",
                f"{gateway}/mcp",
                "-o",
                out,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
        )
        assert run.stdout is not None
        try:
            for line in run.stdout:
                if "/oauth/authorize?" in line:
                    # The suite prints the URL a person would open: sign in, allow, and land on its callback.
                    browser = ScriptedBrowser("demo@svc.local", "demo-password-123", redirect=callback)
                    browser.visit(line.strip())
                    assert browser.callback
                    deliver(browser.callback)
            assert run.wait(timeout=60) == 0
        finally:
            run.kill()
            run.stdout.close()
            run.wait()
        return checks_in(Path(out))


def deliver(callback: str) -> None:
    """The browser's last hop: the suite's callback server may take a moment to listen."""
    deadline = time.monotonic() + 10
    while True:
        try:
            httpx.get(callback, timeout=5)
            return
        except httpx.ConnectError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_inspector_cli_lists_and_calls_tools(stack, gateway, era):
    require(NODE)
    require(INSPECTOR)
    token = fresh_token(stack, gateway)

    def inspector(*args: str) -> Any:
        run = subprocess.run(
            [
                str(NODE),
                str(INSPECTOR),
                "--cli",
                f"{gateway}/mcp",
                *args,
                "--header",
                f"Authorization: Bearer {token}",
                "--protocol-era",
                era,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        return json.loads(run.stdout)

    listed = inspector("--method", "tools/list")
    assert len(listed["tools"]) == 26
    assert all(set(t["annotations"]) >= {"readOnlyHint", "destructiveHint"} for t in listed["tools"])
    me = inspector("--method", "tools/call", "--tool-name", "get_me")
    assert me["isError"] is False
    assert json.loads(me["content"][0]["text"])["email"].startswith("client-")


def test_python_sdk_1x_client_authorizes_and_calls_tools(gateway):
    outcome = run_sdk1_client("sdk1_client.py", gateway, timeout=120)
    assert outcome["protocol"] in ("2025-06-18", "2025-11-25")
    assert outcome["tools"] == 26
    assert '"email":"demo@svc.local"' in outcome["me"]
    assert outcome["same_after_refresh"] is True
    assert outcome["iss_in_callback"] is True
