"""The publish sequence: the provision route starts the real state machine (moto executes it and calls our
publish-steps function), the stages run against the sandbox, and the results are checked at the providers."""

from __future__ import annotations

import json
import subprocess
import time

import httpx
import psycopg
import pytest

from apiclient import connect_provider as connect
from apiclient import connected_project
from svc_shared.core.config import get_settings
from svc_shared.domain.publish_state import TEMPLATE_BODY, TEMPLATE_SUBJECT
from svc_shared.wiring import services


@pytest.fixture
def merchant(api, provider_env, demo_user):
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    project = connected_project(api, demo_user, "Handmade candles for cosy homes, warm tone", "Candle Shop")
    return {"api": api, "project": project, "user": demo_user, "env": provider_env}


def provision(api, project_id: str, action: str = "start"):
    return api.post(f"/api/projects/{project_id}/provision", json_body={"action": action})


def wait_until_done(api, project_id: str, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        report = provision(api, project_id, "status").json()
        seen.append(report["stage"])
        if report["status"] in ("ready", "failed"):
            return {**report, "seen": seen}
        time.sleep(0.3)
    pytest.fail(f"publish did not finish: stages seen {seen}")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True, timeout=60).stdout


@pytest.mark.parametrize("action", ["stauts", "", 3, None])
def test_an_unknown_action_is_400_naming_the_allowed_ones_and_starts_nothing(merchant, action):
    api, project = merchant["api"], merchant["project"]
    answer = api.post(f"/api/projects/{project.id}/provision", json_body={"action": action})
    assert answer.status == 400
    assert answer.json() == {
        "error": "invalid_action",
        "message": "action: Input should be 'start' or 'status'",
    }
    stored = services.projects().get(project.id, consistent=True)
    assert stored.extra.get("publish_stage") is None
    assert stored.extra.get("publish_status") is None


def test_an_empty_provision_body_starts_publishing(merchant):
    api, project = merchant["api"], merchant["project"]
    answer = api.post(f"/api/projects/{project.id}/provision", headers={"Content-Type": "application/json"})
    assert answer.status == 200, answer.text
    assert answer.json()["stage"] == "db_creating"
    assert wait_until_done(api, project.id)["status"] == "ready"


def test_publish_runs_every_stage_to_ready(merchant, tmp_path):
    api, project, env = merchant["api"], merchant["project"], merchant["env"]
    never = provision(api, project.id, "status").json()
    assert (never["status"], never["done"]) == ("not_started", False)
    first = provision(api, project.id)
    assert first.status == 200, first.text
    assert first.json()["stage"] == "db_creating"
    report = wait_until_done(api, project.id)
    assert report["status"] == "ready", report["error"]
    assert report["done"] is True
    stored = services.projects().get(project.id)
    assert stored.db_project_ref and stored.db_public_key and stored.db_privileged_key.startswith("v1.")
    assert stored.repo_host_repo.endswith("/svc-" + stored.slug)
    assert stored.repo_host_branch == "main"
    assert stored.last_pushed_sha == stored.extra["template_commit_sha"]
    assert stored.static_site_id and stored.live_url

    # The repository: the initial commit, then exactly one template commit with the whole tree.
    token = services.connections().token(merchant["user"].id, "repo_host").access_token
    sandbox = env["sandbox"].url
    clone = tmp_path / "repo"
    git(
        "clone",
        "-q",
        f"{sandbox.replace('http://', f'http://x-access-token:{token}@')}/github/git/{stored.repo_host_repo}.git",
        str(clone),
    )
    log = git("-C", str(clone), "log", "--format=%H%x00%B%x00").split("\x00\n")
    commits = [c for c in log if c.strip()]
    assert len(commits) == 2
    sha, message = commits[0].split("\x00")[:2]
    assert sha == stored.last_pushed_sha
    assert message.startswith(f"{TEMPLATE_SUBJECT}\n\n{TEMPLATE_BODY}")
    assert (clone / "template.yaml").is_file() and (clone / "migrations" / "0001_core.sql").is_file()
    catalogue = clone / "shared" / "svc_backoffice" / "core" / "texts" / "en.json"
    assert catalogue.is_file()  # the message catalogue

    # The database: every backoffice migration applied once.
    details = httpx.get(f"{sandbox}/__admin/supabase/projects/{stored.db_project_ref}").json()
    with psycopg.connect(details["database_url"]) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
        assert versions[:5] == ["0001", "0002", "0003", "0004", "0005"]
        assert conn.execute("SELECT to_regclass('public.products') IS NOT NULL").fetchone()[0]

    # The site: linked to the repository, environment set, a deploy that becomes ready.
    from svc_shared.providers.static_host import StaticHost

    host = StaticHost(
        env["STATIC_HOST_API_URL"],
        services.connections().token(merchant["user"].id, "static_host").access_token,
    )
    site = host.find_site(f"svc-{stored.slug}")
    assert site is not None and site.repo_path == stored.repo_host_repo
    variables = host.env(site.account_id, site.id)
    assert variables["SUPABASE_URL"] == f"https://{stored.db_project_ref}.supabase.co"
    assert variables["SUPABASE_ANON_KEY"] == stored.db_public_key

    # Where the shop's backoffice is: hosted by the platform, on the shop's database through the pooler.
    backoffice_url = f"http://127.0.0.1:3000/shops/{project.id}"
    assert stored.extra["backoffice_url"] == backoffice_url
    assert variables["BACKOFFICE_API_URL"] == backoffice_url
    assert variables["SVC_PROJECT_ID"] == project.id  # the storefront's beacon names the shop
    server = psycopg.conninfo.conninfo_to_dict(details["database_url"])
    assert (
        stored.extra["db_pooler_host"],
        stored.extra["db_pooler_port"],
        stored.extra["db_pooler_user"],
        stored.extra["db_pooler_database"],
    ) == (server["host"], int(server.get("port", 5432)), server["dbname"], server["dbname"])  # its own role
    site_database = psycopg.conninfo.conninfo_to_dict(variables["DATABASE_URL"])
    assert (site_database["host"], site_database["dbname"]) == (server["host"], server["dbname"])
    assert "supabase.co" not in variables["DATABASE_URL"]
    with psycopg.connect(variables["DATABASE_URL"], connect_timeout=5) as conn:
        assert conn.execute("SELECT to_regclass('public.products') IS NOT NULL").fetchone()[0]

    # Publishing again does nothing more.
    assert provision(api, project.id).json()["stage"] == "ready"

    # An operator starting the state machine by hand on a published project: it succeeds and stays ready.
    sfn = services.current().aws.client("stepfunctions")
    execution = sfn.start_execution(
        stateMachineArn=get_settings().publish_state_machine_arn, input=json.dumps({"projectId": project.id})
    )["executionArn"]
    deadline = time.monotonic() + 30
    while (
        sfn.describe_execution(executionArn=execution)["status"] == "RUNNING" and time.monotonic() < deadline
    ):
        time.sleep(0.2)
    assert sfn.describe_execution(executionArn=execution)["status"] == "SUCCEEDED"
    after = provision(api, project.id, "status").json()
    assert (after["stage"], after["status"], after["done"]) == ("ready", "ready", True)
    assert after["live_url"] == stored.live_url


def test_free_plan_gets_402_upgrade_required(merchant):
    services.accounts().set_plan(merchant["user"].id, "free")
    answer = provision(merchant["api"], merchant["project"].id)
    assert answer.status == 402
    body = answer.json()
    assert body["error"] == "UPGRADE_REQUIRED"
    assert "payant" in body["message"]


def test_only_the_owner_can_provision(merchant):
    services.accounts().create_user(email="other@example.com", password="other-password-1", plan="paid")
    api = merchant["api"]
    api.post("/logout")
    api.post("/login", form={"email": "other@example.com", "password": "other-password-1"})
    assert provision(api, merchant["project"].id).status == 404


def test_no_organization_stops_at_db_creating_with_the_message(merchant):
    sandbox = merchant["env"]["sandbox"].url
    api = merchant["api"]
    httpx.post(
        f"{sandbox}/__admin/oauth/next",
        json={"provider": "supabase", "decision": "approve", "account": "no-orgs"},
    )
    connect(api, "db_host")
    provision(api, merchant["project"].id)
    report = wait_until_done(api, merchant["project"].id)
    assert report["status"] == "failed"
    assert report["stage"] == "db_creating"
    assert report["error"] == "Merchant Supabase account has no organization."
