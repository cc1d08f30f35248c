"""The GitHub sandbox's ground: accounts, tokens and repositories over real bare git repositories, what its routes
share (GitHub's errors, the signed-in and repository guards) and the JSON shapes of its REST API."""

from __future__ import annotations

import functools
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from svc_local.providers.common import (
    BaseProvider,
    OAuthApp,
    bearer,
    iso,
    json_body_as,
    now,
    random_id,
)
from svc_local.providers.gitstore import EMPTY, Commit, Entry, GitError, GitRepo
from svc_local.sandbox import Refused, SandboxRequest, SandboxResponse, json_response

DOCS = "https://docs.github.com/rest"
HTTP_BACKEND = "/usr/lib/git-core/git-http-backend"
CONTENTS_LIMIT = 1024 * 1024
TREE_LIMIT = 100_000
MODES = {"100644", "100755", "040000", "40000", "160000", "120000"}
DEFAULT_ACCOUNT = "sandbox-user"


def _error(status: int, message: str, **extra: Any) -> SandboxResponse:
    return json_response(
        {"message": message, **extra, "documentation_url": DOCS, "status": str(status)}, status
    )


NOT_FOUND = 404


def _not_found() -> SandboxResponse:
    return _error(NOT_FOUND, "Not Found")


def _supplied(request: SandboxRequest, field: str, kind: type) -> dict[str, Any]:
    """The JSON body when its `field` is a `kind` (Refused: GitHub's 422 naming the field)."""
    missing = _error(422, f'Invalid request.\n\n"{field}" wasn\'t supplied.')
    body = json_body_as(request, dict, missing)
    if not isinstance(body.get(field), kind):
        raise Refused(missing)
    return body


# The routes of each part of the provider (a class of its own) take that part as self.
_Self = TypeVar("_Self", bound="GitHubBase")
_Route = Callable[[_Self, SandboxRequest], SandboxResponse]
Record = dict[str, Any]
# A route's handler given the repository's record and its git storage.
_RepoHandler = Callable[[_Self, SandboxRequest, Record, GitRepo], SandboxResponse]


def _signed_in(handler: Callable[[_Self, SandboxRequest, Record], SandboxResponse]) -> _Route[_Self]:
    """A route of the signed-in account: the handler is given the token's account (GitHub's 401 otherwise)."""

    @functools.wraps(handler)
    def route(self: _Self, request: SandboxRequest) -> SandboxResponse:
        return handler(self, request, self._authenticated(request))

    return route


def _repository(*, git_data: bool = True) -> Callable[[_RepoHandler[_Self]], _Route[_Self]]:
    """A route of one repository (owner and repo in the path) that the token's account may see: the handler
    is given the repository's record and its git storage, or the answer is GitHub's error (401, 404, 409 when
    `git_data` and the repository is empty)."""

    def wrap(handler: _RepoHandler[_Self]) -> _Route[_Self]:
        @functools.wraps(handler)
        def route(self: _Self, request: SandboxRequest) -> SandboxResponse:
            _account, meta, repo = self._open(request, git_data=git_data)
            return handler(self, request, meta, repo)

        return route

    return wrap


class GitHubBase(BaseProvider):
    """What the GitHub sandbox's routes share: accounts, tokens, repositories and their git storage."""

    name = "github"

    def __init__(
        self,
        state_dir: Path | None,
        *,
        client_id: str,
        client_secret: str,
        account: str = DEFAULT_ACCOUNT,
        contents_limit: int = CONTENTS_LIMIT,
        tree_limit: int = TREE_LIMIT,
    ) -> None:
        super().__init__(state_dir, {"accounts": {}, "tokens": {}, "repos": {}, "next_id": 100_000})
        self._own_git_root = state_dir is None
        self.git_root = (state_dir / "github-git") if state_dir else Path(tempfile.mkdtemp(prefix="sbx-git-"))
        self.git_root.mkdir(parents=True, exist_ok=True)
        self.oauth = OAuthApp(self.state, client_id, client_secret, account)
        self.contents_limit = contents_limit
        self.tree_limit = tree_limit
        self._repos: dict[str, GitRepo] = {}
        # (owner/name, ref, sha) of every ref update, by any path (the static host builds on pushes)
        self.ref_listeners: list[Callable[[str, str, str], None]] = []
        self.ensure_account(account)

    # ---- public API (builder and netlify sandboxes use these)

    @property
    def api_url(self) -> str:
        return f"{self.public_url}/github/api"

    def ensure_account(self, login: str) -> dict[str, Any]:
        with self.state.lock:
            account = self.data["accounts"].get(login)
            if account is None:
                self.data["next_id"] += 1
                account = {
                    "login": login,
                    "id": self.data["next_id"],
                    "name": login.replace("-", " ").title(),
                    "email": f"{login}@users.sandbox.test",
                }
                self.data["accounts"][login] = account
                self.state.save()
            return dict(account)

    def issue_token(self, login: str, scope: str = "repo,user:email") -> str:
        self.ensure_account(login)
        token = random_id("gho_", 36, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        with self.state.lock:
            self.data["tokens"][token] = {"login": login, "scope": scope, "created_at": now()}
        self.state.save()
        return token

    def account_for_token(self, token: str | None) -> dict[str, Any] | None:
        with self.state.lock:
            grant = self.data["tokens"].get(token or "")
            return dict(self.data["accounts"][grant["login"]]) if grant else None

    def repository(self, full_name: str) -> tuple[dict[str, Any], GitRepo] | None:
        """A repository's record and its git storage by owner/name (case-insensitive), or None."""
        with self.state.lock:
            meta = self.data["repos"].get(full_name.lower())
            if meta is None:
                return None
            repo = self._repos.get(full_name.lower())
            if repo is None:
                repo = self._repos[full_name.lower()] = GitRepo(
                    self.git_root / f"{meta['full_name']}.git",
                    functools.partial(self._ref_updated, meta["full_name"]),
                )
            return dict(meta), repo

    def _ref_updated(self, full_name: str, ref: str, sha: str) -> None:
        for listener in list(self.ref_listeners):
            listener(full_name, ref, sha)

    def can_access(self, login: str, meta: dict[str, Any]) -> bool:
        return meta["owner"] == login or not meta["private"]

    def commit_change(
        self,
        full_name: str,
        branch: str,
        message: str,
        edit: dict[str, bytes | None],
        *,
        author: tuple[str, str],
    ) -> str:
        """Commit `edit` (path -> content, None deletes) on top of `branch`; returns the new commit sha."""
        found = self.repository(full_name)
        if found is None:
            raise GitError(f"no repository {full_name}")
        _meta, repo = found
        with repo.lock:
            head = repo.ref(f"refs/heads/{branch}")
            if head is None:
                raise GitError(f"no branch {branch} in {full_name}")
            changes = {p: (None if c is None else ("100644", repo.write("blob", c))) for p, c in edit.items()}
            tree = repo.apply(repo.commit(head).tree, changes)
            sha = repo.write_commit(tree, [head], message, (author[0], author[1], int(now())))
            repo.set_ref(f"refs/heads/{branch}", sha)
        return sha

    def read_file(self, repo: GitRepo, commit_sha: str, path: str) -> bytes | None:
        entry = repo.lookup(repo.commit(commit_sha).tree, path)
        if entry is None or entry.kind != "blob":
            return None
        return repo.read(entry.sha)[1]

    def oauth_next(self, data: dict[str, Any]) -> dict[str, Any]:
        return self.oauth.queue(data)

    def stop(self) -> None:
        super().stop()
        if self._own_git_root:
            shutil.rmtree(self.git_root, ignore_errors=True)

    # ---- helpers

    def _authenticated(self, request: SandboxRequest) -> dict[str, Any]:
        """The token's account (Refused: 401)."""
        account = self.account_for_token(bearer(request))
        if account is None:
            raise Refused(_error(401, "Bad credentials"))
        return account

    def _open(
        self, request: SandboxRequest, *, git_data: bool = True
    ) -> tuple[dict[str, Any], dict[str, Any], GitRepo]:
        """(account, repository record, git repo) of the request (Refused with the error GitHub would answer:
        401, 404, 409 for an empty repository when `git_data`)."""
        account = self._authenticated(request)
        found = self.repository(f"{request.params['owner']}/{request.params['repo']}")
        if found is None or not self.can_access(account["login"], found[0]):
            raise Refused(_not_found())
        meta, repo = found
        if git_data and repo.is_empty():
            raise Refused(_error(409, EMPTY))
        return account, meta, repo

    def _repo_json(self, meta: dict[str, Any]) -> dict[str, Any]:
        owner = self.data["accounts"].get(meta["owner"], {"login": meta["owner"], "id": 0})
        full = meta["full_name"]
        return {
            "id": meta["id"],
            "node_id": f"R_{meta['id']}",
            "name": meta["name"],
            "full_name": full,
            "private": meta["private"],
            "visibility": "private" if meta["private"] else "public",
            "owner": {"login": owner["login"], "id": owner["id"], "type": "User"},
            "html_url": f"{self.public_url}/github/{full}",
            "description": meta["description"] or None,
            "url": f"{self.api_url}/repos/{full}",
            "clone_url": f"{self.public_url}/github/git/{full}.git",
            "default_branch": meta["default_branch"],
            "created_at": meta["created_at"],
            "updated_at": meta["created_at"],
            "pushed_at": meta["created_at"],
            "size": 0,
        }

    def _git_commit_json(self, meta: dict[str, Any], commit: Commit) -> dict[str, Any]:
        base = f"{self.api_url}/repos/{meta['full_name']}"
        return {
            "sha": commit.sha,
            "node_id": f"C_{commit.sha}",
            "url": f"{base}/git/commits/{commit.sha}",
            "html_url": f"{self.public_url}/github/{meta['full_name']}/commit/{commit.sha}",
            "author": {"name": commit.author[0], "email": commit.author[1], "date": iso(commit.author[2])},
            "committer": {
                "name": commit.committer[0],
                "email": commit.committer[1],
                "date": iso(commit.committer[2]),
            },
            "tree": {"sha": commit.tree, "url": f"{base}/git/trees/{commit.tree}"},
            "message": commit.message,
            "parents": [{"sha": p, "url": f"{base}/git/commits/{p}"} for p in commit.parents],
            "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None},
        }

    def _rest_commit_json(self, meta: dict[str, Any], commit: Commit) -> dict[str, Any]:
        git = self._git_commit_json(meta, commit)
        base = f"{self.api_url}/repos/{meta['full_name']}"
        return {
            "sha": commit.sha,
            "node_id": git["node_id"],
            "commit": {
                "author": git["author"],
                "committer": git["committer"],
                "message": commit.message,
                "tree": git["tree"],
                "url": git["url"],
                "comment_count": 0,
            },
            "url": f"{base}/commits/{commit.sha}",
            "html_url": git["html_url"],
            "author": None,
            "committer": None,
            "parents": [{"sha": p, "url": f"{base}/commits/{p}"} for p in commit.parents],
        }

    def _entry_json(self, meta: dict[str, Any], repo: GitRepo, path: str, entry: Entry) -> dict[str, Any]:
        kind = entry.kind
        item: dict[str, Any] = {
            "path": path,
            "mode": "040000" if kind == "tree" else entry.mode,
            "type": kind,
            "sha": entry.sha,
        }
        if kind == "blob":
            item["size"] = len(repo.read(entry.sha)[1])
        if kind != "commit":
            item["url"] = f"{self.api_url}/repos/{meta['full_name']}/git/{kind}s/{entry.sha}"
        return item

    def _tree_json(
        self, meta: dict[str, Any], sha: str, entries: list[dict[str, Any]], *, truncated: bool
    ) -> dict[str, Any]:
        url = f"{self.api_url}/repos/{meta['full_name']}/git/trees/{sha}"
        return {"sha": sha, "url": url, "tree": entries, "truncated": truncated}

    def _ref_json(self, meta: dict[str, Any], ref: str, sha: str) -> dict[str, Any]:
        base = f"{self.api_url}/repos/{meta['full_name']}/git"
        return {
            "ref": ref,
            "node_id": f"REF_{meta['id']}_{ref}",
            "url": f"{base}/{ref}",
            "object": {"sha": sha, "type": "commit", "url": f"{base}/commits/{sha}"},
        }
