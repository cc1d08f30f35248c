"""The tools that reach the providers (sandbox over HTTP): repository files and diffs, the builder, deploys
with the Free plan quota, uploads, credits top-up, and create_project once connected."""

from __future__ import annotations

import httpx
import pytest

from apiclient import PUBLISH_PROVIDERS, call_tool, project_with_repository, push_files
from apiclient import tool_error as error_text
from apiclient import tool_ok as ok
from svc_shared.providers.static_host import StaticHost
from svc_shared.wiring import services


@pytest.fixture
def shop(api, bearer, provider_env, demo_user):
    """A signed-in workspace with the three providers connected, a project made with create_project, a
    repository holding a few files, and MCP bearer headers."""
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    created = project_with_repository(api, bearer, PUBLISH_PROVIDERS)
    project_id = created["project_id"]
    assert created["workspace_url"].endswith(f"/projects/{project_id}")
    first = push_files(api, project_id, {"src/app.txt": "hello\n", "docs/readme.md": "# Shop\n"}).json()
    return {
        "api": api,
        "bearer": bearer,
        "project_id": project_id,
        "first_sha": first["sha"],
        "env": provider_env,
        "user": demo_user,
    }


def test_project_appears_in_list_and_counts_in_the_workspace(shop):
    projects = ok(call_tool(shop["api"], shop["bearer"], "list_projects"))["projects"]
    assert [p["id"] for p in projects] == [shop["project_id"]]
    workspace = ok(call_tool(shop["api"], shop["bearer"], "get_workspace"))
    assert workspace["project_count"] == 1


def test_list_and_read_files_at_head(shop):
    listed = ok(call_tool(shop["api"], shop["bearer"], "list_files", project_id=shop["project_id"]))
    paths = {f["path"] for f in listed["files"]}
    assert {"src/app.txt", "docs/readme.md", "README.md"} <= paths
    read = ok(
        call_tool(shop["api"], shop["bearer"], "read_file", project_id=shop["project_id"], path="src/app.txt")
    )
    assert read["content"] == "hello\n"


def test_read_file_refuses_files_over_1_mb_and_reads_exactly_1_mb(shop):
    api = shop["api"]
    mb = 1024 * 1024
    push_files(api, shop["project_id"], {"big/ok.txt": "x" * mb, "big/too.txt": "x" * (mb + 1)})
    exact = ok(call_tool(api, shop["bearer"], "read_file", project_id=shop["project_id"], path="big/ok.txt"))
    assert exact["size"] == 1024 * 1024
    assert "1 MB" in error_text(
        call_tool(api, shop["bearer"], "read_file", project_id=shop["project_id"], path="big/too.txt")
    )


def test_diff_between_two_refs_and_truncation_over_256_kb(shop):
    api = shop["api"]
    huge = "".join(f"line {i}\n" for i in range(40000))
    push_files(api, shop["project_id"], {"src/app.txt": "hello\nworld\n", "huge.txt": huge})
    diff = ok(
        call_tool(api, shop["bearer"], "get_diff", project_id=shop["project_id"], base=shop["first_sha"])
    )
    files = {f["filename"]: f for f in diff["files"]}
    assert "+world" in files["src/app.txt"]["patch"]
    assert files["huge.txt"]["truncated"] is True
    assert "patch truncated" in files["huge.txt"]["patch"]
    assert len(files["huge.txt"]["patch"].encode()) < 256 * 1024 + 200


def test_send_message_waits_for_the_builder_and_its_commit_lands(shop):
    api = shop["api"]
    ok(
        call_tool(
            api,
            shop["bearer"],
            "set_project_knowledge",
            project_id=shop["project_id"],
            text="Use warm colours.",
        )
    )
    answer = ok(
        call_tool(
            api,
            shop["bearer"],
            "send_message",
            project_id=shop["project_id"],
            message="Make the header green",
        )
    )
    assert answer["status"] == "complete"
    assert answer["commit_sha"]
    files = ok(call_tool(api, shop["bearer"], "list_files", project_id=shop["project_id"]))
    assert files["commit_sha"] == answer["commit_sha"]
    edits = ok(call_tool(api, shop["bearer"], "list_edits", project_id=shop["project_id"]))["edit_sessions"]
    assert edits and edits[0]["edit_session_id"] == answer["edit_session_id"]


def test_send_message_without_waiting_then_poll(shop):
    api = shop["api"]
    sent = ok(
        call_tool(
            api,
            shop["bearer"],
            "send_message",
            project_id=shop["project_id"],
            message="Add a FAQ",
            wait=False,
        )
    )
    assert sent["status"] == "in_progress"
    import time

    for _ in range(50):
        state = ok(call_tool(api, shop["bearer"], "get_message", message_id=sent["message_id"]))
        if state["status"] != "in_progress":
            break
        time.sleep(0.1)
    assert state["status"] == "complete"
    assert (
        error_text(call_tool(api, shop["bearer"], "get_message", message_id="msg_not_mine"))
        == "message not found"
    )


def publish_site(shop) -> str:
    """What publishing's last stage records: a static_host site linked to the repository."""
    user_id = shop["user"].id
    project = services.projects().get(shop["project_id"])
    host = StaticHost(
        shop["env"]["STATIC_HOST_API_URL"], services.connections().token(user_id, "static_host").access_token
    )
    site = host.create_site(
        name=f"site-{project.id[:8]}", repo_path=project.repo_host_repo, branch=project.repo_host_branch
    )
    services.projects().update(project, {"static_site_id": site.id})
    return site.id


def test_deploy_needs_a_published_site(shop):
    assert "publish" in error_text(
        call_tool(shop["api"], shop["bearer"], "deploy_project", project_id=shop["project_id"])
    )


def test_free_plan_gets_three_deploys_per_30_days(clock, shop):
    services.accounts().set_plan(shop["user"].id, "free")
    publish_site(shop)
    for _ in range(3):
        started = ok(call_tool(shop["api"], shop["bearer"], "deploy_project", project_id=shop["project_id"]))
        assert started["deployment_id"]
        assert started["workspace_url"].endswith(f"/deployments/{started['deployment_id']}")
    refused = error_text(
        call_tool(shop["api"], shop["bearer"], "deploy_project", project_id=shop["project_id"])
    )
    assert "3 deploys per 30 days" in refused
    clock.advance(30 * 24 * 3600)
    from apiclient import authorize_client

    fresh = authorize_client(shop["api"], "demo@example.com", "demo-password-1")  # the old token lived 24 h
    bearer = {**shop["bearer"], "Authorization": f"Bearer {fresh['access_token']}"}
    assert ok(call_tool(shop["api"], bearer, "deploy_project", project_id=shop["project_id"]))[
        "deployment_id"
    ]


def test_failed_deploy_does_not_spend_quota(shop):
    services.accounts().set_plan(shop["user"].id, "free")
    publish_site(shop)
    sandbox = shop["env"]["sandbox"]
    httpx.post(
        f"{sandbox.url}/__admin/faults",
        json={"method": "POST", "path": "/netlify/api/v1/sites/*/builds", "status": 500, "times": 1},
    )
    assert (
        call_tool(shop["api"], shop["bearer"], "deploy_project", project_id=shop["project_id"])["isError"]
        is True
    )
    for _ in range(3):
        ok(call_tool(shop["api"], shop["bearer"], "deploy_project", project_id=shop["project_id"]))


def test_paid_plan_deploys_and_status_follows_the_build(shop):
    publish_site(shop)
    # The site host serves what the repository holds: a page at its root (no build settings: the root is
    # published as it is).
    push_files(shop["api"], shop["project_id"], {"index.html": "<h1>Candles</h1>"})
    started = ok(call_tool(shop["api"], shop["bearer"], "deploy_project", project_id=shop["project_id"]))
    import time

    for _ in range(40):
        status = ok(
            call_tool(shop["api"], shop["bearer"], "get_project_status", project_id=shop["project_id"])
        )
        if status["build_status"] == "ready":
            break
        time.sleep(0.1)
    assert status["build_status"] == "ready"
    assert status["live_url"]
    live = httpx.get(status["live_url"])
    assert (live.status_code, live.text) == (200, "<h1>Candles</h1>")
    assert started["deployment_id"]


def test_upload_url_is_a_presigned_put_capped_at_10_mb(shop):
    def upload_url(filename: str, content_type: str, size_bytes: int) -> dict:
        return call_tool(
            shop["api"],
            shop["bearer"],
            "get_file_upload_url",
            project_id=shop["project_id"],
            filename=filename,
            content_type=content_type,
            size_bytes=size_bytes,
        )

    upload = ok(upload_url("hero.jpg", "image/jpeg", 5))
    put = httpx.put(upload["upload_url"], content=b"12345", headers=upload["headers"])
    assert put.status_code == 200, put.text
    assert "X-Amz-Expires=3600" in upload["upload_url"]
    assert "content-length" in httpx.URL(upload["upload_url"]).params["X-Amz-SignedHeaders"]
    # S3 (and the local stack's check in front of moto) refuses a PUT whose Content-Length differs from the
    # signed one.
    oversized = httpx.put(
        upload["upload_url"], content=b"123456", headers={**upload["headers"], "Content-Length": "6"}
    )
    assert oversized.status_code == 403
    assert "SignatureDoesNotMatch" in oversized.text
    ten_mb = 10 * 1024 * 1024
    assert "size_bytes" in error_text(upload_url("x.bin", "application/octet-stream", ten_mb + 1))
    assert ok(upload_url("x.bin", "application/octet-stream", ten_mb))["upload_url"]


@pytest.mark.parametrize(
    ("amount", "accepted"), [(5, True), (1000, True), (4.99, False), (1000.01, False), (12.345, False)]
)
def test_top_up_amount_limits(shop, amount, accepted):
    result = call_tool(shop["api"], shop["bearer"], "top_up_credits", amount=amount)
    if accepted:
        body = ok(result)
        assert body["checkout_url"].startswith(shop["env"]["sandbox"].url)
        assert body["credits"] == int(amount * 100)
    else:
        assert "amount" in error_text(result)


def test_get_credits_shows_balance_plan_and_renewal(shop):
    from svc_shared.domain.credit_history import WELCOME_CREDITS

    credits = ok(call_tool(shop["api"], shop["bearer"], "get_credits"))
    assert credits["balance"] == WELCOME_CREDITS
    assert credits["plan"] == "paid"
    assert len(credits["next_renewal_date"]) == 10


def test_list_files_accepts_100000_entries_and_refuses_100001(shop):
    from svc_shared.providers.repo_host import RepoHost

    user_id, project = shop["user"].id, services.projects().get(shop["project_id"])
    github = RepoHost(
        shop["env"]["REPO_HOST_API_URL"], services.connections().token(user_id, "repo_host").access_token
    )
    owner, name = project.repo_host_repo.split("/")
    base = f"/repos/{owner}/{name}/git"
    blob = github.request("POST", f"{base}/blobs", json={"content": "x", "encoding": "utf-8"})["sha"]

    def commit_tree(count: int) -> None:
        head = github.commit(owner, name, "main").sha
        entries = [{"path": f"f{i:06d}", "mode": "100644", "type": "blob", "sha": blob} for i in range(count)]
        # Setting up 100,000 entries takes the sandbox a while on a loaded machine: the test's own request,
        # with a generous timeout, not the adapter's 10 s read timeout (which is what the tool call exercises).
        made = httpx.post(
            f"{github.base_url}{base}/trees", json={"tree": entries}, headers=github.headers(), timeout=120
        )
        assert made.status_code == 201, made.text
        tree = made.json()["sha"]
        commit = github.request(
            "POST", f"{base}/commits", json={"message": f"{count} files", "tree": tree, "parents": [head]}
        )
        github.request("PATCH", f"{base}/refs/heads/main", json={"sha": commit["sha"], "force": False})

    commit_tree(100_000)
    listed = ok(call_tool(shop["api"], shop["bearer"], "list_files", project_id=shop["project_id"]))
    assert listed["count"] == 100_000
    commit_tree(100_001)
    refused = error_text(call_tool(shop["api"], shop["bearer"], "list_files", project_id=shop["project_id"]))
    assert "100,000 entries" in refused


def test_a_hanging_provider_cannot_hold_a_tool_call_past_the_request_budget(shop, monkeypatch):
    """Provider calls share one time budget per request, so a slow provider gives a clear error in time."""
    from svc_shared.providers import http as provider_http

    monkeypatch.setattr(provider_http, "REQUEST_BUDGET_SECONDS", 2.0)
    import functions.mcp.app as mcp_app

    monkeypatch.setattr(mcp_app, "REQUEST_BUDGET_SECONDS", 2.0)
    sandbox = shop["env"]["sandbox"].url
    httpx.post(
        f"{sandbox}/__admin/faults",
        json={"method": "GET", "path": "/github/api/repos/*", "delay_ms": 5000, "times": 10},
    )
    result = call_tool(shop["api"], shop["bearer"], "list_files", project_id=shop["project_id"])
    httpx.delete(f"{sandbox}/__admin/faults")
    # Without the budget the 5 s delay would simply be waited out (the read timeout is 10 s).
    assert error_text(result) == "GitHub is not answering right now. Try again in a few minutes."


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (404, "GitHub could not find it in the connected account"),
        (401, "GitHub refused the saved connection. Reconnect GitHub in the workspace"),
        (422, "GitHub refused the change because it conflicts with what is already there"),
        (400, "GitHub refused the request."),
    ],
)
def test_provider_failures_reach_the_client_in_the_products_words(shop, status, words):
    """What the provider answered (status, its own text) goes to the log; the client reads what to do."""
    sandbox = shop["env"]["sandbox"].url
    httpx.post(
        f"{sandbox}/__admin/faults",
        json={"method": "GET", "path": "/github/api/repos/*", "status": status, "times": 10},
    )
    try:
        result = call_tool(shop["api"], shop["bearer"], "list_files", project_id=shop["project_id"])
    finally:
        httpx.delete(f"{sandbox}/__admin/faults")
    text = error_text(result)
    assert text.startswith(words), text
    assert "answered" not in text and "repo_host" not in text and str(status) not in text


def test_every_tool_with_a_fixed_result_shape_returns_it_as_structured_content(shop):
    """call_tool checks each successful result against the tool's outputSchema (apiclient.py); this walks
    every tool (each declares one), on a real shop."""
    from svc_shared.mcp.tools import registry

    api, bearer, project_id = shop["api"], shop["bearer"], shop["project_id"]
    publish_site(shop)  # deploy_project needs a site
    project = {"project_id": project_id}
    arguments = {
        "get_workspace": {},
        "get_project_status": project,
        "set_project_visibility": {**project, "visibility": "workspace"},
        "remix_project": project,
        "get_project_knowledge": project,
        "set_project_knowledge": {**project, "text": "Warm tone."},
        "set_workspace_knowledge": {"text": "British spelling."},
        "top_up_credits": {"amount": "5"},
        "deploy_project": project,
        "create_project": {"prompt": "Hand-thrown mugs for slow mornings"},
        "send_message": {**project, "message": "Make the header green"},
        "list_edits": project,
        "list_files": project,
        "read_file": {**project, "path": "src/app.txt"},
        "get_diff": {**project, "base": shop["first_sha"]},
        "get_file_upload_url": {
            **project,
            "filename": "logo.png",
            "content_type": "image/png",
            "size_bytes": 1000,
        },
        "get_project_analytics": {**project, "start_date": "2026-01-01", "end_date": "2026-01-31"},
        "get_project_analytics_trend": project,
    }
    declared = [n for n, tool in registry.tools.items() if tool.output is not None and not tool.app_only]
    assert len(declared) == 26
    declared.remove("get_message")
    declared.insert(declared.index("send_message") + 1, "get_message")  # it reads what send_message sent
    for name in declared:
        result = call_tool(api, bearer, name, **arguments.get(name, {}))
        assert result["isError"] is False, (name, result)
        assert "structuredContent" in result, name
        if name == "send_message":
            arguments["get_message"] = {"message_id": result["structuredContent"]["message_id"]}
    listed = {t["name"]: t for t in call_tool_list(api, bearer)}
    assert all(("outputSchema" in listed[name]) == (name in declared) for name in listed)


def call_tool_list(api, bearer):
    import json

    reply = api.post(
        "/mcp", headers=bearer, body=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    )
    return reply.json()["result"]["tools"]


# -- paths and refs stay inside the repository ---------------------------------------------------------------
ESCAPING_PATHS = [
    "../../user",  # up the contents URL to /user, with the merchant's token
    "src/../../../../user/repos",
    "/etc/passwd",
    ".git/config",
    "src/.GIT/config",
    ".git./HEAD",
    "git~1/config",
    "src\\..\\..\\user",
    "src/app.txt\x00.png",
    "src/\x1b[31mapp.txt",
    "%2e%2e/%2e%2e/user",
    "%252e%252e%252f%252e%252e%252fuser",
    "src/%2fapp.txt",
    "src//app.txt",
    "src/",
    "./src/app.txt",
    "src/app\u202etxt.exe",
]


def _contents_requests(sandbox: str) -> int:
    return httpx.get(f"{sandbox}/__admin/requests", params={"prefix": "/github/api"}).json()["total"]


@pytest.mark.parametrize("path", ESCAPING_PATHS)
def test_read_file_refuses_a_path_that_leaves_the_repository_before_any_provider_call(shop, path):
    sandbox = shop["env"]["sandbox"].url
    httpx.delete(f"{sandbox}/__admin/requests")
    result = call_tool(shop["api"], shop["bearer"], "read_file", project_id=shop["project_id"], path=path)
    message = error_text(result)
    assert "is refused" in message and "path" in message
    assert "\x00" not in message and "\x1b" not in message  # the value is shown escaped
    assert _contents_requests(sandbox) == 0  # nothing reached GitHub with the merchant's token


@pytest.mark.parametrize(
    ("tool", "field"),
    [("list_files", "ref"), ("read_file", "ref"), ("get_diff", "base"), ("get_diff", "head")],
)
@pytest.mark.parametrize("ref", ["../../user", "main/../../user", "a\nb", "%2e%2e", "-x", "a b"])
def test_refs_that_are_not_git_refs_are_refused(shop, tool, field, ref):
    sandbox = shop["env"]["sandbox"].url
    httpx.delete(f"{sandbox}/__admin/requests")
    arguments = {"project_id": shop["project_id"], field: ref}
    if tool == "read_file":
        arguments["path"] = "src/app.txt"
    if tool == "get_diff" and field == "head":
        arguments["base"] = shop["first_sha"]
    message = error_text(call_tool(shop["api"], shop["bearer"], tool, **arguments))
    assert "is not a branch, tag or commit SHA" in message
    assert _contents_requests(sandbox) == 0


def test_path_segments_are_url_encoded_so_odd_names_read_as_themselves(shop):
    api = shop["api"]
    odd = "docs/50% off #1?.md"
    pushed = push_files(api, shop["project_id"], {odd: "sale\n"})
    assert pushed.status == 200, pushed.text
    read = ok(call_tool(api, shop["bearer"], "read_file", project_id=shop["project_id"], path=odd))
    assert (read["path"], read["content"]) == (odd, "sale\n")
    listed = ok(call_tool(api, shop["bearer"], "list_files", project_id=shop["project_id"]))
    assert odd in {f["path"] for f in listed["files"]}
