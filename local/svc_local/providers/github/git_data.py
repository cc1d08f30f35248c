"""The GitHub sandbox's Git Data API: blobs, trees, commits and refs of a repository, as the publish sequence
writes a commit."""

from __future__ import annotations

import base64
from typing import Any

from svc_local.providers.common import (
    json_body,
    now,
    route,
)
from svc_local.providers.github.base import (
    MODES,
    GitHubBase,
    Record,
    _error,
    _not_found,
    _repository,
    _supplied,
)
from svc_local.providers.gitstore import SHA_RE, GitError, GitRepo
from svc_local.sandbox import SandboxRequest, SandboxResponse, json_response


class GitDataRoutes(GitHubBase):
    """The Git Data API routes (/repos/{owner}/{repo}/git/...)."""

    @route("POST", "/github/api/repos/{owner}/{repo}/git/blobs")
    @_repository()
    def create_blob(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        body = _supplied(request, "content", str)
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

    @route("GET", "/github/api/repos/{owner}/{repo}/git/blobs/{sha}")
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

    @route("POST", "/github/api/repos/{owner}/{repo}/git/trees")
    @_repository()
    def create_tree(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        body = _supplied(request, "tree", list)
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

    @route("GET", "/github/api/repos/{owner}/{repo}/git/trees/{sha+}")
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

    @route("POST", "/github/api/repos/{owner}/{repo}/git/commits")
    def create_commit(self, request: SandboxRequest) -> SandboxResponse:
        account, meta, repo = self._open(request)
        body = _supplied(request, "message", str)
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

    @route("GET", "/github/api/repos/{owner}/{repo}/git/commits/{sha}")
    @_repository()
    def get_commit(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        sha = request.params["sha"]
        if repo.kind(sha) != "commit":
            return _not_found()
        return json_response(self._git_commit_json(meta, repo.commit(sha)))

    @route("GET", "/github/api/repos/{owner}/{repo}/git/ref/{ref+}")
    @route("GET", "/github/api/repos/{owner}/{repo}/git/refs/{ref+}")
    @_repository()
    def get_ref(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        ref = f"refs/{request.params['ref']}"
        sha = repo.ref(ref)
        if sha is None:
            return _not_found()
        return json_response(self._ref_json(meta, ref, sha))

    @route("POST", "/github/api/repos/{owner}/{repo}/git/refs")
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

    @route("PATCH", "/github/api/repos/{owner}/{repo}/git/refs/{ref+}")
    @_repository()
    def update_ref(self, request: SandboxRequest, meta: Record, repo: GitRepo) -> SandboxResponse:
        body = _supplied(request, "sha", str)
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
