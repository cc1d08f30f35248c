"""repo_host sandbox (GitHub shape): the OAuth app web flow, the REST subset the adapter uses (user,
repositories, commits, Git Data API, contents, compare) over real bare git repositories, and smart-HTTP
`git clone` of those repositories through `git http-backend`."""

from __future__ import annotations

import base64
import functools
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from svc_local.providers.common import (
    BaseProvider,
    OAuthApp,
    basic,
    bearer,
    form,
    iso,
    json_body,
    now,
    random_id,
)
from svc_local.providers.gitstore import EMPTY, SHA_RE, Commit, Entry, GitError, GitRepo
from svc_local.sandbox import SandboxRequest, SandboxResponse, SandboxRoute, json_response

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


_Route = Callable[["GitHub", SandboxRequest], SandboxResponse]
Record = dict[str, Any]
# A route's handler given the repository's record and its git storage.
_RepoHandler = Callable[["GitHub", SandboxRequest, Record, GitRepo], SandboxResponse]


def _signed_in(handler: Callable[[GitHub, SandboxRequest, Record], SandboxResponse]) -> _Route:
    """A route of the signed-in account: the handler is given the token's account, or GitHub's 401 is the
    answer."""

    @functools.wraps(handler)
    def route(self: GitHub, request: SandboxRequest) -> SandboxResponse:
        account = self._authenticated(request)
        if isinstance(account, SandboxResponse):
            return account
        return handler(self, request, account)

    return route


def _repository(*, git_data: bool = True) -> Callable[[_RepoHandler], _Route]:
    """A route of one repository (owner and repo in the path) that the token's account may see: the handler
    is given the repository's record and its git storage, or the answer is GitHub's error (401, 404, 409 when
    `git_data` and the repository is empty)."""

    def wrap(handler: _RepoHandler) -> _Route:
        @functools.wraps(handler)
        def route(self: GitHub, request: SandboxRequest) -> SandboxResponse:
            opened = self._open(request, git_data=git_data)
            if isinstance(opened, SandboxResponse):
                return opened
            _account, meta, repo = opened
            return handler(self, request, meta, repo)

        return route

    return wrap


class GitHub(BaseProvider):
    """Mounted at /github: OAuth on /github/login/oauth/*, REST on /github/api, clones on /github/git."""

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

    # ---- routes

    def routes(self) -> Iterable[SandboxRoute]:
        api = "/github/api"
        repo = f"{api}/repos/{{owner}}/{{repo}}"
        return [
            SandboxRoute("GET", "/github/login/oauth/authorize", self.authorize),
            SandboxRoute("POST", "/github/login/oauth/access_token", self.access_token),
            SandboxRoute("GET", f"{api}/user", self.get_user),
            SandboxRoute("GET", f"{api}/user/emails", self.get_emails),
            SandboxRoute("POST", f"{api}/user/repos", self.create_repo),
            SandboxRoute("GET", f"{api}/user/repos", self.list_repos),
            SandboxRoute("GET", repo, self.get_repo),
            SandboxRoute("GET", f"{repo}/commits/{{ref+}}", self.get_rest_commit),
            SandboxRoute("POST", f"{repo}/git/blobs", self.create_blob),
            SandboxRoute("GET", f"{repo}/git/blobs/{{sha}}", self.get_blob),
            SandboxRoute("POST", f"{repo}/git/trees", self.create_tree),
            SandboxRoute("GET", f"{repo}/git/trees/{{sha+}}", self.get_tree),
            SandboxRoute("POST", f"{repo}/git/commits", self.create_commit),
            SandboxRoute("GET", f"{repo}/git/commits/{{sha}}", self.get_commit),
            SandboxRoute("GET", f"{repo}/git/ref/{{ref+}}", self.get_ref),
            SandboxRoute("GET", f"{repo}/git/refs/{{ref+}}", self.get_ref),
            SandboxRoute("POST", f"{repo}/git/refs", self.create_ref),
            SandboxRoute("PATCH", f"{repo}/git/refs/{{ref+}}", self.update_ref),
            SandboxRoute("GET", f"{repo}/contents", self.get_contents),
            SandboxRoute("GET", f"{repo}/contents/{{path+}}", self.get_contents),
            SandboxRoute("GET", f"{repo}/compare/{{spec+}}", self.compare),
            SandboxRoute("*", "/github/git/{owner}/{repo}/{rest+}", self.smart_http),
            SandboxRoute("POST", "/__admin/github/tokens", self.admin_token),
            SandboxRoute("GET", "/__admin/github/repos", self.admin_repos),
        ]

    # ---- OAuth app web flow

    def authorize(self, request: SandboxRequest) -> SandboxResponse:
        return self.oauth.authorize(request, lambda client_id, redirect_uri: None)

    def access_token(self, request: SandboxRequest) -> SandboxResponse:
        data = form(request)
        guide = "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors"
        if (
            data.get("client_id") != self.oauth.client_id
            or data.get("client_secret") != self.oauth.client_secret
        ):
            body = {
                "error": "incorrect_client_credentials",
                "error_description": "The client_id and/or client_secret passed are incorrect.",
                "error_uri": f"{guide}/#incorrect-client-credentials",
            }
        else:
            grant, why = self.oauth.redeem(data.get("code", ""), data.get("redirect_uri"))
            if grant is None and why == "redirect_uri_mismatch":
                body = {
                    "error": "redirect_uri_mismatch",
                    "error_description": "The redirect_uri MUST match the registered callback URL for this application.",
                    "error_uri": f"{guide}/#redirect-uri-mismatch2",
                }
            elif grant is None:
                body = {
                    "error": "bad_verification_code",
                    "error_description": "The code passed is incorrect or expired.",
                    "error_uri": f"{guide}/#bad-verification-code",
                }
            else:
                scope = ",".join(grant["scope"].replace(",", " ").split()) or "repo,user:email"
                body = {
                    "access_token": self.issue_token(grant["account"], scope),
                    "token_type": "bearer",
                    "scope": scope,
                }
        if "json" in (request.headers.get("accept") or ""):
            return json_response(body)
        return SandboxResponse(
            200,
            urlencode(body).encode(),
            {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
        )

    # ---- helpers

    def _authenticated(self, request: SandboxRequest) -> dict[str, Any] | SandboxResponse:
        account = self.account_for_token(bearer(request))
        return account if account is not None else _error(401, "Bad credentials")

    def _open(
        self, request: SandboxRequest, *, git_data: bool = True
    ) -> tuple[dict[str, Any], dict[str, Any], GitRepo] | SandboxResponse:
        """(account, repository record, git repo) of the request, or the error GitHub would answer."""
        account = self._authenticated(request)
        if isinstance(account, SandboxResponse):
            return account
        found = self.repository(f"{request.params['owner']}/{request.params['repo']}")
        if found is None or not self.can_access(account["login"], found[0]):
            return _not_found()
        meta, repo = found
        if git_data and repo.is_empty():
            return _error(409, EMPTY)
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

    # ---- account

    @_signed_in
    def get_user(self, request: SandboxRequest, account: Record) -> SandboxResponse:
        return json_response(
            {
                "login": account["login"],
                "id": account["id"],
                "node_id": f"U_{account['id']}",
                "type": "User",
                "name": account["name"],
                "email": account["email"],
                "html_url": f"{self.public_url}/github/{account['login']}",
            }
        )

    @_signed_in
    def get_emails(self, request: SandboxRequest, account: Record) -> SandboxResponse:
        return json_response(
            [{"email": account["email"], "primary": True, "verified": True, "visibility": "private"}]
        )

    # ---- repositories

    @_signed_in
    def create_repo(self, request: SandboxRequest, account: Record) -> SandboxResponse:
        body = json_body(request)
        if not isinstance(body, dict):
            return _error(400, "Problems parsing JSON")
        raw_name = body.get("name")
        if not isinstance(raw_name, str) or not raw_name.strip():
            return _error(
                422,
                "Repository creation failed.",
                errors=[{"resource": "Repository", "code": "missing_field", "field": "name"}],
            )
        name = re.sub(r"[^A-Za-z0-9._-]", "-", raw_name.strip())
        full_name = f"{account['login']}/{name}"
        with self.state.lock:
            if full_name.lower() in self.data["repos"]:
                return _error(
                    422,
                    "Repository creation failed.",
                    errors=[
                        {
                            "resource": "Repository",
                            "code": "custom",
                            "field": "name",
                            "message": "name already exists on this account",
                        }
                    ],
                )
            self.data["next_id"] += 1
            meta = {
                "id": self.data["next_id"],
                "name": name,
                "full_name": full_name,
                "owner": account["login"],
                "private": bool(body.get("private", False)),
                "description": str(body.get("description") or ""),
                "default_branch": "main",
                "created_at": iso(),
            }
            repo = GitRepo.init(self.git_root / f"{full_name}.git")
            repo.on_set_ref = functools.partial(self._ref_updated, full_name)
            self._repos[full_name.lower()] = repo
            self.data["repos"][full_name.lower()] = meta
        if body.get("auto_init"):
            readme = f"# {name}\n" + (f"\n{meta['description']}\n" if meta["description"] else "")
            with repo.lock:
                tree = repo.apply(None, {"README.md": ("100644", repo.write("blob", readme.encode()))})
                sha = repo.write_commit(
                    tree, [], "Initial commit", (account["name"], account["email"], int(now()))
                )
                repo.set_ref("refs/heads/main", sha)
        self.state.save()
        return json_response(self._repo_json(meta), 201)

    @_signed_in
    def list_repos(self, request: SandboxRequest, account: Record) -> SandboxResponse:
        """GET /user/repos: the account's repositories, most recently created first, paginated like GitHub."""
        try:
            per_page = min(max(int(request.arg("per_page", "30") or "30"), 1), 100)
            page = max(int(request.arg("page", "1") or "1"), 1)
        except ValueError:
            return _error(400, "Invalid pagination")
        with self.state.lock:
            mine = [m for m in self.data["repos"].values() if m["owner"] == account["login"]]
        mine.sort(key=lambda m: m["id"], reverse=True)
        return json_response([self._repo_json(m) for m in mine[(page - 1) * per_page : page * per_page]])

    @_repository(git_data=False)
    def get_repo(self, request: SandboxRequest, meta: Record, _repo: GitRepo) -> SandboxResponse:
        return json_response(self._repo_json(meta))

    @_repository()
    def get_rest_commit(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        ref = request.params["ref"]
        sha = repo.resolve(ref)
        if sha is None:
            return _error(422, f"No commit found for SHA: {ref}")
        return json_response(self._rest_commit_json(meta, repo.commit(sha)))

    # ---- Git Data API

    @_repository()
    def create_blob(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        body = json_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("content"), str):
            return _error(422, 'Invalid request.\n\n"content" wasn\'t supplied.')
        encoding = body.get("encoding", "utf-8")
        if encoding == "base64":
            try:
                content = base64.b64decode(body["content"], validate=False)
            except ValueError:
                return _error(422, "Invalid request.\n\nContent is not valid Base64.")
        elif encoding in ("utf-8", "utf8"):
            content = body["content"].encode("utf-8")
        else:
            return _error(422, f"encoding must be one of utf-8, base64 (got {encoding})")
        sha = repo.write("blob", content)
        return json_response(
            {"sha": sha, "url": f"{self.api_url}/repos/{meta['full_name']}/git/blobs/{sha}"}, 201
        )

    @_repository()
    def get_blob(self, request: SandboxRequest, _meta: Record, repo: GitRepo) -> SandboxResponse:
        try:
            kind, data = repo.read(request.params["sha"])
        except GitError:
            return _not_found()
        if kind != "blob":
            return _not_found()
        return json_response(
            {
                "sha": request.params["sha"],
                "size": len(data),
                "encoding": "base64",
                "content": base64.encodebytes(data).decode(),
            }
        )

    @_repository()
    def create_tree(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        body = json_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("tree"), list):
            return _error(422, 'Invalid request.\n\n"tree" wasn\'t supplied.')
        base = body.get("base_tree")
        if base is not None:
            kind = repo.kind(base) if isinstance(base, str) else None
            if kind == "commit":
                base = repo.commit(base).tree
            elif kind != "tree":
                return _error(422, "base_tree is not a valid tree oid")
        changes: dict[str, tuple[str, str] | None] = {}
        with repo.lock:
            for item in body["tree"]:
                if (
                    not isinstance(item, dict)
                    or not isinstance(item.get("path"), str)
                    or not item["path"].strip("/")
                ):
                    return _error(422, "Invalid tree info")
                if any(part in ("", ".", "..") or part.lower() == ".git" for part in item["path"].split("/")):
                    # As GitHub: a tree entry cannot name .git, leave the tree or have an empty segment.
                    return _error(422, "tree.path contains a malformed path component")
                mode = str(item.get("mode", "100644"))
                if mode not in MODES:
                    return _error(422, f"Invalid tree mode {mode}")
                if "content" in item and item.get("sha") is not None:
                    return _error(
                        422,
                        "Must supply either tree.sha or tree.content. Request will be rejected if both are present.",
                    )
                if "content" in item:
                    if not isinstance(item["content"], str):
                        return _error(422, "Invalid tree info")
                    changes[item["path"]] = (mode, repo.write("blob", item["content"].encode("utf-8")))
                elif "sha" in item and item["sha"] is None:
                    changes[item["path"]] = None
                elif isinstance(item.get("sha"), str) and SHA_RE.match(item["sha"]):
                    expected = {"040000": "tree", "40000": "tree", "160000": "commit"}.get(mode, "blob")
                    if expected != "commit" and repo.kind(item["sha"]) != expected:
                        return _error(422, f"tree.sha {item['sha']} is not a valid {expected}")
                    changes[item["path"]] = (mode, item["sha"])
                else:
                    return _error(422, "Must supply either tree.sha or tree.content.")
            sha = repo.apply(base, changes)
        entries = [self._entry_json(meta, repo, e.name, e) for e in repo.tree_entries(sha)]
        return json_response(self._tree_json(meta, sha, entries, truncated=False), 201)

    @_repository()
    def get_tree(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        wanted = request.params["sha"]
        sha = wanted if SHA_RE.match(wanted) else repo.resolve(wanted)
        kind = repo.kind(sha) if sha else None
        if sha and kind == "commit":
            sha = repo.commit(sha).tree
            kind = "tree"
        if not sha or kind != "tree":
            return _not_found()
        recursive = request.arg("recursive") not in (None, "", "0", "false")
        listed = repo.flatten(sha) if recursive else [(e.name, e) for e in repo.tree_entries(sha)]
        truncated = len(listed) > self.tree_limit
        entries = [self._entry_json(meta, repo, path, e) for path, e in listed[: self.tree_limit]]
        return json_response(self._tree_json(meta, sha, entries, truncated=truncated))

    def create_commit(self, request: SandboxRequest) -> SandboxResponse:
        opened = self._open(request)
        if isinstance(opened, SandboxResponse):
            return opened
        account, meta, repo = opened
        body = json_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("message"), str):
            return _error(422, 'Invalid request.\n\n"message" wasn\'t supplied.')
        tree, parents = body.get("tree"), body.get("parents", [])
        if not isinstance(tree, str) or repo.kind(tree) != "tree":
            return _error(422, "Tree SHA does not exist")
        if not isinstance(parents, list) or any(
            not isinstance(p, str) or repo.kind(p) != "commit" for p in parents
        ):
            return _error(422, "Parent SHA does not exist or is not a commit object")

        def person(value: Any) -> tuple[str, str, int]:
            if isinstance(value, dict) and value.get("name") and value.get("email"):
                return str(value["name"]), str(value["email"]), int(now())
            return account["name"], account["email"], int(now())

        author = person(body.get("author"))
        committer = person(body.get("committer") or body.get("author"))
        sha = repo.write_commit(tree, list(parents), body["message"], author, committer)
        return json_response(self._git_commit_json(meta, repo.commit(sha)), 201)

    @_repository()
    def get_commit(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        sha = request.params["sha"]
        if repo.kind(sha) != "commit":
            return _not_found()
        return json_response(self._git_commit_json(meta, repo.commit(sha)))

    def _ref_json(self, meta: dict[str, Any], ref: str, sha: str) -> dict[str, Any]:
        base = f"{self.api_url}/repos/{meta['full_name']}/git"
        return {
            "ref": ref,
            "node_id": f"REF_{meta['id']}_{ref}",
            "url": f"{base}/{ref}",
            "object": {"sha": sha, "type": "commit", "url": f"{base}/commits/{sha}"},
        }

    @_repository()
    def get_ref(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        ref = f"refs/{request.params['ref']}"
        sha = repo.ref(ref)
        if sha is None:
            return _not_found()
        return json_response(self._ref_json(meta, ref, sha))

    @_repository()
    def create_ref(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        body = json_body(request)
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("ref"), str)
            or not isinstance(body.get("sha"), str)
        ):
            return _error(422, 'Invalid request.\n\n"ref" and "sha" are required.')
        ref, sha = body["ref"], body["sha"]
        if not ref.startswith("refs/") or ref.count("/") < 2 or ".." in ref:
            return _error(422, "Reference name is invalid")
        with repo.lock:
            if repo.ref(ref) is not None:
                return _error(422, "Reference already exists")
            if repo.kind(sha) != "commit":
                return _error(422, "Object does not exist")
            repo.set_ref(ref, sha)
        return json_response(self._ref_json(meta, ref, sha), 201)

    @_repository()
    def update_ref(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        body = json_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("sha"), str):
            return _error(422, 'Invalid request.\n\n"sha" wasn\'t supplied.')
        ref, sha = f"refs/{request.params['ref']}", body["sha"]
        with repo.lock:
            current = repo.ref(ref)
            if current is None:
                return _error(422, "Reference does not exist")
            if repo.kind(sha) != "commit":
                return _error(422, "Object does not exist")
            if not body.get("force") and not repo.is_ancestor(current, sha):
                return _error(422, "Update is not a fast forward")
            repo.set_ref(ref, sha)
        return json_response(self._ref_json(meta, ref, sha))

    # ---- reading

    @_repository(git_data=False)
    def get_contents(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        if repo.is_empty():
            return _error(404, "This repository is empty.")
        ref = request.arg("ref") or meta["default_branch"]
        sha = repo.resolve(ref)
        if sha is None:
            return _error(404, f"No commit found for the ref {ref}")
        path = request.params.get("path", "").strip("/")
        tree = repo.commit(sha).tree
        entry = repo.lookup(tree, path) if path else Entry("40000", "", tree)
        if entry is None:
            return _not_found()
        base = f"{self.api_url}/repos/{meta['full_name']}"
        if entry.kind == "tree":
            listing = []
            for child in repo.tree_entries(entry.sha):
                child_path = f"{path}/{child.name}" if path else child.name
                kind = {"tree": "dir", "commit": "submodule"}.get(child.kind, "file")
                listing.append(
                    {
                        "type": kind,
                        "name": child.name,
                        "path": child_path,
                        "sha": child.sha,
                        "size": len(repo.read(child.sha)[1]) if kind == "file" else 0,
                        "url": f"{base}/contents/{child_path}?ref={ref}",
                    }
                )
            return json_response(listing)
        data = repo.read(entry.sha)[1]
        too_large = len(data) > self.contents_limit
        return json_response(
            {
                "type": "file",
                "encoding": "none" if too_large else "base64",
                "size": len(data),
                "name": path.rsplit("/", 1)[-1],
                "path": path,
                "content": "" if too_large else base64.encodebytes(data).decode(),
                "sha": entry.sha,
                "url": f"{base}/contents/{path}?ref={ref}",
                "git_url": f"{base}/git/blobs/{entry.sha}",
                "download_url": None,
            }
        )

    @_repository()
    def compare(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        base_ref, dots, head_ref = request.params["spec"].partition("...")
        if not dots:
            return _not_found()
        base, head = repo.resolve(base_ref), repo.resolve(head_ref)
        if base is None or head is None:
            return _not_found()
        merge_base = repo.git("merge-base", base, head).decode().strip() or base
        ahead = repo.git("rev-list", "--reverse", f"{merge_base}..{head}").decode().split()
        behind = repo.git("rev-list", f"{merge_base}..{base}").decode().split()
        status = (
            "identical"
            if not ahead and not behind
            else "ahead"
            if not behind
            else "behind"
            if not ahead
            else "diverged"
        )
        return json_response(
            {
                "url": f"{self.api_url}/repos/{meta['full_name']}/compare/{base_ref}...{head_ref}",
                "status": status,
                "ahead_by": len(ahead),
                "behind_by": len(behind),
                "total_commits": len(ahead),
                "base_commit": self._rest_commit_json(meta, repo.commit(base)),
                "merge_base_commit": self._rest_commit_json(meta, repo.commit(merge_base)),
                "commits": [self._rest_commit_json(meta, repo.commit(c)) for c in ahead],
                "files": repo.diff_files(merge_base, head),
            }
        )

    # ---- git clone over smart HTTP

    def smart_http(self, request: SandboxRequest) -> SandboxResponse:
        name = request.params["repo"]
        if not name.endswith(".git"):
            name += ".git"
        found = self.repository(f"{request.params['owner']}/{name[:-4]}")
        credentials = basic(request)
        account = self.account_for_token(credentials[1] if credentials else bearer(request))
        challenge = {"WWW-Authenticate": 'Basic realm="GitHub"'}
        if found is None or (found[0]["private"] and account is None):
            if account is None:
                return SandboxResponse(401, "Authentication required\n", challenge)
            return SandboxResponse(404, "Repository not found.\n")
        meta = found[0]
        if account is not None and not self.can_access(account["login"], meta):
            return SandboxResponse(404, "Repository not found.\n")
        rest = request.params["rest"]
        if rest == "git-receive-pack" or request.arg("service") == "git-receive-pack":
            return SandboxResponse(403, "Pushing is not supported by the sandbox; use the REST API.\n")
        env = {
            "PATH": "/usr/bin:/bin",
            "GIT_PROJECT_ROOT": str(self.git_root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": f"/{meta['full_name']}.git/{rest}",
            "REQUEST_METHOD": request.method,
            "QUERY_STRING": urlencode([(k, v) for k, vs in request.query.items() for v in vs]),
            "CONTENT_TYPE": request.headers.get("content-type", ""),
            "CONTENT_LENGTH": str(len(request.body)),
            "REMOTE_USER": account["login"] if account else "",
            "REMOTE_ADDR": "127.0.0.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
        }
        for header in ("content-encoding", "git-protocol"):
            if header in request.headers:
                env[f"HTTP_{header.upper().replace('-', '_')}"] = request.headers[header]
        result = subprocess.run([HTTP_BACKEND], input=request.body, env=env, capture_output=True, check=False)
        head, _, body = result.stdout.partition(b"\r\n\r\n")
        if not _ and b"\n\n" in result.stdout:
            head, _, body = result.stdout.partition(b"\n\n")
        status, headers = 200, {}
        for line in head.decode("latin-1").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.strip().split(" ", 1)[0])
            elif key:
                headers[key.strip()] = value.strip()
        if result.returncode != 0 and not result.stdout:
            return SandboxResponse(500, result.stderr.decode("utf-8", "replace"))
        return SandboxResponse(status, body, headers)

    # ---- admin

    def admin_token(self, request: SandboxRequest) -> SandboxResponse:
        """Mint a token for an account without the browser step: {account?} -> {access_token, login}."""
        body = json_body(request)
        login = body.get("account") if isinstance(body, dict) else None
        login = login if isinstance(login, str) and login else self.oauth.default_account
        return json_response({"access_token": self.issue_token(login), "login": login}, 201)

    def admin_repos(self, request: SandboxRequest) -> SandboxResponse:
        with self.state.lock:
            repos = [dict(meta) for meta in self.data["repos"].values()]
        for meta in repos:
            found = self.repository(meta["full_name"])
            meta["branches"] = found[1].branches() if found else {}
            meta["clone_url"] = f"{self.public_url}/github/git/{meta['full_name']}.git"
        return json_response({"repositories": repos})
