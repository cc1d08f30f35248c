"""What the tools do with a project's providers: deploys (with the Free plan quota), builder messages, the
repository's files and diffs, and upload URLs for assets."""

from __future__ import annotations

import base64
import contextlib
import time
import uuid
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock, iso_utc
from svc_shared.core.errors import Conflict, DomainError, InvalidInput, NotFound, PayloadTooLarge
from svc_shared.core.repopath import repo_path, repo_ref
from svc_shared.domain import site_deploys
from svc_shared.domain.accounts import Accounts
from svc_shared.domain.connections import Connections
from svc_shared.domain.credits import Credits
from svc_shared.domain.projects import Project, Projects
from svc_shared.domain.site_deploys import SiteDeploys
from svc_shared.providers.http import ProviderNotFound
from svc_shared.storage import keys
from svc_shared.storage.dal import ConditionFailed, Table, attr, item_absent

if TYPE_CHECKING:
    from svc_shared.providers.builder import Builder
    from svc_shared.providers.repo_host import RepoHost
    from svc_shared.providers.static_host import Deploy, StaticHost

FREE_DEPLOYS, DEPLOY_WINDOW = 3, 30 * 24 * 3600
MAX_LIST_ENTRIES = 100_000
MAX_READ_BYTES = 1024 * 1024
MAX_PATCH_BYTES = 256 * 1024
MAX_UPLOAD_BYTES = 10 * 1024 * 1024
UPLOAD_URL_TTL = 3600
WAIT_SECONDS = 20.0
POLL_SECONDS = 0.5


class QuotaExceeded(DomainError, code="deploy_quota_exceeded"): ...


@dataclass(eq=False)
class Workbench:
    table: Table
    projects: Projects
    accounts: Accounts
    connections: Connections
    clock: Clock
    _: KW_ONLY
    repo_host: Callable[[str], RepoHost]
    static_host: Callable[[str], StaticHost]
    builder: Callable[[], Builder] = field(repr=False)  # with its API key
    s3: Any = field(repr=False)  # the S3 client, made when first used
    bucket: str

    # -- deploys ------------------------------------------------------------------------------------------
    def _take_free_slot(self, user_id: str) -> str | None:
        """Claim one of the Free plan's 3 deploy slots for 30 days (a slot frees when its deploy is 30 days
        old); each claim is a conditional write, so concurrent deploys cannot overrun the quota."""
        now = int(self.clock.now())
        for slot in range(FREE_DEPLOYS):
            with contextlib.suppress(ConditionFailed):
                self.table.put(
                    {
                        "pk": keys.deploy_slots(user_id),
                        "sk": keys.slot(slot),
                        "expires_at": now + DEPLOY_WINDOW,
                    },
                    when=item_absent() | attr("expires_at").le(now),
                )
                return keys.slot(slot)
        slots = list(self.table.query(keys.deploy_slots(user_id), sk_prefix=keys.SLOT_PREFIX))
        free_at = min((int(s["expires_at"]) for s in slots), default=now)
        raise QuotaExceeded(say("deploys.quota_reached", deploys=FREE_DEPLOYS, date=iso_utc(free_at)[:10]))

    def deploy(self, user_id: str, project_id: str) -> str:
        """Start a build of the project's site; returns the deploy id."""
        project = self.projects.owned(project_id, user_id)
        if not project.static_site_id:
            raise Conflict(say("deploys.not_published"), code="not_published")
        user = self.accounts.get_user(user_id)
        slot = self._take_free_slot(user_id) if user.plan == "free" else None
        try:
            host = self.static_host(self.connections.token(user_id, "static_host").access_token)
            build = host.start_build(project.static_site_id)
        except Exception:
            if slot:  # a deploy that never started does not count
                self.table.delete(keys.deploy_slots(user_id), slot)
            raise
        deploy_id = str(build.deploy_id or build.id)
        self.projects.update(
            project,
            {
                "last_deploy_id": deploy_id,
                "last_deploy_at": int(self.clock.now()),
                "build_status": "building",
            },
        )
        return deploy_id

    def deploy_state(self, user_id: str, deploy_id: str) -> Deploy:
        """A deploy as the static host reports it now (its build's state, and why it failed)."""
        return self.static_host(self.connections.token(user_id, "static_host").access_token).deploy(deploy_id)

    def refresh_status(self, user_id: str, project: Project, history: SiteDeploys | None = None) -> Project:
        """What is live, read from the providers (when connected) and kept on the project: the branch's head
        as the last pushed commit (a builder's commit, a push from anywhere), the newest deploy's state, the
        commit the site serves, and why the newest build failed."""
        project = self._pushed(user_id, project)
        history = history or self.site_deploys(user_id, project)
        if history is not None and history.latest is not None:
            latest = history.latest
            return self.projects.update_changed(
                project,
                {
                    "build_status": latest.state,
                    "last_deploy_id": latest.id,
                    "last_deploy_at": latest.created_at or project.last_deploy_at,
                    "deployed_sha": history.live.commit_sha if history.live else None,
                    "build_error": latest.error if latest.failed else None,
                    "live_url": (history.live.url if history.live else None) or project.live_url,
                },
            )
        if not project.last_deploy_id:
            return project
        try:
            host = self.static_host(self.connections.token(user_id, "static_host").access_token)
            deploy = host.deploy(project.last_deploy_id)
        except DomainError:
            return project  # not connected or unreachable: report what is recorded
        changes: dict[str, Any] = {"build_status": deploy.state}
        if deploy.state == "ready":
            changes["live_url"] = deploy.ssl_url or deploy.deploy_ssl_url or project.live_url
        return self.projects.update_changed(project, changes)

    def site_deploys(self, user_id: str, project: Project, *, with_log: bool = True) -> SiteDeploys | None:
        """The site's recent deploys (with a failed newest build's log, unless `with_log` is False), or None when
        there is no site or static_host cannot be read now."""
        if not project.static_site_id:
            return None
        try:
            host = self.static_host(self.connections.token(user_id, "static_host").access_token)
            return site_deploys.read(host, project.static_site_id, with_log=with_log)
        except DomainError:
            return None

    def _pushed(self, user_id: str, project: Project) -> Project:
        if not project.repo_host_repo or not project.repo_host_branch:
            return project
        try:
            github, owner, name = self._github(user_id, project)
            head = github.commit(owner, name, project.repo_host_branch).sha
        except DomainError:
            return project
        if head == project.last_pushed_sha:
            return project
        return self.projects.update(
            project, {"last_pushed_sha": head, "last_pushed_at": int(self.clock.now())}
        )

    # -- builder ------------------------------------------------------------------------------------------
    def _repo(self, project: Project) -> tuple[str, str]:
        if not project.repo_host_repo or not project.repo_host_branch:
            raise Conflict(say("repository.missing"), code="no_repository")
        owner, name = project.repo_host_repo.split("/", 1)
        return owner, name

    def send_message(
        self,
        user_id: str,
        project_id: str,
        content: str,
        edit_session_id: str | None,
        wait: bool,
        workspace_knowledge: str,
    ) -> dict[str, Any]:
        project = self.projects.owned(project_id, user_id)
        self._repo(project)
        assert project.repo_host_repo and project.repo_host_branch  # _repo refused a project without them
        token = self.connections.token(user_id, "repo_host")
        # Project knowledge first: it takes precedence over the workspace's.
        knowledge = "\n\n".join(k for k in (project.knowledge, workspace_knowledge) if k)
        # Charged before it goes (CreditsShort refuses it, nothing sent); given back if the builder never
        # takes it.
        credits = Credits(self.table, self.clock)
        charge = credits.charge_message(user_id, project.id, project.name)
        try:
            sent = self.builder().send(
                project_id=project.id,
                repo=project.repo_host_repo,
                branch=project.repo_host_branch,
                repo_token=token.access_token,
                content=content,
                edit_session_id=edit_session_id,
                knowledge=knowledge,
                idempotency_key=str(uuid.uuid4()),
            )
        except Exception:
            credits.give_back(charge)
            raise
        message_id = sent.message_id
        self.table.put(
            {
                "pk": keys.message(message_id),
                "sk": keys.MESSAGE,
                "user_id": user_id,
                "project_id": project.id,
                "created_at": int(self.clock.now()),
                "expires_at": int(self.clock.now()) + 90 * 24 * 3600,
            }
        )
        if not wait:
            return {
                "message_id": message_id,
                "edit_session_id": sent.edit_session_id,
                "status": "in_progress",
            }
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            state = self.builder().message(message_id)
            if state.status != "in_progress" or time.monotonic() >= deadline:
                return state.known()
            time.sleep(POLL_SECONDS)

    def get_message(self, user_id: str, message_id: str) -> dict[str, Any]:
        record = self.table.get(keys.message(message_id), keys.MESSAGE)
        if record is None or record["user_id"] != user_id:
            raise NotFound(say("builder.message_not_found"))
        return self.builder().message(message_id).known()

    def list_edits(self, user_id: str, project_id: str) -> list[dict[str, Any]]:
        project = self.projects.owned(project_id, user_id)
        sessions = self.builder().edit_sessions(project.id)
        return sorted(
            sessions, key=lambda s: str(s.get("updated_at") or s.get("created_at") or ""), reverse=True
        )

    def get_edit(self, user_id: str, project_id: str, edit_session_id: str) -> dict[str, Any]:
        """One edit session of the owner's project with its messages, in the order they were sent; NotFound for
        an id the builder does not know in this project (another project's session included)."""
        project = self.projects.owned(project_id, user_id)
        try:
            return self.builder().edit_session(project.id, edit_session_id)
        except ProviderNotFound:
            raise NotFound(say("builder.edit_session_not_found")) from None

    # -- repository ---------------------------------------------------------------------------------------
    def _github(self, user_id: str, project: Project) -> tuple[RepoHost, str, str]:
        owner, name = self._repo(project)
        return self.repo_host(self.connections.token(user_id, "repo_host").access_token), owner, name

    def _ref(self, project: Project, ref: str, what: str = "ref") -> str:
        repo_ref(ref, what=what)
        return project.repo_host_branch or "HEAD" if ref == "HEAD" else ref

    def list_files(self, user_id: str, project_id: str, ref: str) -> dict[str, Any]:
        project = self.projects.owned(project_id, user_id)
        at = self._ref(project, ref)
        github, owner, name = self._github(user_id, project)
        head = github.commit(owner, name, at)
        tree = github.tree(owner, name, head.tree_sha)
        entries = tree.entries
        if tree.truncated or len(entries) > MAX_LIST_ENTRIES:
            raise DomainError(
                say("repository.too_many_entries", entries=f"{MAX_LIST_ENTRIES:,}"), code="too_many_entries"
            )
        files = [{"path": e.path, "size": e.size} for e in entries if e.type == "blob"]
        return {"ref": ref, "commit_sha": head.sha, "count": len(files), "files": files}

    def read_file(self, user_id: str, project_id: str, path: str, ref: str) -> dict[str, Any]:
        project = self.projects.owned(project_id, user_id)
        repo_path(path)
        at = self._ref(project, ref)
        github, owner, name = self._github(user_id, project)
        content, size = github.file(owner, name, path, at)
        if size > MAX_READ_BYTES:
            raise PayloadTooLarge(say("repository.file_too_large", path=path, size=f"{size:,}"))
        try:
            return {
                "path": path,
                "ref": ref,
                "size": size,
                "encoding": "utf-8",
                "content": content.decode("utf-8"),
            }
        except UnicodeDecodeError:
            return {
                "path": path,
                "ref": ref,
                "size": size,
                "encoding": "base64",
                "content": base64.b64encode(content).decode(),
            }

    def diff(self, user_id: str, project_id: str, base: str, head: str) -> dict[str, Any]:
        project = self.projects.owned(project_id, user_id)
        older, newer = self._ref(project, base, "base"), self._ref(project, head, "head")
        github, owner, name = self._github(user_id, project)
        compare = github.compare(owner, name, older, newer)
        files = []
        for f in compare.files:
            patch = f.patch
            entry: dict[str, Any] = {
                k: getattr(f, k)
                for k in ("filename", "status", "additions", "deletions", "changes", "previous_filename")
                if getattr(f, k) is not None
            }
            if patch is not None:
                raw = patch.encode("utf-8")
                if len(raw) > MAX_PATCH_BYTES:
                    truncated = say("repository.patch_truncated", size=f"{len(raw):,}")
                    patch = f"{raw[:MAX_PATCH_BYTES].decode('utf-8', 'ignore')}\n{truncated}"
                    entry["truncated"] = True
                entry["patch"] = patch
            files.append(entry)
        return {"base": base, "head": head, "files": files}

    def commit_diff(self, user_id: str, project_id: str, commit: str) -> dict[str, Any]:
        """What one commit changed: the diff from its first parent to it (a builder's edit, for example).
        A repository's first commit has no earlier state: InvalidInput says so."""
        project = self.projects.owned(project_id, user_id)
        repo_ref(commit, what="commit")
        github, owner, name = self._github(user_id, project)
        found = github.commit(owner, name, commit)
        sha, parents = found.sha, found.parents
        if not parents:
            raise InvalidInput(say("repository.first_commit", sha=sha[:7]))
        return {**self.diff(user_id, project_id, parents[0], sha), "commit_sha": sha}

    # -- uploads ------------------------------------------------------------------------------------------
    def upload_url(
        self, user_id: str, project_id: str, filename: str, content_type: str, size: int
    ) -> dict[str, Any]:
        project = self.projects.owned(project_id, user_id)
        if not 0 < size <= MAX_UPLOAD_BYTES:
            raise InvalidInput(say("assets.size_invalid"))
        safe = (
            "".join(c if c.isalnum() or c in "._-" else "-" for c in filename)[:120].strip(".-") or "upload"
        )
        key = f"projects/{project.id}/uploads/{uuid.uuid4().hex}/{safe}"
        # Content-Length and Content-Type are signed: the PUT must send exactly this size and type.
        url = self.s3().generate_presigned_url(
            "put_object",
            Params={"Bucket": self.bucket, "Key": key, "ContentLength": size, "ContentType": content_type},
            ExpiresIn=UPLOAD_URL_TTL,
            HttpMethod="PUT",
        )
        return {
            "upload_url": url,
            "method": "PUT",
            "key": key,
            "headers": {"Content-Type": content_type, "Content-Length": str(size)},
            "expires_at": iso_utc(self.clock.now() + UPLOAD_URL_TTL),
            "max_bytes": MAX_UPLOAD_BYTES,
        }
