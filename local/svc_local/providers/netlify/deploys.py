"""Builds and deploys of the static_host sandbox: started by the API, by a push to the linked branch
(continuous deployment) or by a build hook; run one at a time by a worker as the real host runs them; each
deploy kept with its commit, state and log; the last good one live; an earlier one restored on request."""

from __future__ import annotations

import queue
import shutil
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from svc_local.providers.common import iso, now, random_id, route
from svc_local.providers.netlify.base import NetlifyBase, error
from svc_local.providers.netlify.build import run_build
from svc_local.providers.netlify.env import EnvRoutes
from svc_local.providers.netlify.redirects import Rule
from svc_local.providers.netlify.serve import LiveDeploy
from svc_local.sandbox import Refused, SandboxRequest, SandboxResponse, json_response

_STOP = ""


class Deploys(EnvRoutes, NetlifyBase):
    _queue: queue.Queue[str]
    _worker: threading.Thread | None = None

    def _start_worker(self) -> None:
        with self.state.lock:
            if self._worker is not None:
                return
            self._queue = queue.Queue()
            for deploy in self.data["deploys"].values():  # a restart ends the builds it interrupted
                if deploy.get("state") in ("new", "building"):
                    deploy.update(state="error", error="Build was interrupted: the build system restarted")
            self._worker = threading.Thread(target=self._work, name="netlify-builds", daemon=True)
            self._worker.start()

    def stop(self) -> None:
        if self._worker is not None:
            self._queue.put(_STOP)
            self._worker.join(timeout=5)
        super().stop()
        if self._own_files:
            shutil.rmtree(self.deploy_root, ignore_errors=True)

    # ---- starting builds

    def enqueue(
        self, site: dict[str, Any], sha: str | None, trigger: str, error_text: str | None = None
    ) -> dict[str, Any]:
        """A new deploy of `site` at `sha` (None: the branch could not be read; `error_text` says why)."""
        self._start_worker()
        repo = site.get("repo") or {}
        title = None
        found = self.github.repository(repo.get("repo_path", "")) if self.github and sha else None
        if found is not None and sha:
            title = found[1].commit(sha).message.split("\n", 1)[0]
        with self.state.lock:
            build_id, deploy_id = uuid.uuid4().hex[:24], uuid.uuid4().hex[:24]
            self.data["builds"][build_id] = {
                "id": build_id,
                "deploy_id": deploy_id,
                "sha": sha,
                "site_id": site["id"],
            }
            deploy = {
                "id": deploy_id,
                "build_id": build_id,
                "site_id": site["id"],
                "sha": sha,
                "branch": repo.get("repo_branch"),
                "title": title,
                "trigger": trigger,
                "state": "error" if error_text else "new",
                "error": error_text,
                "log": error_text or "",
                "rules": [],
                "created_at_ts": now(),
                "done_at_ts": now() if error_text else None,
            }
            self.data["deploys"][deploy_id] = deploy
        self.state.save()
        if not error_text:
            self._queue.put(deploy_id)
        return deploy

    def on_push(self, full_name: str, ref: str, sha: str) -> None:
        """Continuous deployment: every site linked to this repository's branch builds the pushed commit."""
        for site in list(self.data["sites"].values()):
            repo = site.get("repo") or {}
            if (
                repo.get("repo_path", "").lower() == full_name.lower()
                and ref == f"refs/heads/{repo.get('repo_branch')}"
            ):
                self.enqueue(site, sha, "push")

    def _branch_head(self, site: dict[str, Any]) -> tuple[str | None, str | None]:
        repo = site.get("repo") or {}
        found = self.github.repository(repo["repo_path"]) if self.github else None
        if found is None:
            return None, f"Failed to prepare repo: repository {repo['repo_path']} not found"
        sha = found[1].ref(f"refs/heads/{repo['repo_branch']}")
        return (
            (sha, None) if sha else (None, f"Failed to prepare repo: branch {repo['repo_branch']} not found")
        )

    @route("POST", "/netlify/api/v1/sites/{site_id}/builds")
    def start_build(self, request: SandboxRequest) -> SandboxResponse:
        site = self._site(request)
        if not (site.get("repo") or {}).get("repo_path"):
            return error(422, "This site is not linked to a repository; link one before triggering a build")
        sha, problem = self._branch_head(site)
        deploy = self.enqueue(site, sha, "api", problem)
        return json_response(self._build_json(self.data["builds"][deploy["build_id"]]))

    @route("POST", "/netlify/api/v1/build_hooks/{hook_id}")
    def build_hook(self, request: SandboxRequest) -> SandboxResponse:
        """POST to a site's deploy_hook URL: a build of its branch head (no token: the URL is the secret)."""
        site = next(
            (s for s in list(self.data["sites"].values()) if s.get("hook_id") == request.params["hook_id"]),
            None,
        )
        if site is None or not (site.get("repo") or {}).get("repo_path"):
            return error(404, "Not Found")
        sha, problem = self._branch_head(site)
        self.enqueue(site, sha, "hook", problem)
        return SandboxResponse(200, b"", {})

    @staticmethod
    def hook_id() -> str:
        return random_id("", 24, "0123456789abcdef")

    # ---- the worker

    def _work(self) -> None:
        while True:
            deploy_id = self._queue.get()
            if deploy_id == _STOP:
                return
            try:
                self._build(deploy_id)
            except Exception as exc:  # noqa: BLE001 - one broken build must not stop the others
                self._finish(deploy_id, f"Build failed in the build system: {exc!r}", "", [])

    def _build(self, deploy_id: str) -> None:
        queued = time.monotonic()
        while time.monotonic() - queued < float(self.settings["build_delay"]):  # read as it waits: a longer
            time.sleep(0.05)  # delay holds the builds already queued, a shorter one releases them
        with self.state.lock:
            deploy = self.data["deploys"][deploy_id]
            site = self.data["sites"].get(deploy["site_id"])
            forced = self._next_build_error.pop(0) if self._next_build_error else None
            deploy.update(state="building", started_at_ts=now())
        self.state.save()
        if site is None:
            return self._finish(deploy_id, "The site was deleted", "", [])
        if forced is not None:
            return self._finish(deploy_id, forced, forced, [])
        repo = site.get("repo") or {}
        found = self.github.repository(repo.get("repo_path", "")) if self.github else None
        if found is None:
            return self._finish(deploy_id, "Failed to prepare repo: repository not found", "", [])
        url = self.site_url(site["name"]).rstrip("/")
        environment = {
            **self.site_environment(site["id"]),
            "NETLIFY": "true",
            "CONTEXT": "production",
            "BRANCH": str(deploy["branch"]),
            "HEAD": str(deploy["branch"]),
            "COMMIT_REF": str(deploy["sha"]),
            "BUILD_ID": deploy["build_id"],
            "DEPLOY_ID": deploy_id,
            "SITE_ID": site["id"],
            "SITE_NAME": site["name"],
            "URL": url,
            "DEPLOY_URL": url,
            "DEPLOY_PRIME_URL": url,
        }
        result = run_build(
            found[1],
            deploy["sha"],
            site_cmd=str(repo.get("cmd") or ""),
            site_dir=str(repo.get("dir") or ""),
            environment=environment,
            timeout=float(self.settings["build_timeout"]),
            output=self.files(deploy_id),
        )
        self._finish(deploy_id, result.error, result.log, result.rules)

    def files(self, deploy_id: str) -> Path:
        return self.deploy_root / deploy_id

    def _finish(self, deploy_id: str, failure: str | None, log: str, rules: list[Rule]) -> None:
        with self.state.lock:
            deploy = self.data["deploys"][deploy_id]
            deploy.update(
                state="error" if failure else "ready",
                error=failure,
                log=log,
                rules=[r.json() for r in rules],
                done_at_ts=now(),
            )
            site = self.data["sites"].get(deploy["site_id"])
            if failure is None and site is not None:
                site["published_deploy_id"] = deploy_id
                deploy["published_at_ts"] = now()
                self.went_live()
        self.state.save()

    # ---- reading deploys

    def _deploy_json(self, deploy: dict[str, Any]) -> dict[str, Any]:
        site = self.data["sites"].get(deploy["site_id"], {"name": "deleted", "id": deploy["site_id"]})
        url = self.site_url(site["name"])
        state = deploy["state"]
        repo_path = (site.get("repo") or {}).get("repo_path") or ""
        return {
            "id": deploy["id"],
            "site_id": deploy["site_id"],
            "build_id": deploy["build_id"],
            "state": state,
            "name": site["name"],
            "url": url,
            "ssl_url": url,
            "deploy_url": url,
            "deploy_ssl_url": url,
            "admin_url": f"{self.public_url}/netlify/app/sites/{site['name']}",
            "commit_ref": deploy["sha"],
            "commit_url": f"https://github.com/{repo_path}/commit/{deploy['sha']}" if deploy["sha"] else None,
            "branch": deploy["branch"],
            "title": deploy.get("title"),
            "context": "production",
            "published": site.get("published_deploy_id") == deploy["id"],
            "error_message": deploy["error"] if state == "error" else None,
            "created_at": iso(deploy["created_at_ts"]),
            "updated_at": iso(
                deploy.get("done_at_ts") or deploy.get("started_at_ts") or deploy["created_at_ts"]
            ),
            "published_at": iso(deploy["published_at_ts"]) if deploy.get("published_at_ts") else None,
            "deploy_time": (
                int(deploy["done_at_ts"] - deploy["started_at_ts"])
                if deploy.get("done_at_ts") and deploy.get("started_at_ts")
                else None
            ),
            "log_access_attributes": {"type": "sandbox", "path": f"/builds/{deploy['build_id']}/log"},
        }

    def _build_json(self, build: dict[str, Any]) -> dict[str, Any]:
        deploy = self.data["deploys"][build["deploy_id"]]
        state = deploy["state"]
        return {
            "id": build["id"],
            "deploy_id": build["deploy_id"],
            "sha": build["sha"],
            "done": state in ("ready", "error"),
            "error": deploy["error"] if state == "error" else None,
            "created_at": iso(deploy["created_at_ts"]),
        }

    def _of_own_site(self, request: SandboxRequest, kind: str) -> dict[str, Any]:
        """The build or deploy (`kind`: "build" | "deploy") the path names when its site is the token's
        account's (Refused with the error the real host answers)."""
        account = self._account(request)
        record = self.data[f"{kind}s"].get(request.params[f"{kind}_id"])
        site = self.data["sites"].get(record["site_id"]) if record else None
        if record is None or site is None or site["account_id"] != account:
            raise Refused(error(404, "Not Found"))
        return record

    @route("GET", "/netlify/api/v1/builds/{build_id}")
    def get_build(self, request: SandboxRequest) -> SandboxResponse:
        return json_response(self._build_json(self._of_own_site(request, "build")))

    @route("GET", "/netlify/api/v1/builds/{build_id}/log")
    def build_log(self, request: SandboxRequest) -> SandboxResponse:
        build = self._of_own_site(request, "build")
        deploy = self.data["deploys"][build["deploy_id"]]
        return json_response({"log": deploy.get("log") or "", "done": deploy["state"] in ("ready", "error")})

    @route("GET", "/netlify/api/v1/deploys/{deploy_id}")
    def get_deploy(self, request: SandboxRequest) -> SandboxResponse:
        return json_response(self._deploy_json(self._of_own_site(request, "deploy")))

    @route("GET", "/netlify/api/v1/sites/{site_id}/deploys")
    def list_deploys(self, request: SandboxRequest) -> SandboxResponse:
        """GET /sites/{id}/deploys: newest first, `page` and `per_page` as the real API (100 at most)."""
        site = self._site(request)
        try:
            page = max(int(request.arg("page") or 1), 1)
            per_page = min(max(int(request.arg("per_page") or 100), 1), 100)
        except ValueError:
            return error(400, "page and per_page must be numbers")
        deploys = sorted(
            (d for d in list(self.data["deploys"].values()) if d["site_id"] == site["id"]),
            key=lambda d: float(d["created_at_ts"]),
            reverse=True,
        )
        chosen = deploys[(page - 1) * per_page : page * per_page]
        return json_response([self._deploy_json(d) for d in chosen])

    @route("POST", "/netlify/api/v1/sites/{site_id}/deploys/{deploy_id}/restore")
    def restore_deploy(self, request: SandboxRequest) -> SandboxResponse:
        """POST /sites/{id}/deploys/{deploy_id}/restore: an earlier ready deploy live again."""
        site = self._site(request)
        deploy = self.data["deploys"].get(request.params["deploy_id"])
        if deploy is None or deploy["site_id"] != site["id"]:
            return error(404, "Not Found")
        if deploy["state"] != "ready":
            return error(422, "Only a deploy that is ready can be published")
        with self.state.lock:
            site["published_deploy_id"] = deploy["id"]
            deploy["published_at_ts"] = now()
            self.went_live()
        self.state.save()
        return json_response(self._deploy_json(deploy))

    def published(self, site: dict[str, Any]) -> tuple[dict[str, Any], LiveDeploy] | None:
        deploy = self.data["deploys"].get(site.get("published_deploy_id") or "")
        if deploy is None:
            return None
        live = self.live.get(deploy["id"])
        if live is None:
            root = self.files(deploy["id"])
            if not root.is_dir():
                return None
            live = self.live[deploy["id"]] = LiveDeploy(root, [Rule.of(r) for r in deploy.get("rules") or []])
        return deploy, live
