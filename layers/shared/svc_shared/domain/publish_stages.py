"""The publish stages' steps, one per stage, each against its provider (db_host, repo_host, static_host): each
step is idempotent, and advances the stage through the publish record with a write conditional on the stage it
found and on the lease its execution holds (svc_shared.domain.publishing runs them)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.crypto import Envelope
from svc_shared.core.logs import get_logger
from svc_shared.core.names import repo_name
from svc_shared.domain.connections import Connections
from svc_shared.domain.projects import Project, Projects
from svc_shared.domain.publish_state import (
    READY_BUDGET_SECONDS,
    REGION,
    WAITING,
    PublishFailed,
    PublishRecord,
    PublishState,
    SimulatedCrash,
)
from svc_shared.domain.publish_template import migration_runner, migrations_dir, push_template, template_root
from svc_shared.providers.http import ProviderConflict

if TYPE_CHECKING:
    from svc_shared.domain.connections import StoredToken
    from svc_shared.providers.db_host import DbHost
    from svc_shared.providers.repo_host import RepoHost
    from svc_shared.providers.static_host import StaticHost

logger = get_logger()


@dataclass(frozen=True)
class Adapters:
    """The provider adapters for a user's token."""

    repo_host: Callable[[str], RepoHost]
    db_host: Callable[[str], DbHost]
    static_host: Callable[[str], StaticHost]


@dataclass(eq=False)
class PublishStages:
    """The steps of the stages, each advancing the stage through the publish record; Publisher
    (svc_shared.domain.publishing) runs them under the project's lease."""

    record: PublishRecord
    connections: Connections
    envelope: Envelope = field(repr=False)
    clock: Clock
    adapters: Adapters
    _: KW_ONLY
    template: Callable[[], Path] = template_root
    crash_points: frozenset[str] = frozenset()
    platform_url: Callable[[], str | None] = lambda: (
        None
    )  # the platform API's public base URL, None while unknown
    _crashed: set[str] = field(default_factory=set, init=False, repr=False)  # the crash points already hit

    @property
    def projects(self) -> Projects:
        return self.record.projects

    def _crash_point(self, name: str) -> None:
        """Fault injection for the reliability tests (SVC_CRASH_POINTS outside production): crash once per
        point, after the provider call and before the record write."""
        if name in self.crash_points and name not in self._crashed:
            self._crashed.add(name)
            raise SimulatedCrash(f"simulated crash at {name}")

    # -- stages ---------------------------------------------------------------------------------------------
    def _db(self, project: Project) -> DbHost:
        return self.adapters.db_host(self.connections.token(project.owner_id, "db_host").access_token)

    def _db_creating(self, project: Project, execution: str) -> str:
        db = self._db(project)
        name = repo_name(project.slug)
        ref = project.db_project_ref
        if not ref:
            existing = next((p for p in db.projects() if p.name == name), None)
            if existing is not None:
                ref = existing.ref
            else:
                organizations = db.organizations()
                if not organizations:
                    raise PublishFailed(say("publishing.no_organization"))
                password = self._db_password(project, execution)
                created = db.create_project(
                    name=name, db_pass=password, organization_slug=organizations[0].slug, region=REGION
                )
                ref = created.ref
                self._crash_point("db_created")
        self.record.advance(project, "db_creating", "db_waiting_ready", execution, db_project_ref=ref)
        return "db_waiting_ready"

    def _db_password(self, project: Project, execution: str) -> str:
        """The database password, generated once and kept encrypted on the project before it is used."""
        context = {"project_id": project.id, "kind": "db_password"}
        stored = PublishState.of(project).db_password
        if stored:
            return self.envelope.decrypt_text(stored, context)
        password = secrets.token_urlsafe(24)
        self.projects.update(project, {"db_password": self.envelope.encrypt(password, context)})
        return password

    def _db_waiting_ready(self, project: Project, execution: str) -> str:
        assert project.db_project_ref
        status = self._db(project).project(project.db_project_ref).status
        if status == "ACTIVE_HEALTHY":
            self.record.advance(project, "db_waiting_ready", "db_applying_migrations", execution)
            return "db_applying_migrations"
        now = int(self.clock.now())
        deadline = PublishState.of(project).ready_deadline
        if deadline is None:  # this run's first poll: its budget starts now
            deadline = now + READY_BUDGET_SECONDS
        elif now >= deadline:
            raise PublishFailed(say("publishing.db_not_ready"))
        self.record.waiting_ready(project, deadline, db_status=status)
        return WAITING

    def _db_applying_migrations(self, project: Project, execution: str) -> str:
        assert project.db_project_ref
        db = self._db(project)
        ref = project.db_project_ref
        runner = migration_runner(self.template())
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

        todo = runner.pending(execute, runner.load(migrations_dir(self.template())))
        if todo:
            # Every pending migration in one request: each keeps its own transaction (its version row
            # first), and PostgreSQL stops at the first error, so what ran before it stays recorded and a
            # retry applies the rest.
            db.query(ref, "".join(m.script() for m in todo))
        keys = db.api_keys(ref)
        privileged = keys.privileged
        self.record.advance(
            project,
            "db_applying_migrations",
            "repo_host_creating_repo",
            execution,
            db_public_key=keys.public,
            db_privileged_key=self.envelope.encrypt(
                privileged, {"project_id": project.id, "kind": "db_privileged_key"}
            )
            if privileged
            else None,
        )
        return "repo_host_creating_repo"

    def _github(self, project: Project) -> tuple[RepoHost, StoredToken]:
        token = self.connections.token(
            project.owner_id, "repo_host", missing_message=say("publishing.repo_host_missing")
        )
        return self.adapters.repo_host(token.access_token), token

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
        self.record.advance(
            project, "repo_host_creating_repo", "repo_host_pushing_template", execution, **changes
        )
        return "repo_host_pushing_template"

    def _repo_host_pushing_template(self, project: Project, execution: str) -> str:
        if PublishState.of(project).template_commit_sha:
            self.record.advance(project, "repo_host_pushing_template", "host_triggering_build", execution)
            return "host_triggering_build"
        github, _ = self._github(project)
        assert project.repo_host_repo and project.repo_host_branch
        owner, name = project.repo_host_repo.split("/", 1)
        sha, pushed = push_template(github, owner, name, project.repo_host_branch, self.template())
        if pushed:
            self._crash_point("template_pushed")
        now = int(self.clock.now())
        self.record.advance(
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
            raise PublishFailed(say("publishing.no_linked_repo"))
        host = self.adapters.static_host(self.connections.token(project.owner_id, "static_host").access_token)
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
                    raise PublishFailed(say("publishing.site_name_taken", name=name)) from None
            self._crash_point("site_created")
        elif site.repo_path != project.repo_host_repo:
            site = host.link_repo(site.id, repo_path=project.repo_host_repo, branch=project.repo_host_branch)
        self._record_backoffice(project)
        host.set_env(site.account_id, site.id, self._site_environment(project))
        build = host.start_build(site.id)
        self.record.advance(
            project,
            "host_triggering_build",
            "ready",
            execution,
            static_site_id=site.id,
            live_url=site.ssl_url or site.url,
            deploy_hook=site.deploy_hook,  # the hosted backoffice asks for a rebuild when the catalog changes
            last_deploy_id=build.deploy_id,
            last_deploy_at=int(self.clock.now()),
            build_status="building",
        )
        return "ready"

    def _record_backoffice(self, project: Project) -> None:
        """Where the shop's backoffice is served (the platform hosts it at /shops/{id}) and how it reaches the
        shop's database (the db_host pooler, not secret): read again on every attempt, so a resume records
        the same thing."""
        assert project.db_project_ref
        pooler = self._db(project).session_pooler(project.db_project_ref)
        base = (self.platform_url() or "").rstrip("/")
        if not base:
            raise PublishFailed(say("publishing.platform_url_unknown"))
        self.projects.update(
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
        from svc_shared.domain.shops import conninfo

        project = self.projects.get(project.id, consistent=True)
        ref = project.db_project_ref or ""
        state = PublishState.of(project)
        assert state.backoffice_url is not None  # recorded by _record_backoffice just before
        env = {
            "SUPABASE_URL": f"https://{ref}.supabase.co",
            "SUPABASE_ANON_KEY": project.db_public_key or "",
            "BACKOFFICE_API_URL": state.backoffice_url,
            # The storefront's build names the shop in its analytics beacon (the beacon's `site`).
            "SVC_PROJECT_ID": project.id,
        }
        # The platform the site reports to (its analytics beacon posts to SVC_PLATFORM_URL/api/analytics/collect).
        platform_url = self.platform_url()
        if platform_url:
            env["SVC_PLATFORM_URL"] = platform_url
        else:
            logger.warning(
                "platform URL unknown: SVC_PLATFORM_URL left unset", extra={"project_id": project.id}
            )
        if project.db_privileged_key:
            env["SUPABASE_SERVICE_ROLE_KEY"] = self.envelope.decrypt_text(
                project.db_privileged_key, {"project_id": project.id, "kind": "db_privileged_key"}
            )
        if state.db_password:
            password = self.envelope.decrypt_text(
                state.db_password, {"project_id": project.id, "kind": "db_password"}
            )
            env["DATABASE_URL"] = conninfo(project, password)
        return env

    # Each stage's step, by the name the state machine and the project record use (every stage but "ready").
    STEPS: ClassVar[dict[str, Callable[[PublishStages, Project, str], str]]] = {
        "db_creating": _db_creating,
        "db_waiting_ready": _db_waiting_ready,
        "db_applying_migrations": _db_applying_migrations,
        "repo_host_creating_repo": _repo_host_creating_repo,
        "repo_host_pushing_template": _repo_host_pushing_template,
        "host_triggering_build": _host_triggering_build,
    }
