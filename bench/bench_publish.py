"""The publish path against the provider sandbox: the template push (one commit through
RepoHost.commit_files, requests counted by the sandbox) and one whole happy-path publish through the provision
route and the real state machine (statemachines/publish.asl.json executed by moto in embedded AWS)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from bench.harness import Context, Result, Target, benchmark, median, ms

PUSH_RUNS = 5
QUICK_PUSH_RUNS = 1
SYNTHETIC_FILES = 592  # the spec's generated template size
EXPECTED_PUSH_REQUESTS = 4  # head, tree, commit, ref
REPO_PREFIX = "/github/api"
REDIRECT = "http://127.0.0.1:9/callback/github"

# The sandbox's db_host project becomes ACTIVE this long after it is created; the state machine checks it
# right after creating it, then every 4 s (WaitForDatabase), so 2 s means one wait on a normal run.
PROJECT_READY_DELAY = 2.0
POLL_INTERVAL = 0.1
PUBLISH_TIMEOUT = 90.0


def _close_provider_clients() -> None:
    with contextlib.suppress(ImportError):
        from svc_shared.wiring import services

        services.current().http.close()


@contextlib.contextmanager
def _repo_host_sandbox() -> Iterator[tuple[Any, Any]]:
    """The sandbox (in memory) and a RepoHost adapter with a token from the sandbox's OAuth app flow."""
    import httpx

    from svc_local.providers import SandboxCredentials, base_urls, build_providers
    from svc_local.sandbox import Sandbox
    from svc_shared.providers.repo_host import RepoHost, RepoHostOAuth

    creds = SandboxCredentials.generate()
    with Sandbox("127.0.0.1", 0, build_providers(None, creds, rate_limit_per_minute=None), quiet=True) as box:
        try:
            urls = base_urls(box.url)
            oauth = RepoHostOAuth(urls["REPO_HOST_OAUTH_URL"])
            url = oauth.authorize_url(
                client_id=creds.repo_host_client_id, redirect_uri=REDIRECT, state="bench"
            )
            code = httpx.URL(httpx.get(url).headers["location"]).params["code"]
            token = oauth.exchange(
                client_id=creds.repo_host_client_id,
                client_secret=creds.repo_host_client_secret,
                code=code,
                redirect_uri=REDIRECT,
            )["access_token"]
            yield box, RepoHost(urls["REPO_HOST_API_URL"], token)
        finally:
            _close_provider_clients()


def _synthetic_tree(count: int) -> dict[str, bytes]:
    return {f"src/part{i % 9}/file{i}.txt": f"line {i}\n".encode() for i in range(count)}


@benchmark("template-push", "Template push: one commit through RepoHost.commit_files, requests and wall time")
def template_push(ctx: Context) -> Result:
    import httpx

    from svc_shared.domain.publish_state import TEMPLATE_BODY, TEMPLATE_SUBJECT
    from svc_shared.domain.publish_template import template_files, template_root
    from svc_shared.providers.repo_host import is_text

    runs = QUICK_PUSH_RUNS if ctx.quick else ctx.option("runs", PUSH_RUNS)
    trees = {
        f"backoffice tree ({template_root().relative_to(ctx.root) if template_root().is_relative_to(ctx.root) else template_root()})": template_files(
            template_root()
        ),
        f"{SYNTHETIC_FILES} synthetic small text files": _synthetic_tree(SYNTHETIC_FILES),
    }
    result = Result(
        columns=[
            "tree",
            "files",
            "bytes",
            "binary files",
            "runs",
            "repo_host requests",
            "by route",
            "wall median ms",
            "wall min ms",
            "wall max ms",
            "target: 4 requests",
        ],
    )
    with _repo_host_sandbox() as (box, github):
        admin = f"{box.url}/__admin/requests"
        for label, files in trees.items():
            counts: list[int] = []
            walls: list[float] = []
            routes: dict[str, int] = {}
            for run in range(runs):
                repo = github.create_repo(f"bench-push-{len(result.rows)}-{run}", description="bench")
                httpx.delete(admin).raise_for_status()
                started = time.perf_counter()
                sha = github.commit_files(
                    repo.owner, repo.name, "main", files, f"{TEMPLATE_SUBJECT}\n\n{TEMPLATE_BODY}"
                )
                walls.append(time.perf_counter() - started)
                answer = httpx.get(admin, params={"prefix": REPO_PREFIX}).json()
                counts.append(int(answer["total"]))
                routes = answer["counts"]
                if github.commit(repo.owner, repo.name, "main").sha != sha:
                    raise RuntimeError(f"{label}: the branch head is not the pushed commit")
            binary = sum(1 for content in files.values() if not is_text(content))
            met = all(c == EXPECTED_PUSH_REQUESTS for c in counts)
            result.targets.append(
                Target(
                    f"repo_host requests per push: {label}, {len(files)} files",
                    f"{EXPECTED_PUSH_REQUESTS} whatever the size",
                    f"{', '.join(sorted({str(c) for c in counts}))} ({runs} pushes)",
                    met,
                )
            )
            result.rows.append(
                [
                    label,
                    str(len(files)),
                    str(sum(len(c) for c in files.values())),
                    str(binary),
                    str(runs),
                    ", ".join(sorted({str(c) for c in counts})),
                    "; ".join(f"{route.replace(REPO_PREFIX, '')} x{n}" for route, n in routes.items()),
                    ms(median(walls)),
                    ms(min(walls)),
                    ms(max(walls)),
                    "met" if met else "**not met**",
                ]
            )
            if not met:
                result.status = "failed"
    result.notes += [
        "RepoHost.commit_files(owner, repo, 'main', files, message) without `parent`, as one commit on a "
        "fresh sandbox repository (auto-initialised, created outside the timing) each run: GET the branch "
        "head, POST one tree with every text file inline, POST the commit, PATCH the ref. Binary files would "
        "each add a POST .../git/blobs.",
        f"Requests: the sandbox's per-route counters (`GET /__admin/requests?prefix={REPO_PREFIX}`, reset "
        "with DELETE before each push); the count must be 4 whatever the tree size. The push is checked by "
        "reading the branch head back.",
        "Wall: perf_counter around commit_files; the sandbox (GitHub-shaped; it writes the git objects as "
        "loose objects on disk under a temp dir, in Python) runs on a loopback HTTP server in this process, so "
        "its work on the tree is in the figure; against GitHub the network round trips dominate.",
        "Real tree: svc_shared.domain.publish_template.template_files(template_root()), exactly what PushTemplate sends.",
    ]
    return result


# ---------------------------------------------------------------- publish-run


def _connect(api: Any, provider: str) -> None:
    """The platform's OAuth connect flow for a provider, consent given by the sandbox's provider page."""
    import httpx

    url = api.get("/api/oauth/initiate", params={"provider": provider}).json()["url"]
    params = dict(httpx.URL(httpx.get(url).headers["location"]).params)
    answer = api.get("/api/oauth/callback", params=params)
    if answer.status != 200:
        raise RuntimeError(f"connecting {provider}: HTTP {answer.status}: {answer.text[:300]}")


def _history(sfn: Any, arn: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    token = None
    while True:
        kwargs: dict[str, Any] = {"executionArn": arn, "maxResults": 1000}
        if token:
            kwargs["nextToken"] = token
        page = sfn.get_execution_history(**kwargs)
        events += page["events"]
        token = page.get("nextToken")
        if not token:
            return events


@benchmark(
    "publish-run", "One happy-path publish: state transitions and wall time without the readiness waits"
)
def publish_run(ctx: Context) -> Result:
    from bench.bench_stack import DEMO_EMAIL, DEMO_PASSWORD, platform

    with platform(ctx.root, with_sandbox=True, project_ready_delay=PROJECT_READY_DELAY) as stack:
        from svc_shared.wiring import services

        api = stack.api
        login = api.post("/login", form={"email": DEMO_EMAIL, "password": DEMO_PASSWORD})
        if login.status != 303:
            raise RuntimeError(f"sign-in: HTTP {login.status}")
        for provider in ("repo_host", "db_host", "static_host"):
            _connect(api, provider)
        project = services.projects().create(
            owner_id=stack.user.id,
            workspace_id=stack.user.default_workspace_id,
            prompt="Handmade candles for cosy homes, warm tone",
            name="Bench Candle Shop",
        )
        path = f"/api/projects/{project.id}/provision"

        started = time.perf_counter()
        first = api.post(path, json_body={"action": "start"})
        if first.status != 200:
            raise RuntimeError(f"provision start: HTTP {first.status}: {first.text[:300]}")
        stages = [first.json()["stage"]]
        report: dict[str, Any] = first.json()
        deadline = time.monotonic() + PUBLISH_TIMEOUT
        while report["status"] not in ("ready", "failed"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"publish did not finish in {PUBLISH_TIMEOUT} s: stages {stages}")
            time.sleep(POLL_INTERVAL)
            report = api.post(path, json_body={"action": "status"}).json()
            if report["stage"] != stages[-1]:
                stages.append(report["stage"])
        route_wall = time.perf_counter() - started
        if report["status"] != "ready":
            raise RuntimeError(f"publish failed at {report['stage']}: {report.get('error')}")

        stored = services.projects().get(project.id)
        arn = stored.extra["publish_execution_arn"]
        sfn = services.current().aws.client("stepfunctions")
        described = sfn.describe_execution(executionArn=arn)
        executions = sfn.list_executions(stateMachineArn=described["stateMachineArn"])
        events = _history(sfn, arn)

    entered = [e for e in events if e["type"].endswith("StateEntered")]
    by_type: dict[str, int] = {}
    for event in entered:
        by_type[event["type"]] = by_type.get(event["type"], 0) + 1
    by_state: dict[str, int] = {}
    for event in entered:
        name = event["stateEnteredEventDetails"]["name"]
        by_state[name] = by_state.get(name, 0) + 1
    scheduled = sum(1 for e in events if e["type"] in ("LambdaFunctionScheduled", "TaskScheduled"))
    task_states = by_type.get("TaskStateEntered", 0)
    task_names = {e["stateEnteredEventDetails"]["name"] for e in entered if e["type"] == "TaskStateEntered"}
    waits: list[float] = []
    pending: Any = None
    for event in events:
        if event["type"] == "WaitStateEntered":
            pending = event["timestamp"]
        elif event["type"] == "WaitStateExited" and pending is not None:
            waits.append((event["timestamp"] - pending).total_seconds())
            pending = None
    spans: list[tuple[str, float]] = []  # (state, seconds from StateEntered to its StateExited)
    opened: tuple[str, Any] | None = None
    for event in events:
        if event["type"].endswith("StateEntered"):
            opened = (event["stateEnteredEventDetails"]["name"], event["timestamp"])
        elif event["type"].endswith("StateExited") and opened is not None:
            spans.append((opened[0], (event["timestamp"] - opened[1]).total_seconds()))
            opened = None
    execution_wall = (events[-1]["timestamp"] - events[0]["timestamp"]).total_seconds()
    total_wait = sum(waits)
    result = Result(
        targets=[
            Target(
                "a publish reaches `ready` through one execution",
                "1 execution, SUCCEEDED",
                f"{len(executions['executions'])} execution, {described['status']}; stages {len(stages)}",
                len(executions["executions"]) == 1 and described["status"] == "SUCCEEDED",
            ),
            Target(
                "no Task retried on the happy path (Lambda invocations per Task state entered)",
                f"{task_states} for {task_states}",
                f"{scheduled} for {task_states}",
                scheduled == task_states,
            ),
        ],
        columns=["measure", "value"],
        rows=[
            ["state transitions (StateEntered events)", str(len(entered))],
            [
                "  by state type",
                ", ".join(f"{k.removesuffix('StateEntered')} {v}" for k, v in sorted(by_type.items())),
            ],
            ["  by state", ", ".join(f"{k} {v}" for k, v in by_state.items())],
            ["Lambda task invocations (retries included)", f"{scheduled} for {task_states} Task states"],
            [
                "4 s readiness waits (WaitForDatabase)",
                f"{len(waits)}: " + ", ".join(f"{w:.2f} s" for w in waits),
            ],
            ["execution wall (history: first to last event)", f"{execution_wall * 1000:.0f} ms"],
            ["execution wall minus the waits", f"{(execution_wall - total_wait) * 1000:.0f} ms"],
            ["route wall (POST start to the status poll seeing ready)", f"{route_wall * 1000:.0f} ms"],
            ["route wall minus the waits", f"{(route_wall - total_wait) * 1000:.0f} ms"],
            [
                "Task states, entered to exited",
                ", ".join(f"{name} {sec * 1000:.0f} ms" for name, sec in spans if name in task_names),
            ],
            ["history events in all", str(len(events))],
            ["stages seen by the poll", " > ".join(stages)],
        ],
    )
    result.notes += [
        "One publish of a fresh project through `POST /api/projects/{id}/provision` {action: start} (the "
        "provision handler in-process, with the session of a paid user whose repo_host, db_host and "
        "static_host accounts were connected through the platform's OAuth routes and the sandbox), then "
        f"{{action: status}} every {POLL_INTERVAL} s until ready. The route starts the real state machine "
        "(statemachines/publish.asl.json) in embedded AWS; moto executes it and invokes PublishStepsFunction "
        "in-process; the stages run against the provider sandbox (db_host databases on the machine's "
        "PostgreSQL, dropped afterwards).",
        "State transitions: the events of `stepfunctions.get_execution_history` whose type ends in "
        "`StateEntered` (Task, Choice, Wait, Succeed, ...): Step Functions Standard bills one transition per "
        "state entered. A retried Task would bill more; the Lambda invocation count above shows whether any "
        f"retry happened. Executions of the state machine in the run: {len(executions['executions'])}; "
        f"status {described['status']}.",
        f"Readiness waits: the sandbox's project_ready_delay is {PROJECT_READY_DELAY} s (the project is "
        "checked right after it is created, not ready, so the 4 s WaitForDatabase runs at least once). Each "
        "wait's duration is WaitStateExited minus WaitStateEntered in the history, and their sum is "
        "subtracted from the wall times.",
        "Execution wall uses moto's history timestamps (first event = ExecutionStarted, last = "
        "ExecutionSucceeded); route wall is perf_counter from the start POST to the first status poll that "
        f"reports ready (so up to {POLL_INTERVAL * 1000:.0f} ms of polling granularity). Both include moto's "
        "own scheduling between states; the site build is started, not awaited (the sandbox's simulated "
        "build delay is not in the figures). Embedded AWS, the sandbox, PostgreSQL and the functions share "
        "the 2 cores with this process; every Lambda invocation is warm after the first of each function "
        "(in-process handlers), so this is not the Lambda cold-start picture. The first Task (ReadStage) "
        "includes importing PublishStepsFunction's handler module in this process.",
    ]
    return result
