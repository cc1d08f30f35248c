"""The publish sequence, one idempotent step per stage, driven by the Step Functions state machine
(statemachines/publish.asl.json). The stage recorded on the project is the source of truth: any execution
starts by reading it and resumes there. Every step runs under a per-project lease held by one execution, and
advances the stage with a write conditional on the stage it found, so two executions never run a stage twice.

Recovery after a crash between a provider call and the record write:
- db_creating: the project name `svc-{slug}` is looked up before creating, so a retry reuses it;
- migrations are recorded inside the merchant database (schema_migrations), so a retry applies only the rest;
- the repository name is deterministic and a taken name (422) is reused;
- the template commit is recognised on the branch head by its subject, so it is never pushed twice;
- the site is looked up by name before it is created.
"""

from __future__ import annotations

import importlib.util
import random
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from svc_shared import keys
from svc_shared.clock import Clock
from svc_shared.connections import Connections, ReconnectRequired
from svc_shared.crypto import Envelope
from svc_shared.dal import ConditionFailed, Table, attr
from svc_shared.errors import DomainError, RateLimited, UpstreamError
from svc_shared.logs import get_logger
from svc_shared.names import repo_name
from svc_shared.projects import Project, Projects
from svc_shared.providers.http import ProviderConflict, ProviderError

logger = get_logger()

STAGES = (
    "db_creating",
    "db_waiting_ready",
    "db_applying_migrations",
    "repo_host_creating_repo",
    "repo_host_pushing_template",
    "host_triggering_build",
    "ready",
)
WAITING = "db_waiting_ready_wait"
REGION = "eu-central-1"
# Each run waits up to 10 minutes (polls 4 s apart) for the database project to come up; a run started again
# after that timeout (a resume) gets the whole budget again.
READY_BUDGET_SECONDS = 600
LEASE_SECONDS = 120
# A provider that limits requests (429) and says when to come back is waited out, not failed: the step answers
# with the seconds to wait (Retry-After, 1 to 60 s, plus up to 20% jitter so parallel publishes of one merchant
# do not all come back at once) and the state machine waits, then runs the stage again. A stage limited for
# longer than this in a row (one run's count, reset by any stage that completes) fails with the provider's words.
RATE_LIMIT_BUDGET_SECONDS = 300
MAX_RATE_LIMIT_WAIT = 60
TEMPLATE_SUBJECT = "feat: scaffold merchant backoffice from svc template"
TEMPLATE_BODY = "Produced by svc onboarding provisioning (template push)."
NO_ORGANIZATION = "Merchant Supabase account has no organization."
REPO_HOST_MISSING = (
    "GitHub OAuth not connected. The merchant must reconnect GitHub before the template can be pushed."
)
NO_LINKED_REPO = "The static host build requires a linked repository: the project has none."
DB_NOT_READY = "The Supabase project did not become ACTIVE_HEALTHY within 10 minutes."
PLATFORM_URL_UNKNOWN = (
    "The platform's public URL is not known yet, so the shop's backoffice has no address: open the workspace "
    "once, then publish again."
)
BUSY_AT_START = (
    "Another publish run still holds this project, so this one stopped before its first step. A run that "
    "stopped without letting go holds it for at most 2 minutes: press Publish again in a moment."
)
REPO_STAGE_MESSAGE = (
    "La configuration du dépôt GitHub a échoué. Vérifiez la connexion GitHub puis relancez la publication."
)


def _text(value: Any) -> str | None:
    return str(value) if value is not None else None


def _number(value: Any) -> int | None:
    return int(value) if value is not None else None


@dataclass(frozen=True)
class PublishState:
    """What the publish sequence records on a project, read from its item's `publish_*` attributes (and the
    few facts the stages keep beside them). Absent attributes read as None (the attempt as 0), so an item
    written before any of them existed reads as never published."""

    stage: str | None = None  # the stage to run next (STAGES), None before the first run read the project
    status: str | None = None  # starting, running, ready or failed
    error: str | None = None  # why the last run stopped
    attempt: int = 0  # presses of Publish claimed so far (each names its execution)
    claimed_at: int | None = None  # when the last press claimed its attempt
    execution: str | None = None  # the execution that last read the project (an operator's resume included)
    execution_arn: str | None = None  # the execution the last press started
    lease: str | None = None  # the execution holding the project
    lease_until: int | None = None
    ready_deadline: int | None = None  # when this run stops waiting for the database to come up
    limited_since: int | None = None  # since when this run's stage has been rate limited in a row
    db_password: str | None = None  # sealed with the envelope (context: project id, kind db_password)
    template_commit_sha: str | None = None
    backoffice_url: str | None = None

    @classmethod
    def of(cls, project: Project) -> PublishState:
        item = project.extra
        return cls(
            stage=_text(item.get("publish_stage")),
            status=_text(item.get("publish_status")),
            error=_text(item.get("publish_error")),
            attempt=int(item.get("publish_attempt") or 0),
            claimed_at=_number(item.get("publish_claimed_at")),
            execution=_text(item.get("publish_execution")),
            execution_arn=_text(item.get("publish_execution_arn")),
            lease=_text(item.get("publish_lease")),
            lease_until=_number(item.get("publish_lease_until")),
            ready_deadline=_number(item.get("publish_ready_deadline")),
            limited_since=_number(item.get("publish_limited_since")),
            db_password=_text(item.get("db_password")),
            template_commit_sha=_text(item.get("template_commit_sha")),
            backoffice_url=_text(item.get("backoffice_url")),
        )

    @property
    def next_stage(self) -> str:
        """The stage a run starts at: the recorded one, or the first."""
        return self.stage or STAGES[0]


class PublishTransient(DomainError):
    """A failure worth retrying (provider 5xx, timeout, rate limit): the state machine retries the step."""

    code = "publish_transient"


class PublishFailed(DomainError):
    """A failure retrying will not fix: the run stops at its stage with this message."""

    code = "publish_failed"


class PublishBusy(DomainError):
    """Another execution holds this project's lease."""

    code = "publish_busy"


def execution_name(project_id: str, attempt: int) -> str:
    """The name of the execution that runs a press's claimed attempt (Step Functions runs a name once)."""
    return f"{project_id}-{attempt}"


class SimulatedCrash(RuntimeError):
    """A crash injected at a named point (development and tests only), reported as Lambda reports a crash."""

    lambda_error_type = "Runtime.ExitError"


# -- the template tree -------------------------------------------------------------------------------------
_SKIP_DIRS = {
    ".git",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".aws-sam",
    "node_modules",
}


def template_root(configured: str | None = None) -> Path:
    """The backoffice tree publishing pushes: `configured` (BACKOFFICE_TEMPLATE_DIR), the repository's
    backoffice/ in development, or the copy `make build` bundles into the layer for the deployed function."""
    if configured:
        return Path(configured)
    for parent in Path(__file__).resolve().parents:
        if (parent / "backoffice" / "template.yaml").is_file():
            return parent / "backoffice"
    bundled = Path(__file__).resolve().parent / "backoffice_template"
    if bundled.is_dir():
        return bundled
    raise PublishFailed("the backoffice template is not available to this function")


def template_files(root: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if (
            any(part in _SKIP_DIRS or part.endswith(".egg-info") for part in relative.parts)
            or not path.is_file()
        ):
            continue
        if path.suffix in {".pyc", ".pyo"} or relative.name.startswith(".env"):
            continue
        files[relative.as_posix()] = path.read_bytes()
    return files


def migration_runner(root: Path) -> Any:
    """The backoffice's own migration runner, from the same tree, so publishing applies migrations exactly as
    the backoffice's tests and the local stack do."""
    source = root / "shared" / "svc_backoffice" / "migrate.py"
    spec = importlib.util.spec_from_file_location("svc_backoffice_template_migrate", source)
    if spec is None or spec.loader is None:
        raise PublishFailed("the backoffice migration runner is missing from the template")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Adapters:
    repo_host: Callable[[str], Any]
    db_host: Callable[[str], Any]
    static_host: Callable[[str], Any]


class Publisher:
    def __init__(
        self,
        table: Table,
        projects: Projects,
        connections: Connections,
        envelope: Envelope,
        clock: Clock,
        adapters: Adapters,
        *,
        template: Callable[[], Path] = template_root,
        crash_points: frozenset[str] = frozenset(),
        platform_url: Callable[[], str | None] = lambda: None,
    ) -> None:
        self._table = table
        self._projects = projects
        self._connections = connections
        self._envelope = envelope
        self._clock = clock
        self._adapters = adapters
        self._template = template
        self._crash_points = set(crash_points)
        self._platform_url = platform_url  # the platform API's public base URL, None while unknown

    def _crash_point(self, name: str) -> None:
        """Fault injection for the reliability tests (SVC_CRASH_POINTS outside production): crash once per
        point, after the provider call and before the record write."""
        if name in self._crash_points:
            self._crash_points.discard(name)
            raise SimulatedCrash(f"simulated crash at {name}")

    # -- run control ----------------------------------------------------------------------------------------
    def read(self, project_id: str, execution: str) -> dict[str, Any]:
        project = self._projects.get(project_id, consistent=True)
        self._lease(project, execution)
        state = PublishState.of(project)
        stage = state.next_stage
        if not state.stage:
            self._advance(project, None, STAGES[0], execution)
        if stage == "ready":
            # A published project started again (an operator's resume): nothing to do, and it stays ready.
            self._projects.update(
                project,
                {
                    "publish_status": "ready",
                    "publish_error": None,
                    "publish_lease": None,
                    "publish_lease_until": None,
                },
            )
            return {"projectId": project.id, "stage": "ready", "wait": 0}
        # A run starting (or resuming) gets the whole readiness budget: a timeout of an earlier run is spent.
        self._projects.update(
            project,
            {
                "publish_status": "running",
                "publish_error": None,
                "publish_execution": execution,
                "publish_ready_deadline": None,
                "publish_limited_since": None,
            },
        )
        return {"projectId": project.id, "stage": str(stage), "wait": 0}

    def _lease(self, project: Project, execution: str) -> None:
        now = int(self._clock.now())
        try:
            self._table.update(
                keys.project(project.id),
                keys.META,
                set={"publish_lease": execution, "publish_lease_until": now + LEASE_SECONDS},
                when=attr("publish_lease").missing()
                | attr("publish_lease").eq(execution)
                | attr("publish_lease_until").lt(now),
            )
        except ConditionFailed:
            raise PublishBusy("another execution is publishing this project") from None

    def _advance(self, project: Project, stage: str | None, to: str, execution: str, **changes: Any) -> None:
        """Record the next stage, only if the stage is still `stage` and this execution holds the lease."""
        at_stage = attr("publish_stage").missing() if stage is None else attr("publish_stage").eq(stage)
        try:
            self._projects.update(
                project,
                {
                    **changes,
                    "publish_stage": to,
                    "publish_ready_deadline": None,
                    "publish_limited_since": None,
                },
                when=attr("publish_lease").eq(execution) & at_stage,
            )
        except DomainError as exc:
            raise PublishBusy("the stage moved on in another execution") from exc

    def fail(self, project_id: str, execution: str, error: dict[str, Any] | None) -> str | None:
        """Record why the run stopped (the stage stays) and release the lease. The stage it stopped at, or
        None when there was nothing to record (another run holds the project, and this run was not the one
        the last press claimed)."""
        project = self._projects.get(project_id, consistent=True)
        state = PublishState.of(project)
        stage = state.next_stage
        if state.lease in (None, execution):
            self._projects.update(
                project,
                {
                    "publish_status": "failed",
                    "publish_error": _error_message(error),
                    "publish_lease": None,
                    "publish_lease_until": None,
                },
            )
            return stage
        attempt = state.attempt
        if state.status != "starting" or not execution.endswith(":" + execution_name(project.id, attempt)):
            return None
        # The run a press claimed stopped before it could hold the project: the project says so (the lease
        # stays with its holder), so the page stops waiting and the next press starts a new run.
        busy = isinstance(error, dict) and error.get("Error") == "PublishBusy"
        message = BUSY_AT_START if busy else _error_message(error)
        try:
            self._projects.update(
                project,
                {"publish_status": "failed", "publish_error": message},
                when=attr("publish_status").eq("starting") & attr("publish_attempt").eq(attempt),
            )
        except DomainError:
            return None  # a newer press claimed the project meanwhile
        return stage

    def step(self, project_id: str, stage: str, execution: str) -> dict[str, Any]:
        run = self.STEPS.get(stage)
        if run is None:
            raise ValueError(f"unknown publish stage {stage!r}; the stages are {', '.join(self.STEPS)}")
        project = self._projects.get(project_id, consistent=True)
        recorded = PublishState.of(project).stage
        if recorded != stage:
            return {
                "projectId": project.id,
                "stage": str(recorded),
                "wait": 0,
            }  # another run moved it on: follow the record
        self._lease(project, execution)
        try:
            next_stage = run(self, project, execution)
        except RateLimited as exc:
            return self._rate_limited(project, stage, exc)
        except UpstreamError as exc:
            raise PublishTransient(exc.message) from exc
        except ReconnectRequired as exc:
            raise PublishFailed(REPO_HOST_MISSING if exc.provider == "repo_host" else exc.message) from exc
        except ProviderError as exc:
            raise PublishFailed(exc.message) from exc
        if next_stage == "ready":
            self._projects.update(
                self._projects.get(project.id, consistent=True),
                {
                    "publish_status": "ready",
                    "publish_lease": None,
                    "publish_lease_until": None,
                    "status": "published",
                },
            )
        return {"projectId": project.id, "stage": next_stage, "wait": 0}

    def _rate_limited(self, project: Project, stage: str, exc: RateLimited) -> dict[str, Any]:
        """A provider said to come back later: the stage is run again after Retry-After (the state machine's
        Wait), unless this run has been limited for RATE_LIMIT_BUDGET_SECONDS in a row."""
        now = int(self._clock.now())
        current = self._projects.get(project.id, consistent=True)
        since = PublishState.of(current).limited_since
        if since is None:
            since = now
        elif now - since >= RATE_LIMIT_BUDGET_SECONDS:
            raise PublishFailed(exc.message) from exc
        wait = min(max(1, exc.retry_after), MAX_RATE_LIMIT_WAIT)
        wait += random.randint(0, max(1, wait // 5))
        self._projects.update(current, {"publish_limited_since": since})
        logger.info("publish step rate limited", extra={"stage": stage, "wait": wait})
        return {"projectId": project.id, "stage": stage, "wait": wait}

    # -- stages ---------------------------------------------------------------------------------------------
    def _db(self, project: Project) -> Any:
        return self._adapters.db_host(self._connections.token(project.owner_id, "db_host").access_token)

    def _db_creating(self, project: Project, execution: str) -> str:
        db = self._db(project)
        name = repo_name(project.slug)
        ref = project.db_project_ref
        if not ref:
            existing = next((p for p in db.projects() if p.get("name") == name), None)
            if existing is not None:
                ref = existing.get("ref") or existing.get("id")
            else:
                organizations = db.organizations()
                if not organizations:
                    raise PublishFailed(NO_ORGANIZATION)
                password = self._db_password(project, execution)
                created = db.create_project(
                    name=name, db_pass=password, organization_slug=organizations[0]["slug"], region=REGION
                )
                ref = created.get("ref") or created.get("id")
                self._crash_point("db_created")
        self._advance(project, "db_creating", "db_waiting_ready", execution, db_project_ref=ref)
        return "db_waiting_ready"

    def _db_password(self, project: Project, execution: str) -> str:
        """The database password, generated once and kept encrypted on the project before it is used."""
        context = {"project_id": project.id, "kind": "db_password"}
        stored = PublishState.of(project).db_password
        if stored:
            return self._envelope.decrypt_text(stored, context)
        password = secrets.token_urlsafe(24)
        self._projects.update(project, {"db_password": self._envelope.encrypt(password, context)})
        return password

    def _db_waiting_ready(self, project: Project, execution: str) -> str:
        assert project.db_project_ref
        status = self._db(project).project(project.db_project_ref).get("status")
        if status == "ACTIVE_HEALTHY":
            self._advance(project, "db_waiting_ready", "db_applying_migrations", execution)
            return "db_applying_migrations"
        now = int(self._clock.now())
        deadline = PublishState.of(project).ready_deadline
        if deadline is None:  # this run's first poll: its budget starts now
            deadline = now + READY_BUDGET_SECONDS
        elif now >= deadline:
            raise PublishFailed(DB_NOT_READY)
        self._projects.update(project, {"publish_ready_deadline": deadline, "db_status": status})
        return WAITING

    def _db_applying_migrations(self, project: Project, execution: str) -> str:
        assert project.db_project_ref
        db = self._db(project)
        ref = project.db_project_ref
        runner = migration_runner(self._template())
        held: list[str] = []

        def execute(sql: str) -> Any:
            # The runner's bootstrap (create the record table if missing) travels with its next statement:
            # one request instead of two.
            if sql == runner.BOOTSTRAP_SQL:
                held.append(sql)
                return []
            text = "\n".join([*held, sql])
            held.clear()
            return db.query(ref, text)

        todo = runner.pending(execute, runner.load(self._template() / "migrations"))
        if todo:
            # Every pending migration in one request: each keeps its own transaction (its version row
            # first), and PostgreSQL stops at the first error, so what ran before it stays recorded and a
            # retry applies the rest.
            db.query(ref, "".join(m.script() for m in todo))
        keys = db.api_keys(ref)
        privileged = keys.get("service_role")
        self._advance(
            project,
            "db_applying_migrations",
            "repo_host_creating_repo",
            execution,
            db_public_key=keys.get("anon"),
            db_privileged_key=self._envelope.encrypt(
                privileged, {"project_id": project.id, "kind": "db_privileged_key"}
            )
            if privileged
            else None,
        )
        return "repo_host_creating_repo"

    def _github(self, project: Project) -> tuple[Any, Any]:
        token = self._connections.token(project.owner_id, "repo_host", missing_message=REPO_HOST_MISSING)
        return self._adapters.repo_host(token.access_token), token

    def _repo_host_creating_repo(self, project: Project, execution: str) -> str:
        changes: dict[str, Any] = {}
        if not project.repo_host_repo:
            github, token = self._github(project)
            repo = github.create_or_reuse_repo(
                repo_name(project.slug),
                owner=token.account or "",
                description=f"{project.name}: svc shop backoffice",
            )
            changes = {
                "repo_host_repo": repo.full_name,
                "repo_host_branch": repo.default_branch,
                "repo_host_url": repo.html_url,
            }
        self._advance(project, "repo_host_creating_repo", "repo_host_pushing_template", execution, **changes)
        return "repo_host_pushing_template"

    def _repo_host_pushing_template(self, project: Project, execution: str) -> str:
        if PublishState.of(project).template_commit_sha:
            self._advance(project, "repo_host_pushing_template", "host_triggering_build", execution)
            return "host_triggering_build"
        github, _ = self._github(project)
        assert project.repo_host_repo and project.repo_host_branch
        owner, name = project.repo_host_repo.split("/", 1)
        head = github.commit_info(owner, name, project.repo_host_branch)
        if head["message"].split("\n", 1)[0] == TEMPLATE_SUBJECT:
            sha = head["sha"]  # pushed by an earlier attempt that stopped before recording it
        else:
            sha = github.commit_files(
                owner,
                name,
                project.repo_host_branch,
                template_files(self._template()),
                f"{TEMPLATE_SUBJECT}\n\n{TEMPLATE_BODY}",
                parent=(head["sha"], head["tree"]),
            )
            self._crash_point("template_pushed")
        now = int(self._clock.now())
        self._advance(
            project,
            "repo_host_pushing_template",
            "host_triggering_build",
            execution,
            template_commit_sha=sha,
            last_pushed_sha=sha,
            last_pushed_at=now,
        )
        return "host_triggering_build"

    def _host_triggering_build(self, project: Project, execution: str) -> str:
        if not project.repo_host_repo or not project.repo_host_branch:
            raise PublishFailed(NO_LINKED_REPO)
        host = self._adapters.static_host(
            self._connections.token(project.owner_id, "static_host").access_token
        )
        name = repo_name(project.slug)
        site = host.find_site(name)
        if site is None:
            try:
                site = host.create_site(
                    name=name, repo_path=project.repo_host_repo, branch=project.repo_host_branch
                )
            except ProviderConflict:
                site = host.find_site(name)
                if site is None:
                    raise PublishFailed(f"the site name {name} is taken on the static host") from None
            self._crash_point("site_created")
        elif (site.get("build_settings") or {}).get("repo_path") != project.repo_host_repo:
            site = host.link_repo(
                site["id"], repo_path=project.repo_host_repo, branch=project.repo_host_branch
            )
        self._record_backoffice(project)
        host.set_env(site["account_id"], site["id"], self._site_environment(project))
        build = host.start_build(site["id"])
        self._advance(
            project,
            "host_triggering_build",
            "ready",
            execution,
            static_site_id=site["id"],
            live_url=site.get("ssl_url") or site.get("url"),
            last_deploy_id=build.get("deploy_id"),
            last_deploy_at=int(self._clock.now()),
            build_status="building",
        )
        return "ready"

    def _record_backoffice(self, project: Project) -> None:
        """Where the shop's backoffice is served (the platform hosts it at /shops/{id}) and how it reaches the
        shop's database (the db_host pooler, not secret): read again on every attempt, so a resume records
        the same thing."""
        assert project.db_project_ref
        pooler = self._db(project).session_pooler(project.db_project_ref)
        base = (self._platform_url() or "").rstrip("/")
        if not base:
            raise PublishFailed(PLATFORM_URL_UNKNOWN)
        self._projects.update(
            project,
            {
                "db_pooler_host": pooler.host,
                "db_pooler_port": pooler.port,
                "db_pooler_user": pooler.user,
                "db_pooler_database": pooler.database,
                "backoffice_url": f"{base}/shops/{project.id}",
            },
        )

    def _site_environment(self, project: Project) -> dict[str, str]:
        from svc_shared.shops import conninfo

        project = self._projects.get(project.id, consistent=True)
        ref = project.db_project_ref or ""
        state = PublishState.of(project)
        assert state.backoffice_url is not None  # recorded by _record_backoffice just before
        env = {
            "SUPABASE_URL": f"https://{ref}.supabase.co",
            "SUPABASE_ANON_KEY": project.db_public_key or "",
            "BACKOFFICE_API_URL": state.backoffice_url,
        }
        # The platform the site reports to (its analytics beacon posts to SVC_PLATFORM_URL/api/analytics/collect).
        platform_url = self._platform_url()
        if platform_url:
            env["SVC_PLATFORM_URL"] = platform_url
        else:
            logger.warning(
                "platform URL unknown: SVC_PLATFORM_URL left unset", extra={"project_id": project.id}
            )
        if project.db_privileged_key:
            env["SUPABASE_SERVICE_ROLE_KEY"] = self._envelope.decrypt_text(
                project.db_privileged_key, {"project_id": project.id, "kind": "db_privileged_key"}
            )
        if state.db_password:
            password = self._envelope.decrypt_text(
                state.db_password, {"project_id": project.id, "kind": "db_password"}
            )
            env["DATABASE_URL"] = conninfo(project, password)
        return env

    # Each stage's step, by the name the state machine and the project record use (every stage but "ready").
    STEPS: ClassVar[dict[str, Callable[[Publisher, Project, str], str]]] = {
        "db_creating": _db_creating,
        "db_waiting_ready": _db_waiting_ready,
        "db_applying_migrations": _db_applying_migrations,
        "repo_host_creating_repo": _repo_host_creating_repo,
        "repo_host_pushing_template": _repo_host_pushing_template,
        "host_triggering_build": _host_triggering_build,
    }


def _error_message(error: dict[str, Any] | None) -> str:
    if not isinstance(error, dict):
        return "the publish run failed"
    cause = error.get("Cause")
    if isinstance(cause, str):
        import json

        try:
            parsed = json.loads(cause)
            if isinstance(parsed, dict) and isinstance(parsed.get("errorMessage"), str):
                return parsed["errorMessage"][:1000]
        except ValueError:
            return cause[:1000]
    return str(error.get("Error") or "the publish run failed")[:200]
