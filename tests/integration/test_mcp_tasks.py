"""Publishing, deploys and builder messages as MCP tasks through POST /mcp, with a raw JSON-RPC client written from
the spec texts: 2025-11-25's tasks (the `tasks` capability at initialize; tasks/get, tasks/result, tasks/cancel,
tasks/list) and 2026-07-28's tasks extension (declared per request; tasks/get inlines the result, tasks/cancel
acknowledges). The work runs for real: the publish state machine (moto runs it, calling our publish-steps
function) and the sandbox's builds and builder over HTTP."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from apiclient import authorize_client, connected_project, create_repo, push_files
from apiclient import connect_provider as connect
from svc_shared.core.catalogue import say
from svc_shared.providers.static_host import StaticHost
from svc_shared.wiring import services

TASKS = "io.modelcontextprotocol/tasks"
UI = {"mimeTypes": ["text/html;profile=mcp-app"]}
GOLDEN = Path(__file__).resolve().parents[1] / "unit" / "golden" / "tools_list.json"


class Handshake:
    """A 2025-11-25 client: initialize (declaring `capabilities`), then requests carrying its session id."""

    def __init__(self, api, bearer: dict[str, str], capabilities: dict[str, Any]) -> None:
        self.api, self.bearer = api, bearer
        answer = self._post({"protocolVersion": "2025-11-25", "capabilities": capabilities}, "initialize")
        self.initialized = answer.json()["result"]
        self.session = answer.header("Mcp-Session-Id")

    def _post(self, params: dict[str, Any], method: str):
        headers = {**self.bearer, "MCP-Protocol-Version": "2025-11-25"}
        if getattr(self, "session", None):
            headers["Mcp-Session-Id"] = self.session
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        answer = self.api.post("/mcp", headers=headers, body=json.dumps(body))
        assert answer.status == 200, answer.text
        return answer

    def rpc(self, method: str, **params: Any) -> dict[str, Any]:
        reply: dict[str, Any] = self._post(params, method).json()
        return reply


class Stateless:
    """A 2026-07-28 client: every request carries its version and capabilities, and the routing headers."""

    def __init__(self, api, bearer: dict[str, str], extensions: dict[str, Any]) -> None:
        self.api, self.bearer, self.extensions = api, bearer, extensions

    def rpc(self, method: str, **params: Any) -> tuple[int, dict[str, Any]]:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": self.extensions},
        }
        headers = {**self.bearer, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
        named = params.get("name") or params.get("taskId")
        if named:
            headers["Mcp-Name"] = named
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        answer = self.api.post("/mcp", headers=headers, body=json.dumps(body))
        return answer.status, answer.json()


def model_tools() -> list[dict[str, Any]]:
    """The pinned listing as a client that renders no views gets it (tests/unit/test_tool_listing.py)."""
    return [
        {key: value for key, value in tool.items() if key != "_meta"}
        for tool in json.loads(GOLDEN.read_text())["tools"]
        if "model" in tool.get("_meta", {}).get("ui", {}).get("visibility", ["model"])
    ]


def follow(get, task_id: str, timeout: float = 60.0) -> tuple[dict[str, Any], list[str]]:
    """Poll tasks/get until the task ends: its last state and every status message seen on the way."""
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while time.monotonic() < deadline:
        task = get(task_id)
        if not seen or seen[-1] != task["statusMessage"]:
            seen.append(task["statusMessage"])
        if task["status"] in ("completed", "failed", "cancelled"):
            return task, seen
        time.sleep(0.2)
    pytest.fail(f"task {task_id} did not end; seen {seen}")


@pytest.fixture
def shop(api, bearer, provider_env, demo_user):
    """A project with its repository and a static host site (what publishing's last stage records)."""
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    for provider in ("repo_host", "db_host", "static_host"):
        connect(api, provider)
    project = services.projects().create(
        owner_id=demo_user.id, workspace_id=demo_user.default_workspace_id, prompt="Handmade candles, warm"
    )
    assert create_repo(api, project.id, f"shop-{project.id[:8]}").status == 200
    push_files(api, project.id, {"src/app.txt": "hello\n"})
    project = services.projects().get(project.id)
    host = StaticHost(
        provider_env["STATIC_HOST_API_URL"],
        services.connections().token(demo_user.id, "static_host").access_token,
    )
    site = host.create_site(
        name=f"site-{project.id[:8]}", repo_path=project.repo_host_repo, branch=project.repo_host_branch
    )
    services.projects().update(project, {"static_site_id": site.id})
    return {"api": api, "bearer": bearer, "project_id": project.id, "sandbox": provider_env["sandbox"].url}


# -- who sees tasks ----------------------------------------------------------------------------------------
def test_a_client_that_declares_tasks_gets_the_capability_and_the_task_tools_marked(api, bearer):
    client = Handshake(api, bearer, {"tasks": {"list": {}, "cancel": {}}})
    assert client.initialized["capabilities"]["tasks"] == {
        "list": {},
        "cancel": {},
        "requests": {"tools": {"call": {}}},
    }
    assert client.session and client.session.startswith("tk1.")
    tools = client.rpc("tools/list")["result"]["tools"]
    marked = {t["name"] for t in tools if t.get("execution") == {"taskSupport": "optional"}}
    assert marked == {"deploy_project", "send_message"}  # resume_publish is for view-rendering clients
    assert [{k: v for k, v in t.items() if k != "execution"} for t in tools] == model_tools()


def test_clients_that_declare_no_tasks_see_the_server_they_always_saw(api, bearer, shop):
    client = Handshake(api, bearer, {})
    assert client.session is None and "tasks" not in client.initialized["capabilities"]
    assert client.rpc("tools/list")["result"]["tools"] == model_tools()
    assert client.rpc("tasks/list")["error"]["code"] == -32601
    # A `task` from a client that declared none is ignored: the call runs as it always did.
    answer = client.rpc(
        "tools/call", name="deploy_project", arguments={"project_id": shop["project_id"]}, task={}
    )
    assert answer["result"]["isError"] is False and answer["result"]["structuredContent"]["deployment_id"]
    status, reply = Stateless(api, bearer, {}).rpc("tasks/get", taskId="x.y")
    assert (status, reply["error"]["code"]) == (400, -32021)
    assert reply["error"]["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    assert "io.modelcontextprotocol/tasks" not in json.dumps(
        Stateless(api, bearer, {}).rpc("server/discover")[1]
    )


def test_a_tool_without_task_support_called_as_a_task_is_method_not_found(api, bearer):
    client = Handshake(api, bearer, {"tasks": {}})
    reply = client.rpc("tools/call", name="list_projects", arguments={}, task={"ttl": 60000})
    assert reply["error"] == {
        "code": -32601,
        "message": say("tasks.tool_not_task", name="list_projects"),
    }


# -- 2025-11-25 ----------------------------------------------------------------------------------------------
@pytest.fixture
def slow_builds(shop):
    """Builds that take a few seconds, so a poll sees one building."""
    settings = f"{shop['sandbox']}/__admin/netlify/settings"
    assert httpx.post(settings, json={"build_delay": 4}).status_code == 200
    yield
    httpx.post(settings, json={"build_delay": 0.3})


def test_a_deploy_started_as_a_task_is_followed_to_completed_in_words(shop, slow_builds):
    client = Handshake(shop["api"], shop["bearer"], {"tasks": {}})
    project_id = shop["project_id"]
    created = client.rpc(
        "tools/call", name="deploy_project", arguments={"project_id": project_id}, task={"ttl": 120000}
    )["result"]["task"]
    assert (created["status"], created["ttl"], created["pollInterval"]) == ("working", 120000, 3000)
    assert created["taskId"].startswith(f"{project_id}.")

    task, seen = follow(lambda task_id: client.rpc("tasks/get", taskId=task_id)["result"], created["taskId"])
    assert task["status"] == "completed"
    deployment = json.loads(
        client.rpc("tasks/result", taskId=created["taskId"])["result"]["content"][0]["text"]
    )
    assert created["statusMessage"] == say("tasks.started")
    assert any("the site is building" in words for words in seen[:-1]), seen
    live = services.projects().get(project_id)
    assert seen[-1].startswith(f"Deploy {deployment['deployment_id']} is live at http")
    assert deployment["workspace_url"].endswith(
        f"/projects/{live.id}/deployments/{deployment['deployment_id']}"
    )
    result = client.rpc("tasks/result", taskId=created["taskId"])["result"]
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": created["taskId"]}
    assert result["structuredContent"] == deployment
    listed = client.rpc("tasks/list")["result"]["tasks"]
    assert [(t["taskId"], t["status"]) for t in listed] == [(created["taskId"], "completed")]
    refused = client.rpc("tasks/cancel", taskId=created["taskId"])["error"]
    assert refused == {"code": -32602, "message": say("tasks.already_ended", status="completed")}


def test_a_failed_build_is_a_failed_task_with_the_hosts_words(shop):
    error = "Build script returned non-zero exit code: 2 (npm run build: src/app.tsx(3,1): error TS1005)"
    assert (
        httpx.post(f"{shop['sandbox']}/__admin/netlify/next-build", json={"error": error}).status_code == 201
    )
    client = Handshake(shop["api"], shop["bearer"], {"tasks": {}})
    created = client.rpc(
        "tools/call", name="deploy_project", arguments={"project_id": shop["project_id"]}, task={}
    )["result"]["task"]
    assert created["ttl"] == 3_600_000  # none asked: an hour
    task, _ = follow(lambda task_id: client.rpc("tasks/get", taskId=task_id)["result"], created["taskId"])
    assert task["status"] == "failed"
    assert error in task["statusMessage"]
    result = client.rpc("tasks/result", taskId=created["taskId"])["result"]
    assert result["isError"] is True and error in result["content"][0]["text"]
    assert result["_meta"]["svc/error"]["code"] == "build_failed"


def test_a_tool_that_refuses_at_once_makes_a_failed_task_with_its_words(api, bearer):
    client = Handshake(api, bearer, {"tasks": {}})
    created = client.rpc("tools/call", name="deploy_project", arguments={"project_id": "nope"}, task={})
    task = client.rpc("tasks/get", taskId=created["result"]["task"]["taskId"])["result"]
    assert (task["status"], task["statusMessage"]) == ("failed", "project not found")


def test_a_task_whose_work_cannot_be_read_goes_on_working_in_words(shop):
    client = Handshake(shop["api"], shop["bearer"], {"tasks": {}})
    created = client.rpc(
        "tools/call", name="deploy_project", arguments={"project_id": shop["project_id"]}, task={}
    )["result"]["task"]
    user_id = services.projects().get(shop["project_id"]).owner_id
    services.connections().disconnect(user_id, "static_host")
    task = client.rpc("tasks/get", taskId=created["taskId"])["result"]
    assert task["status"] == "working"
    assert task["statusMessage"].startswith("The work of this task cannot be read right now (")


def test_another_users_task_id_is_not_found(api, bearer, shop):
    client = Handshake(api, bearer, {"tasks": {}})
    created = client.rpc(
        "tools/call", name="deploy_project", arguments={"project_id": shop["project_id"]}, task={}
    )["result"]["task"]
    services.accounts().create_user(email="other@example.com", password="other-password-1", plan="paid")
    tokens = authorize_client(api, "other@example.com", "other-password-1")
    api.cookies.clear()
    other = Handshake(api, {**bearer, "Authorization": f"Bearer {tokens['access_token']}"}, {"tasks": {}})
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        assert other.rpc(method, taskId=created["taskId"])["error"] == {
            "code": -32602,
            "message": say("tasks.not_found"),
        }, method
    assert other.rpc("tasks/list")["result"] == {"tasks": []}
    status, reply = Stateless(api, other.bearer, {TASKS: {}}).rpc("tasks/get", taskId=created["taskId"])
    assert (status, reply["error"]["code"]) == (400, -32602)
    assert client.rpc("tasks/get", taskId=created["taskId"])["result"]["taskId"] == created["taskId"]


def test_a_task_is_kept_for_its_ttl_and_then_not_found(clock, shop):
    client = Handshake(shop["api"], shop["bearer"], {"tasks": {}})
    created = client.rpc(
        "tools/call", name="deploy_project", arguments={"project_id": shop["project_id"]}, task={"ttl": 1}
    )["result"]["task"]
    assert created["ttl"] == 60_000  # the shortest a task lives
    clock.advance(59)
    assert client.rpc("tasks/get", taskId=created["taskId"])["result"]["taskId"] == created["taskId"]
    clock.advance(1)
    assert client.rpc("tasks/get", taskId=created["taskId"])["error"]["code"] == -32602
    assert client.rpc("tasks/list")["result"] == {"tasks": []}


def test_tasks_are_listed_ten_at_a_time_with_a_cursor(api, bearer):
    client = Handshake(api, bearer, {"tasks": {}})
    created = [
        client.rpc("tools/call", name="deploy_project", arguments={"project_id": "nope"}, task={})["result"][
            "task"
        ]["taskId"]
        for _ in range(11)
    ]
    first = client.rpc("tasks/list")["result"]
    assert len(first["tasks"]) == 10 and first["nextCursor"]
    second = client.rpc("tasks/list", cursor=first["nextCursor"])["result"]
    assert "nextCursor" not in second and len(second["tasks"]) == 1
    assert sorted(t["taskId"] for t in first["tasks"] + second["tasks"]) == sorted(created)
    assert {t["status"] for t in first["tasks"] + second["tasks"]} == {"failed"}
    assert client.rpc("tasks/list", cursor="not-a-cursor")["error"] == {
        "code": -32602,
        "message": say("tasks.cursor_invalid"),
    }


# -- 2026-07-28 ----------------------------------------------------------------------------------------------
def test_a_builder_message_runs_as_a_task_the_server_chose(shop):
    client = Stateless(shop["api"], shop["bearer"], {TASKS: {}})
    status, discovered = client.rpc("server/discover")
    assert discovered["result"]["capabilities"]["extensions"][TASKS] == {}
    status, created = client.rpc(
        "tools/call",
        name="send_message",
        arguments={"project_id": shop["project_id"], "message": "Add an about page"},
    )
    task = created["result"]
    assert (status, task["resultType"], task["status"], task["ttlMs"]) == (200, "task", "working", 3_600_000)
    assert "task" not in task and "result" not in task

    def get(task_id: str) -> dict[str, Any]:
        status, reply = client.rpc("tasks/get", taskId=task_id)
        assert status == 200 and reply["result"]["resultType"] == "complete"
        return dict(reply["result"])

    done, seen = follow(get, task["taskId"])
    assert done["status"] == "completed" and seen[-1] == say("tasks.message_done")
    assert done["result"]["structuredContent"]["status"] == "complete"
    assert done["result"]["structuredContent"]["commit_sha"]


def test_a_failed_build_completes_with_an_error_result_in_the_extension(shop):
    error = "Build script returned non-zero exit code: 1"
    httpx.post(f"{shop['sandbox']}/__admin/netlify/next-build", json={"error": error})
    client = Stateless(shop["api"], shop["bearer"], {TASKS: {}})
    _, created = client.rpc("tools/call", name="deploy_project", arguments={"project_id": shop["project_id"]})
    done, _ = follow(
        lambda task_id: client.rpc("tasks/get", taskId=task_id)[1]["result"], created["result"]["taskId"]
    )
    # The extension keeps `failed` for protocol errors: a tool that ran and failed completed with an error.
    assert done["status"] == "completed"
    assert done["result"]["isError"] is True and error in done["result"]["content"][0]["text"]
    assert client.rpc("tasks/cancel", taskId=done["taskId"])[1]["result"] == {"resultType": "complete"}


def test_a_publish_resumed_as_a_task_and_cancelled_stops_at_a_step_boundary_and_resumes(
    api, bearer, provider_env, demo_user
):
    sandbox = provider_env["sandbox"].url
    httpx.post(f"{sandbox}/__admin/supabase/settings", json={"project_ready_delay": 3600})
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    project = connected_project(api, demo_user, "Handmade candles for cosy homes, warm tone")
    client = Stateless(api, bearer, {TASKS: {}, "io.modelcontextprotocol/ui": UI})

    def get(task_id: str) -> dict[str, Any]:
        return dict(client.rpc("tasks/get", taskId=task_id)[1]["result"])

    try:
        _, created = client.rpc("tools/call", name="resume_publish", arguments={"project_id": project.id})
        first = created["result"]["taskId"]
        waiting = say("tasks.publish_working", number=2, count=6, stage=say("tasks.stages.db_waiting_ready"))
        deadline = time.monotonic() + 60
        while get(first)["statusMessage"] != waiting:
            assert time.monotonic() < deadline, get(first)
            time.sleep(0.2)
        assert client.rpc("tasks/cancel", taskId=first)[1]["result"] == {"resultType": "complete"}
        assert (get(first)["status"], get(first)["statusMessage"]) == ("cancelled", say("tasks.cancelled"))

        # The run stops before its next step, at its stage, in the merchant's words.
        deadline = time.monotonic() + 60
        while (report := provision_status(api, project.id))["status"] != "failed":
            assert time.monotonic() < deadline, report
            time.sleep(0.3)
        assert (report["stage"], report["error"]) == (
            "db_waiting_ready",
            say("publishing.stopped_on_request"),
        )
    finally:
        httpx.post(f"{sandbox}/__admin/supabase/settings", json={"project_ready_delay": 0.3})

    _, again = client.rpc("tools/call", name="resume_publish", arguments={"project_id": project.id})
    done, seen = follow(get, again["result"]["taskId"], timeout=90)
    assert done["status"] == "completed", seen
    assert seen[-1].startswith("Published: the shop is live at http")
    assert done["result"]["structuredContent"]["publish_status"] == "ready"
    assert get(first)["status"] == "cancelled"  # a cancelled task stays cancelled


def provision_status(api, project_id: str) -> dict[str, Any]:
    answer = api.post(f"/api/projects/{project_id}/provision", json_body={"action": "status"})
    assert answer.status == 200, answer.text
    report: dict[str, Any] = answer.json()
    return report
