"""Reliability of the publish sequence: for every stage a provider failure (5xx, dropped connection) or a
crash between a provider call and the record write, then the run goes on or is resumed. After every
scenario: one db project, migrations applied once, one repository, one template commit, one site, ready.
Results are recorded in docs/publish-reliability.md."""

from __future__ import annotations

import json
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import httpx
import psycopg
import pytest

from apiclient import connected_project
from svc_shared.core.catalogue import say
from svc_shared.domain.publish_state import (
    LEASE_SECONDS,
    RATE_LIMIT_BUDGET_SECONDS,
    READY_BUDGET_SECONDS,
    TEMPLATE_SUBJECT,
)
from svc_shared.wiring import services

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def merchant(api, provider_env, demo_user):
    sandbox = provider_env["sandbox"].url
    httpx.post(f"{sandbox}/__admin/supabase/settings", json={"project_ready_delay": 0})
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    project = connected_project(api, demo_user, "Handmade candles for cosy homes, warm tone")
    yield {"api": api, "project": project, "user": demo_user, "env": provider_env, "sandbox": sandbox}
    httpx.delete(f"{sandbox}/__admin/faults")
    httpx.post(f"{sandbox}/__admin/supabase/settings", json={"project_ready_delay": 0.3})


def fault(sandbox: str, method: str, path: str, **how) -> None:
    assert httpx.post(
        f"{sandbox}/__admin/faults", json={"method": method, "path": path, **how}
    ).status_code in (200, 201)


def provision(api, project_id: str, action: str = "start") -> dict:
    answer = api.post(f"/api/projects/{project_id}/provision", json_body={"action": action})
    assert answer.status == 200, answer.text
    return answer.json()


def wait_for_end(api, project_id: str, timeout: float = 60.0) -> dict:
    """Status polls (as the workspace page makes them) until the publish is ready or failed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        report = provision(api, project_id, "status")
        if report["status"] in ("ready", "failed"):
            return report
        time.sleep(0.3)
    pytest.fail(f"publish did not finish: {report}")


def run_to_end(api, project_id: str, timeout: float = 90.0) -> dict:
    provision(api, project_id)
    return wait_for_end(api, project_id, timeout)


def assert_published_once(merchant) -> None:
    project = services.projects().get(merchant["project"].id)
    assert project.extra["publish_stage"] == "ready"
    sandbox, user_id = merchant["sandbox"], merchant["user"].id
    name = f"svc-{project.slug}"
    from svc_shared.providers.db_host import DbHost
    from svc_shared.providers.static_host import StaticHost

    db = DbHost(
        merchant["env"]["DB_HOST_API_URL"], services.connections().token(user_id, "db_host").access_token
    )
    assert [p.name for p in db.projects()].count(name) == 1
    details = httpx.get(f"{sandbox}/__admin/supabase/projects/{project.db_project_ref}").json()
    with psycopg.connect(details["database_url"]) as conn:
        rows = conn.execute(
            "SELECT version, count(*) FROM schema_migrations GROUP BY version ORDER BY version"
        ).fetchall()
    assert [v for v, _ in rows][:5] == ["0001", "0002", "0003", "0004", "0005"]
    assert all(n == 1 for _, n in rows)
    repos = httpx.get(f"{sandbox}/__admin/github/repos").json()["repositories"]
    assert [r["full_name"] for r in repos].count(project.repo_host_repo) == 1
    token = services.connections().token(user_id, "repo_host").access_token
    url = f"{sandbox.replace('http://', f'http://x-access-token:{token}@')}/github/git/{project.repo_host_repo}.git"
    with tempfile.TemporaryDirectory() as clone:
        subprocess.run(["git", "clone", "-q", "--bare", url, clone], capture_output=True, check=True)
        history = subprocess.run(
            ["git", "--git-dir", clone, "log", "--format=%s"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
    assert history.count(TEMPLATE_SUBJECT) == 1
    assert len(history) == 2
    host = StaticHost(
        merchant["env"]["STATIC_HOST_API_URL"],
        services.connections().token(user_id, "static_host").access_token,
    )
    assert host.find_site(name) is not None
    assert project.extra["backoffice_url"] == f"http://127.0.0.1:3000/shops/{project.id}"
    assert project.extra["db_pooler_database"] == details["database"]
    sites = httpx.get(
        f"{merchant['env']['STATIC_HOST_API_URL']}/sites",
        params={"filter": "all"},
        headers={
            "Authorization": f"Bearer {services.connections().token(user_id, 'static_host').access_token}"
        },
    ).json()
    assert [s["name"] for s in sites].count(name) == 1


TRANSIENT = [
    ("db_creating 5xx", "POST", "/supabase/v1/projects", {"status": 503}),
    ("db_creating dropped", "POST", "/supabase/v1/projects", {"drop": True}),
    ("db_waiting_ready 5xx", "GET", "/supabase/v1/projects/*", {"status": 502}),
    ("migrations 5xx", "POST", "/supabase/v1/projects/*/database/query", {"status": 500}),
    ("repo create 5xx", "POST", "/github/api/user/repos", {"status": 502}),
    ("repo create dropped", "POST", "/github/api/user/repos", {"drop": True}),
    ("template tree 5xx", "POST", "/github/api/repos/*/*/git/trees", {"status": 500}),
    ("template ref update dropped", "PATCH", "/github/api/repos/*/*/git/refs/heads/*", {"drop": True}),
    ("site create 5xx", "POST", "/netlify/api/v1/sites", {"status": 503}),
    (
        "pooler config 5xx",
        "GET",
        "/supabase/v1/projects/*/config/database/pooler",
        {"status": 503, "times": 4},
    ),
    ("build start dropped", "POST", "/netlify/api/v1/sites/*/builds", {"drop": True}),
]


@pytest.mark.parametrize(("scenario", "method", "path", "how"), TRANSIENT, ids=[t[0] for t in TRANSIENT])
def test_a_transient_provider_failure_is_retried_to_ready(merchant, scenario, method, path, how):
    fault(merchant["sandbox"], method, path, **{"times": 1, **how})
    report = run_to_end(merchant["api"], merchant["project"].id)
    assert report["status"] == "ready", report
    assert_published_once(merchant)


@pytest.mark.parametrize("point", ["db_created", "template_pushed", "site_created"])
def test_a_crash_after_the_provider_call_is_retried_without_duplicates(merchant, monkeypatch, point):
    monkeypatch.setenv("SVC_CRASH_POINTS", point)
    services.wire(clock=services.clock())  # the functions read their settings anew
    report = run_to_end(merchant["api"], merchant["project"].id)
    assert report["status"] == "ready", report
    assert_published_once(merchant)


def test_a_lasting_failure_stops_at_its_stage_and_publishing_again_resumes_there(merchant):
    fault(merchant["sandbox"], "POST", "/github/api/repos/*/*/git/commits", status=500, times=20)
    report = run_to_end(merchant["api"], merchant["project"].id)
    assert report["status"] == "failed"
    assert report["stage"] == "repo_host_pushing_template"
    assert (
        report["error"]
        == "La configuration du dépôt GitHub a échoué. Vérifiez la connexion GitHub puis relancez la publication."
    )
    httpx.delete(f"{merchant['sandbox']}/__admin/faults")
    resumed = run_to_end(merchant["api"], merchant["project"].id)
    assert resumed["status"] == "ready"
    assert_published_once(merchant)


def _executions(app_env, project_id: str) -> list[dict]:
    from svc_shared.wiring import services

    listed = (
        services.current()
        .aws.client("stepfunctions")
        .list_executions(stateMachineArn=app_env["PUBLISH_STATE_MACHINE_ARN"])
    )
    return [e for e in listed["executions"] if e["name"].startswith(project_id)]


def test_a_press_that_finds_a_claimed_attempt_adds_no_execution(merchant, app_env):
    """Two presses, stepped by hand: the first has claimed attempt 1 and started its run, but not yet recorded
    it, when the second reads the project. The second ends with the same single run, and records it."""
    api, project = merchant["api"], merchant["project"]
    services.projects().update(project, {"publish_attempt": 1, "publish_status": "starting"})
    first = (
        services.current()
        .aws.client("stepfunctions")
        .start_execution(
            stateMachineArn=app_env["PUBLISH_STATE_MACHINE_ARN"],
            name=f"{project.id}-1",
            input=json.dumps({"projectId": project.id}),
        )
    )
    provision(api, project.id)
    assert [e["executionArn"] for e in _executions(app_env, project.id)] == [first["executionArn"]]
    recorded = services.projects().get(project.id, consistent=True).extra["publish_execution_arn"]
    assert recorded == first["executionArn"]
    assert run_to_end(api, project.id)["status"] == "ready"
    assert len(_executions(app_env, project.id)) == 1
    assert_published_once(merchant)


def test_a_claim_whose_run_never_started_is_started_by_the_next_press(merchant, app_env):
    """The press that claimed attempt 1 died before starting its run: the next press starts that attempt."""
    api, project = merchant["api"], merchant["project"]
    services.projects().update(project, {"publish_attempt": 1, "publish_status": "starting"})
    provision(api, project.id)
    assert [e["name"] for e in _executions(app_env, project.id)] == [f"{project.id}-1"]
    assert run_to_end(api, project.id)["status"] == "ready"
    assert len(_executions(app_env, project.id)) == 1
    assert_published_once(merchant)


def test_two_provision_calls_at_the_same_moment_start_one_execution(merchant, app_env):
    api, project = merchant["api"], merchant["project"]
    answers = []
    barrier = threading.Barrier(2)

    def press():
        barrier.wait()
        answers.append(api.post(f"/api/projects/{project.id}/provision", json_body={}).status)

    threads = [threading.Thread(target=press) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [200, 200]
    assert len(_executions(app_env, project.id)) == 1
    assert run_to_end(api, project.id)["status"] == "ready"
    assert_published_once(merchant)


# -- never stuck: a run that is gone is recorded, and the next press starts a new one ----------------------


def emf_lines(captured: str) -> list[dict]:
    """The embedded-metric-format lines a run printed (what CloudWatch Logs turns into metrics)."""
    return [json.loads(line) for line in captured.splitlines() if line.startswith('{"_aws"')]


def _runs(arn: str, project_id: str, *, settle: float = 10.0) -> list[tuple[str, str]]:
    """The project's executions and their statuses, once none is RUNNING (an execution finishes a moment
    after its last step recorded the outcome on the project) or `settle` seconds have passed."""
    client = services.current().aws.client("stepfunctions")
    deadline = time.monotonic() + settle
    while True:
        listed = client.list_executions(stateMachineArn=arn)["executions"]
        runs = sorted((e["name"], e["status"]) for e in listed if e["name"].startswith(project_id))
        if all(status != "RUNNING" for _, status in runs) or time.monotonic() > deadline:
            return runs
        time.sleep(0.1)


def test_a_run_stopped_at_its_first_step_says_why_and_the_next_press_starts_a_new_run(
    clock, merchant, app_env, capsys
):
    """A run that stopped without letting go still holds the project (an operator's run whose last step
    could not record): the press's run stops at its first step. The project says so in words, and once the
    hold has lapsed the next press starts a new execution, which publishes."""
    api, project = merchant["api"], merchant["project"]
    machine = app_env["PUBLISH_STATE_MACHINE_ARN"]
    holder = f"{machine.replace(':stateMachine:', ':execution:')}:{project.id}-by-hand"
    services.projects().update(
        project, {"publish_lease": holder, "publish_lease_until": int(clock.now()) + LEASE_SECONDS}
    )
    assert provision(api, project.id)["status"] == "starting"
    stopped = wait_for_end(api, project.id)
    assert (stopped["status"], stopped["stage"], stopped["success"]) == ("failed", "db_creating", False)
    assert stopped["error"] == say("publishing.busy_at_start")
    assert _runs(machine, project.id) == [(f"{project.id}-1", "FAILED")]
    page = api.get(f"/workspace/projects/{project.id}")
    assert "Publish failed" in page.text and "Another publish run still holds this project" in page.text
    failed = [m for m in emf_lines(capsys.readouterr().out) if "PublishFailed" in m]
    assert [(m["stage"], m["PublishFailed"]) for m in failed] == [("db_creating", [1.0])]

    clock.advance(LEASE_SECONDS + 1)  # the stale hold lapses
    resumed = run_to_end(api, project.id)
    assert resumed["status"] == "ready", resumed
    assert _runs(machine, project.id) == [(f"{project.id}-1", "FAILED"), (f"{project.id}-2", "SUCCEEDED")]
    assert_published_once(merchant)
    lines = emf_lines(capsys.readouterr().out)
    steps = [m["stage"] for m in lines if "PublishStepDuration" in m]
    assert steps[0] == "db_creating" and steps[-1] == "host_triggering_build"
    assert {"db_applying_migrations", "repo_host_creating_repo", "repo_host_pushing_template"} <= set(steps)
    assert [m["stage"] for m in lines if "PublishSucceeded" in m] == ["host_triggering_build"]
    assert all(m["env"] == "dev" and m["service"] == "svc" for m in lines)


def test_a_run_whose_task_function_is_unreachable_is_recorded_and_the_next_press_starts_a_new_run(
    merchant, app_env, monkeypatch
):
    """The state machine cannot reach its task function at all (deleted, or not permitted): nothing in the
    run can record anything. The status poll finds the run ended and records it; the next press (the
    function reachable again) starts a new execution."""
    api, project = merchant["api"], merchant["project"]
    machine = app_env["PUBLISH_STATE_MACHINE_ARN"]
    sfn = services.current().aws.client("stepfunctions")
    definition = sfn.describe_state_machine(stateMachineArn=machine)["definition"]
    function_arn = json.loads(definition)["States"]["ReadStage"]["Parameters"]["FunctionName"]
    gone = function_arn.rsplit(":", 1)[0] + ":svc-dev-deleted-publish-steps"
    broken = sfn.create_state_machine(
        name=f"svc-dev-publish-unreachable-{project.id}",
        definition=definition.replace(function_arn, gone),
        roleArn=f"arn:aws:iam::{machine.split(':')[4]}:role/PublishStateMachineRole",
    )["stateMachineArn"]
    monkeypatch.setenv("PUBLISH_STATE_MACHINE_ARN", broken)
    services.wire(clock=services.clock())
    provision(api, project.id)
    stopped = wait_for_end(api, project.id)
    assert (stopped["status"], stopped["stage"]) == ("failed", "db_creating")
    assert stopped["error"].startswith("Publishing stopped before its first step (")
    assert stopped["error"].endswith("Press Publish again; if it keeps failing, contact support.")
    assert _runs(broken, project.id) == [(f"{project.id}-1", "FAILED")]

    monkeypatch.setenv("PUBLISH_STATE_MACHINE_ARN", machine)
    services.wire(clock=services.clock())
    assert run_to_end(api, project.id)["status"] == "ready"
    assert _runs(machine, project.id) == [(f"{project.id}-2", "SUCCEEDED")]
    assert_published_once(merchant)


def test_a_refused_launch_is_recorded_and_the_next_press_starts_a_new_run(merchant, app_env, monkeypatch):
    """Step Functions refuses to start the run (here: no such state machine, as after a failed deploy)."""
    api, project = merchant["api"], merchant["project"]
    machine = app_env["PUBLISH_STATE_MACHINE_ARN"]
    monkeypatch.setenv("PUBLISH_STATE_MACHINE_ARN", machine + "-missing")
    services.wire(clock=services.clock())
    refused = provision(api, project.id)
    assert (refused["status"], refused["stage"], refused["success"]) == ("failed", "db_creating", False)
    assert refused["error"] == (
        "Publishing could not start: the publish service refused the run (StateMachineDoesNotExist). "
        "Press Publish again."
    )
    assert provision(api, project.id, "status")["error"] == refused["error"]

    monkeypatch.setenv("PUBLISH_STATE_MACHINE_ARN", machine)
    services.wire(clock=services.clock())
    assert run_to_end(api, project.id)["status"] == "ready"
    assert _runs(machine, project.id) == [(f"{project.id}-2", "SUCCEEDED")]
    assert_published_once(merchant)


def test_a_resume_after_the_readiness_timeout_gets_ten_minutes_of_polls_again(clock, merchant):
    api, project, sandbox = merchant["api"], merchant["project"], merchant["sandbox"]
    httpx.post(f"{sandbox}/__admin/supabase/settings", json={"project_ready_delay": 3600})

    def record() -> dict:
        return services.projects().get(project.id, consistent=True).extra

    def wait_until(check, what: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not check(record()):
            if time.monotonic() > deadline:
                pytest.fail(f"{what}: {record()}")
            time.sleep(0.2)

    provision(api, project.id)
    wait_until(lambda r: r.get("publish_ready_deadline"), "the first run never polled")
    clock.advance(READY_BUDGET_SECONDS)  # ten minutes pass and the project is still coming up
    timed_out = wait_for_end(api, project.id)
    assert (timed_out["status"], timed_out["stage"], timed_out["error"]) == (
        "failed",
        "db_waiting_ready",
        say("publishing.db_not_ready"),
    )

    first_run = record()["publish_execution"]
    provision(api, project.id)  # the merchant presses Retry: the run resumes at db_waiting_ready
    wait_until(
        lambda r: r.get("publish_execution") != first_run and r.get("publish_ready_deadline"),
        "the resumed run never polled",
    )
    assert int(record()["publish_ready_deadline"]) == int(clock.now()) + READY_BUDGET_SECONDS
    clock.advance(READY_BUDGET_SECONDS - 30)  # nearly ten minutes later it still polls
    time.sleep(5)  # more than one 4 s wait: at least one poll on the moved clock
    still = provision(api, project.id, "status")
    assert (still["status"], still["stage"], still["error"]) == ("running", "db_waiting_ready", None)

    httpx.post(f"{sandbox}/__admin/supabase/settings", json={"project_ready_delay": 0})
    assert wait_for_end(api, project.id)["status"] == "ready"
    assert_published_once(merchant)


def test_a_run_that_stops_unrecorded_mid_way_is_recorded_once_its_lease_lapses(
    clock, merchant, app_env, monkeypatch
):
    """The run read the project (it is `running`), then lost its task function: its steps and its failure
    record cannot run. While its lease holds, the project keeps saying running; once the lease has lapsed
    the status poll finds the execution ended and records it, and the next press resumes at the stage."""
    api, project = merchant["api"], merchant["project"]
    machine = app_env["PUBLISH_STATE_MACHINE_ARN"]
    sfn = services.current().aws.client("stepfunctions")
    definition = json.loads(sfn.describe_state_machine(stateMachineArn=machine)["definition"])
    for name, state in definition["States"].items():
        parameters = state.get("Parameters") or {}
        if name != "ReadStage" and "FunctionName" in parameters:
            parameters["FunctionName"] = parameters["FunctionName"].rsplit(":", 1)[0] + ":svc-dev-deleted"
    broken = sfn.create_state_machine(
        name=f"svc-dev-publish-half-{project.id}",
        definition=json.dumps(definition),
        roleArn=f"arn:aws:iam::{machine.split(':')[4]}:role/PublishStateMachineRole",
    )["stateMachineArn"]
    monkeypatch.setenv("PUBLISH_STATE_MACHINE_ARN", broken)
    services.wire(clock=services.clock())
    provision(api, project.id)
    deadline = time.monotonic() + 30
    while _runs(broken, project.id) != [(f"{project.id}-1", "FAILED")]:
        assert time.monotonic() < deadline, _runs(broken, project.id)
        time.sleep(0.3)
    assert provision(api, project.id, "status")["status"] == "running"  # its lease still holds

    clock.advance(LEASE_SECONDS + 1)
    stopped = provision(api, project.id, "status")
    assert (stopped["status"], stopped["stage"]) == ("failed", "db_creating")
    assert stopped["error"].startswith("Publishing stopped at this stage without recording why (")

    monkeypatch.setenv("PUBLISH_STATE_MACHINE_ARN", machine)
    services.wire(clock=services.clock())
    assert run_to_end(api, project.id)["status"] == "ready"
    assert _runs(machine, project.id) == [(f"{project.id}-2", "SUCCEEDED")]
    assert_published_once(merchant)


# -- provider rate limits are waited out, within a bound ------------------------------------------------------


def _history(merchant, project) -> list[str]:
    token = services.connections().token(merchant["user"].id, "repo_host").access_token
    sandbox = merchant["sandbox"]
    url = f"{sandbox.replace('http://', f'http://x-access-token:{token}@')}/github/git/{project.repo_host_repo}.git"
    with tempfile.TemporaryDirectory() as clone:
        subprocess.run(["git", "clone", "-q", "--bare", url, clone], capture_output=True, check=True)
        return subprocess.run(
            ["git", "--git-dir", clone, "log", "--format=%s"], capture_output=True, text=True, check=True
        ).stdout.splitlines()


@pytest.fixture
def tight_supabase_limit(merchant):
    """The db_host sandbox's per-token limit made tight and short: 5 requests per 3 s (the real API: about
    60 a minute), so a publish meets 429s with a Retry-After of a few seconds."""
    sandbox = merchant["sandbox"]
    httpx.post(
        f"{sandbox}/__admin/supabase/settings", json={"rate_limit_per_minute": 5, "rate_limit_window": 3}
    )
    yield
    httpx.post(
        f"{sandbox}/__admin/supabase/settings", json={"rate_limit_per_minute": 60, "rate_limit_window": 60}
    )


def test_one_merchant_publishing_two_shops_at_once_waits_out_the_db_host_rate_limit(
    merchant, tight_supabase_limit
):
    api, sandbox, user = merchant["api"], merchant["sandbox"], merchant["user"]
    second = services.projects().create(
        owner_id=user.id,
        workspace_id=user.default_workspace_id,
        prompt="Hand-thrown stoneware mugs, calm tone",
    )
    refused_before = httpx.get(f"{sandbox}/__admin/supabase/rate-limited").json()["refused"]
    httpx.delete(f"{sandbox}/__admin/requests")
    for project in (merchant["project"], second):
        provision(api, project.id)
    reports = [wait_for_end(api, p.id, timeout=150) for p in (merchant["project"], second)]
    assert [r["status"] for r in reports] == ["ready", "ready"], reports
    assert httpx.get(f"{sandbox}/__admin/supabase/rate-limited").json()["refused"] > refused_before
    assert_published_once(merchant)
    # The migration step spends two SQL requests per shop: the record table and what is applied, then every
    # pending migration in one script (a retry after a 429 asks again only for what is left). Requests refused
    # with a 429 count too, and how many there are depends on timing: the bound is what one request per
    # migration would cost without any refusal.
    counts = httpx.get(f"{sandbox}/__admin/requests", params={"prefix": "/supabase/v1/projects"}).json()[
        "counts"
    ]
    queries = sum(n for key, n in counts.items() if key.endswith("/database/query"))
    migrations = len(list((ROOT / "backoffice" / "migrations").glob("*.sql")))
    assert queries < 2 * (2 + migrations), counts
    stored = services.projects().get(second.id, consistent=True)
    details = httpx.get(f"{sandbox}/__admin/supabase/projects/{stored.db_project_ref}").json()
    with psycopg.connect(details["database_url"]) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions[:5] == ["0001", "0002", "0003", "0004", "0005"] and len(versions) == len(set(versions))
    assert _history(merchant, stored).count(TEMPLATE_SUBJECT) == 1


def test_a_rate_limit_that_outlasts_the_bound_fails_at_its_stage_and_a_resume_goes_on(clock, merchant):
    api, project, sandbox = merchant["api"], merchant["project"], merchant["sandbox"]
    fault(sandbox, "GET", "/supabase/v1/projects/*", status=429, retry_after=1)

    def limited_since() -> object:
        return services.projects().get(project.id, consistent=True).extra.get("publish_limited_since")

    provision(api, project.id)
    deadline = time.monotonic() + 30
    while limited_since() is None:
        assert time.monotonic() < deadline, "the run never met the rate limit"
        time.sleep(0.2)
    time.sleep(3)  # a few 1 s waits: still running, not failed
    running = provision(api, project.id, "status")
    assert (running["status"], running["stage"]) == ("running", "db_waiting_ready")
    clock.advance(RATE_LIMIT_BUDGET_SECONDS)  # limited for five minutes in a row
    stopped = wait_for_end(api, project.id)
    assert (stopped["status"], stopped["stage"], stopped["error"]) == (
        "failed",
        "db_waiting_ready",
        "Supabase is limiting requests right now. Try again in a minute.",
    )
    httpx.delete(f"{sandbox}/__admin/faults")
    assert run_to_end(api, project.id)["status"] == "ready"
    assert_published_once(merchant)


def test_a_template_commit_already_recorded_is_not_pushed_again(merchant):
    """The spec's `repo_host_pushing_template` with a commit SHA recorded: the push is skipped, even when the
    merchant has committed on top of the template since (the head no longer carries the template's subject)."""
    api, project = merchant["api"], merchant["project"]
    assert run_to_end(api, project.id)["status"] == "ready"
    published = services.projects().get(project.id, consistent=True)
    template_sha = published.extra["template_commit_sha"]
    pushed = api.post(
        "/api/repo-host/push",
        json_body={"projectId": project.id, "files": [{"path": "NOTES.md", "content": "my own notes\n"}]},
    )
    assert pushed.status == 200, pushed.text
    services.projects().update(
        published, {"publish_stage": "repo_host_pushing_template", "publish_status": "failed"}
    )
    assert run_to_end(api, project.id)["status"] == "ready"
    history = _history(merchant, published)
    assert history.count(TEMPLATE_SUBJECT) == 1
    assert history[0] != TEMPLATE_SUBJECT and len(history) == 3  # the merchant's commit stays the head
    assert services.projects().get(project.id).extra["template_commit_sha"] == template_sha
