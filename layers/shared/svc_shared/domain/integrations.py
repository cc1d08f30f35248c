"""Workspace integrations of a project: its repository on repo_host (create or link, manual push) and its
database project on db_host (list, link). Owner only; the user's own provider tokens."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.crypto import Envelope
from svc_shared.core.errors import InvalidInput, NotFound, PayloadTooLarge, RateLimited
from svc_shared.core.repopath import repo_path
from svc_shared.domain.bodies import ConnectRepoRequest, PushRequest
from svc_shared.domain.connections import Connections
from svc_shared.domain.projects import Project, Projects
from svc_shared.providers.http import ProviderNotFound
from svc_shared.storage.ratelimit import RateLimiter

if TYPE_CHECKING:
    from svc_shared.domain.connections import StoredToken
    from svc_shared.providers.db_host import DbHost
    from svc_shared.providers.repo_host import RepoHost

MAX_PUSH_FILES = 500
MAX_PUSH_BYTES = 5 * 1024 * 1024
PUSHES_PER_WINDOW, PUSH_WINDOW = 10, 300
CONNECTS_PER_MINUTE = 10
LISTINGS_PER_MINUTE = 20
_SEGMENT = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
_OWNER = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")


def valid_repo_segment(name: object) -> bool:
    """One path segment GitHub accepts as a repository name: letters, digits, . _ -, not dots only."""
    return isinstance(name, str) and bool(_SEGMENT.match(name)) and set(name) != {"."}


def is_env_file(path: str) -> bool:
    return path.rsplit("/", 1)[-1].startswith(".env")


@dataclass(frozen=True)
class PushResult:
    sha: str
    url: str
    files: int
    dropped: list[str]


@dataclass(eq=False)
class Integrations:
    projects: Projects
    connections: Connections
    limiter: RateLimiter
    envelope: Envelope = field(repr=False)
    clock: Clock
    _: KW_ONLY
    repo_host: Callable[[str], RepoHost]  # factory: token -> RepoHost
    db_host: Callable[[str], DbHost]  # factory: token -> DbHost

    def _limit(self, scope: str, user_id: str, limit: int, window: int) -> None:
        allowed, wait = self.limiter.take(scope, user_id, window, limit)
        if not allowed:
            message = (
                say("integrations.too_many_requests_minutes", limit=limit, minutes=window // 60, wait=wait)
                if window >= 120
                else say("integrations.too_many_requests_seconds", limit=limit, seconds=window, wait=wait)
            )
            raise RateLimited(message, retry_after=wait)

    def _github(self, user_id: str) -> tuple[RepoHost, StoredToken]:
        token = self.connections.token(
            user_id, "repo_host", missing_message=say("connections.repo_host_not_connected")
        )
        return self.repo_host(token.access_token), token

    # -- repositories -------------------------------------------------------------------------------------
    def list_repos(self, user_id: str, page: int) -> list[dict[str, Any]]:
        self._limit("repo-list", user_id, LISTINGS_PER_MINUTE, 60)
        github, _ = self._github(user_id)
        return [
            {
                "full_name": r.full_name,
                "default_branch": r.default_branch,
                "private": r.private,
                "html_url": r.html_url,
            }
            for r in github.list_repos(page=page, per_page=100)
        ]

    def connect_repo(self, user_id: str, body: ConnectRepoRequest) -> Project:
        project = self.projects.owned(body.project_id, user_id)
        mode, name = body.mode, body.name
        if mode == "create":
            if not valid_repo_segment(name):
                raise InvalidInput(say("integrations.name_invalid"), code="name_invalid")
        else:
            existing = body.existing_repo
            owner, sep, name = existing.partition("/") if isinstance(existing, str) else ("", "", "")
            if not sep or not _OWNER.match(owner) or not valid_repo_segment(name):
                raise InvalidInput(say("integrations.existing_repo_invalid"), code="existing_repo_invalid")
        self._limit("repo-connect", user_id, CONNECTS_PER_MINUTE, 60)
        github, token = self._github(user_id)
        if mode == "create":
            repo = github.create_or_reuse_repo(
                str(name), owner=token.account or "", description=f"{project.name}: svc shop"
            )
        else:
            try:
                repo = github.get_repo(owner, name)
            except ProviderNotFound:
                invalid = say("integrations.existing_repo_invalid")
                raise NotFound(
                    say("integrations.existing_repo_not_found", invalid=invalid, repo=f"{owner}/{name}"),
                    field="existingRepo",
                ) from None
        return self.projects.update(
            project,
            {
                "repo_host_repo": repo.full_name,
                "repo_host_branch": repo.default_branch,
                "repo_host_url": repo.html_url,
            },
        )

    def push(self, user_id: str, body: PushRequest) -> PushResult:
        project = self.projects.owned(body.project_id, user_id)
        contents: dict[str, bytes] = {}
        dropped: list[str] = []
        total = 0
        for entry in body.files:
            path = repo_path(entry.path, what="a file's path")
            if is_env_file(path):
                dropped.append(path)
                continue
            content, encoding = entry.content, entry.encoding
            try:
                data = base64.b64decode(content, validate=True) if encoding == "base64" else content.encode()
            except (binascii.Error, ValueError):
                raise InvalidInput(
                    say("integrations.content_not_base64", path=path), code="invalid_files"
                ) from None
            total += len(data)
            contents[path] = data
        if len(contents) > MAX_PUSH_FILES:
            raise InvalidInput(
                say("integrations.too_many_files", files=MAX_PUSH_FILES), code="too_many_files"
            )
        if total > MAX_PUSH_BYTES:
            raise PayloadTooLarge(say("integrations.push_too_large"))
        if not contents:
            raise InvalidInput(say("integrations.nothing_to_push"), code="invalid_files")
        if not project.repo_host_repo or not project.repo_host_branch:
            raise InvalidInput(say("integrations.no_repo"), code="no_repo")
        self._limit("repo-push", user_id, PUSHES_PER_WINDOW, PUSH_WINDOW)
        github, _ = self._github(user_id)
        message = body.message or f"chore: sync from svc builder ({len(contents)} files)"
        owner, name = project.repo_host_repo.split("/", 1)
        sha = github.commit_files(owner, name, project.repo_host_branch, contents, message)
        url = f"{project.extra.get('repo_host_url') or f'https://github.com/{project.repo_host_repo}'}/commit/{sha}"
        self.projects.update(project, {"last_pushed_sha": sha, "last_pushed_at": int(self.clock.now())})
        return PushResult(sha=sha, url=url, files=len(contents), dropped=sorted(dropped))

    # -- database projects --------------------------------------------------------------------------------
    def list_db_projects(self, user_id: str) -> list[dict[str, Any]]:
        db = self.db_host(self.connections.token(user_id, "db_host").access_token)
        return [
            {
                "ref": p.ref,
                "name": p.name,
                "region": p.region,
                "status": p.status,
                "organization_slug": p.organization_slug,
            }
            for p in db.projects()
        ]

    def link_db_project(self, user_id: str, project_id: str, ref: object) -> Project:
        project = self.projects.owned(project_id, user_id)
        if not isinstance(ref, str) or not re.fullmatch(r"[a-z0-9]{6,40}", ref):
            raise InvalidInput(say("integrations.db_ref_invalid"), code="ref_invalid")
        db = self.db_host(self.connections.token(user_id, "db_host").access_token)
        try:
            db.project(ref)
        except ProviderNotFound:
            raise NotFound(say("integrations.db_project_not_found", ref=ref), field="ref") from None
        keys = db.api_keys(ref)
        privileged = keys.privileged
        return self.projects.update(
            project,
            {
                "db_project_ref": ref,
                "db_public_key": keys.public,
                "db_privileged_key": self.envelope.encrypt(
                    privileged, {"project_id": project.id, "kind": "db_privileged_key"}
                )
                if privileged
                else None,
            },
        )
