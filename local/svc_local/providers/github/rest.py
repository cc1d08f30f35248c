"""The GitHub sandbox's REST routes of an account and its repositories: the user and emails, repositories, a
commit, a file's or folder's contents and a comparison of two commits."""

from __future__ import annotations

import base64
import functools
import re

from svc_local.providers.common import (
    iso,
    json_body_as,
    now,
    route,
)
from svc_local.providers.github.base import GitHubBase, Record, _error, _not_found, _repository, _signed_in
from svc_local.providers.gitstore import Entry, GitRepo
from svc_local.sandbox import SandboxRequest, SandboxResponse, json_response


class RestRoutes(GitHubBase):
    """The REST routes of the signed-in account and of its repositories' contents."""

    # ---- account

    @route("GET", "/github/api/user")
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

    @route("GET", "/github/api/user/emails")
    @_signed_in
    def get_emails(self, request: SandboxRequest, account: Record) -> SandboxResponse:
        return json_response(
            [{"email": account["email"], "primary": True, "verified": True, "visibility": "private"}]
        )

    # ---- repositories

    @route("POST", "/github/api/user/repos")
    @_signed_in
    def create_repo(self, request: SandboxRequest, account: Record) -> SandboxResponse:
        body = json_body_as(request, dict, _error(400, "Problems parsing JSON"))
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

    @route("GET", "/github/api/user/repos")
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

    @route("GET", "/github/api/repos/{owner}/{repo}")
    @_repository(git_data=False)
    def get_repo(self, request: SandboxRequest, meta: Record, _repo: GitRepo) -> SandboxResponse:
        return json_response(self._repo_json(meta))

    @route("GET", "/github/api/repos/{owner}/{repo}/commits/{ref+}")
    @_repository()
    def get_rest_commit(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        ref = request.params["ref"]
        sha = repo.resolve(ref)
        if sha is None:
            return _error(422, f"No commit found for SHA: {ref}")
        return json_response(self._rest_commit_json(meta, repo.commit(sha)))

    # ---- Git Data API

    @route("GET", "/github/api/repos/{owner}/{repo}/contents")
    @route("GET", "/github/api/repos/{owner}/{repo}/contents/{path+}")
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

    @route("GET", "/github/api/repos/{owner}/{repo}/compare/{spec+}")
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
