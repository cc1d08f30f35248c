"""repo_host adapter: the GitHub REST API (users, repositories, Git Data API, contents, compare) and its
OAuth app web flow."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from svc_shared.core.repopath import repo_path, url_path
from svc_shared.providers.http import OAuthWebFlow, Provider, ProviderConflict, ProviderError

SCOPES = "repo user:email"


@dataclass(frozen=True)
class Repo:
    owner: str
    name: str
    default_branch: str
    html_url: str
    private: bool

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


@dataclass(frozen=True)
class Account:
    """The account a token acts for."""

    login: str


@dataclass(frozen=True)
class Commit:
    """The commit a ref points at."""

    sha: str
    tree_sha: str
    message: str
    parents: tuple[str, ...]  # their shas, the first parent first


@dataclass(frozen=True)
class TreeEntry:
    path: str
    type: str  # blob, tree or commit (a submodule)
    size: int | None  # blobs only


@dataclass(frozen=True)
class Tree:
    entries: tuple[TreeEntry, ...]
    truncated: bool  # GitHub stops listing a very large tree and says so


@dataclass(frozen=True)
class FileChange:
    """One file of a comparison, with GitHub's own values (None where it gives none)."""

    filename: str
    status: str | None
    additions: int | None
    deletions: int | None
    changes: int | None
    previous_filename: str | None  # a renamed file's old path
    patch: str | None  # absent for binary or very large changes


@dataclass(frozen=True)
class Comparison:
    files: tuple[FileChange, ...]
    ahead_by: int


def _repo(body: dict[str, Any]) -> Repo:
    return Repo(
        owner=body["owner"]["login"],
        name=body["name"],
        default_branch=body.get("default_branch") or "main",
        html_url=body.get("html_url", ""),
        private=bool(body.get("private", True)),
    )


def is_text(content: bytes) -> bool:
    """Files GitHub can take inline in a tree (UTF-8 without NUL bytes); others need a blob."""
    if b"\x00" in content:
        return False
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class RepoHostOAuth(OAuthWebFlow):
    """The OAuth app web flow on the site host (github.com), not the API host."""

    name = "repo_host"
    authorize_path = "/login/oauth/authorize"
    authorize_asks = {"scope": SCOPES, "allow_signup": "true"}

    def exchange(self, *, client_id: str, client_secret: str, code: str, redirect_uri: str) -> dict[str, Any]:
        body = self.request(
            "POST",
            "/login/oauth/access_token",
            retry=False,
            data={
                "client_id": client_id,
                "client_secret": client_secret,
                "code": code,
                "redirect_uri": redirect_uri,
            },
        )
        # GitHub reports exchange failures in a 200 body.
        if not isinstance(body, dict) or "access_token" not in body:
            error = body.get("error", "invalid_response") if isinstance(body, dict) else "invalid_response"
            raise ProviderError(self.name, 400, str(error), body)
        return body


class RepoHost(Provider):
    name = "repo_host"

    def headers(self) -> dict[str, str]:
        return {
            **super().headers(),
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        }

    # -- account ------------------------------------------------------------------------------------------
    def user(self) -> Account:
        return Account(login=str(self.request("GET", "/user")["login"]))

    def emails(self) -> list[dict[str, Any]]:
        return self.request("GET", "/user/emails")

    # -- repositories -------------------------------------------------------------------------------------
    def create_repo(
        self, name: str, *, description: str = "", private: bool = True, auto_init: bool = True
    ) -> Repo:
        body = self.request(
            "POST",
            "/user/repos",
            json={"name": name, "description": description, "private": private, "auto_init": auto_init},
        )
        return _repo(body)

    def list_repos(self, *, page: int = 1, per_page: int = 30) -> list[Repo]:
        body = self.request(
            "GET", "/user/repos", params={"page": page, "per_page": per_page, "sort": "created"}
        )
        return [_repo(r) for r in body or []]

    def get_repo(self, owner: str, name: str) -> Repo:
        return _repo(self.request("GET", f"/repos/{quote(owner)}/{quote(name)}"))

    def create_or_reuse_repo(self, name: str, *, owner: str, description: str = "") -> Repo:
        """Create a private repository with an initial commit; when the name is taken (422), reuse it."""
        try:
            return self.create_repo(name, description=description)
        except ProviderConflict:
            return self.get_repo(owner, name)

    # -- reading ------------------------------------------------------------------------------------------
    def commit(self, owner: str, repo: str, ref: str) -> Commit:
        """The commit a branch, tag or commit sha points at (its tree, message and parents), in one request."""
        body = self.request("GET", f"/repos/{quote(owner)}/{quote(repo)}/commits/{quote(ref, safe='')}")
        return Commit(
            sha=str(body["sha"]),
            tree_sha=str(body["commit"]["tree"]["sha"]),
            message=str(body["commit"].get("message", "")),
            parents=tuple(str(p["sha"]) for p in body.get("parents") or []),
        )

    def tree(self, owner: str, repo: str, tree_sha: str) -> Tree:
        """Every entry under a tree, recursively."""
        body = self.request(
            "GET",
            f"/repos/{quote(owner)}/{quote(repo)}/git/trees/{quote(tree_sha, safe='')}",
            params={"recursive": "1"},
        )
        return Tree(
            entries=tuple(
                TreeEntry(path=str(e["path"]), type=str(e.get("type")), size=e.get("size"))
                for e in body.get("tree") or []
            ),
            truncated=bool(body.get("truncated")),
        )

    def file(self, owner: str, repo: str, path: str, ref: str) -> tuple[bytes, int]:
        """(content, size) of a file. Over 1 MB GitHub sends no content (`encoding: none`): the size tells."""
        body = self.request(
            "GET", f"/repos/{quote(owner)}/{quote(repo)}/contents/{url_path(path)}", params={"ref": ref}
        )
        if not isinstance(body, dict) or body.get("type") != "file":
            raise ProviderError(self.name, 400, f"{path} is not a file")
        size = int(body.get("size") or 0)
        if body.get("encoding") == "none":
            return b"", size
        return base64.b64decode(body.get("content") or ""), size

    def compare(self, owner: str, repo: str, base: str, head: str) -> Comparison:
        body = self.request(
            "GET",
            f"/repos/{quote(owner)}/{quote(repo)}/compare/{quote(base, safe='')}...{quote(head, safe='')}",
        )
        return Comparison(
            files=tuple(
                FileChange(
                    filename=str(f.get("filename")),
                    status=f.get("status"),
                    additions=f.get("additions"),
                    deletions=f.get("deletions"),
                    changes=f.get("changes"),
                    previous_filename=f.get("previous_filename"),
                    patch=f.get("patch"),
                )
                for f in body.get("files") or []
            ),
            ahead_by=int(body.get("ahead_by") or 0),
        )

    # -- writing: many files as one commit ----------------------------------------------------------------
    def commit_files(
        self,
        owner: str,
        repo: str,
        branch: str,
        files: dict[str, bytes],
        message: str,
        *,
        parent: tuple[str, str] | None = None,
    ) -> str:
        """One commit on top of the branch head with `files` written (paths not listed stay as they are).
        Text files go inline in the tree, so N text files cost 4 requests: head, tree, commit, ref."""
        base = f"/repos/{quote(owner)}/{quote(repo)}/git"
        if parent is None:
            head = self.commit(owner, repo, branch)
            parent = (head.sha, head.tree_sha)
        head_sha, tree_sha = parent
        entries: list[dict[str, Any]] = []
        for path, content in sorted(files.items()):
            entry: dict[str, Any] = {"path": repo_path(path), "mode": "100644", "type": "blob"}
            if is_text(content):
                entry["content"] = content.decode("utf-8")
            else:
                blob = self.request(
                    "POST",
                    f"{base}/blobs",
                    retry=False,
                    json={"content": base64.b64encode(content).decode(), "encoding": "base64"},
                )
                entry["sha"] = blob["sha"]
            entries.append(entry)
        tree = self.request(
            "POST", f"{base}/trees", retry=False, json={"base_tree": tree_sha, "tree": entries}
        )
        commit = self.request(
            "POST",
            f"{base}/commits",
            retry=False,
            json={"message": message, "tree": tree["sha"], "parents": [head_sha]},
        )
        self.request(
            "PATCH",
            f"{base}/refs/heads/{quote(branch, safe='/')}",
            retry=False,
            json={"sha": commit["sha"], "force": False},
        )
        return str(commit["sha"])
