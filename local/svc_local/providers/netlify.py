"""static_host sandbox (Netlify shape): OAuth, sites linked to a repository of the GitHub sandbox,
environment variables, builds whose deploys move new -> building -> ready, and each ready site served live
by the sandbox at /sites/{name}/ naming the deployed commit."""

from __future__ import annotations

import html as html_escape
import mimetypes
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from svc_local.providers.common import (
    BaseProvider,
    OAuthApp,
    Settings,
    bearer,
    form,
    html,
    iso,
    json_body,
    now,
    owned,
    random_id,
)
from svc_local.providers.github import GitHub
from svc_local.sandbox import SandboxRequest, SandboxResponse, SandboxRoute, json_response

DEFAULT_ACCOUNT = "sandbox-team"


def _error(status: int, message: str) -> SandboxResponse:
    return json_response({"code": status, "message": message}, status)


class Netlify(BaseProvider):
    """Mounted at /netlify: authorize at /netlify/authorize, token at /netlify/oauth/token, API at
    /netlify/api/v1, live sites at /sites/{name}/."""

    name = "netlify"

    def __init__(
        self,
        state_dir: Path | None,
        *,
        client_id: str,
        client_secret: str,
        github: GitHub | None = None,
        build_delay: float = 1.0,
    ) -> None:
        super().__init__(state_dir, {"tokens": {}, "sites": {}, "builds": {}, "deploys": {}, "env": {}})
        self.oauth = OAuthApp(self.state, client_id, client_secret, DEFAULT_ACCOUNT)
        self.github = github
        self.settings = Settings(build_delay=build_delay)
        self._next_build_error: list[str] = []

    # ---- public API

    def issue_token(self, account: str) -> str:
        token = random_id("nfp_", 40)
        with self.state.lock:
            self.data["tokens"][token] = {"account": account, "created_at": now()}
        self.state.save()
        return token

    def oauth_next(self, data: dict[str, Any]) -> dict[str, Any]:
        return self.oauth.queue(data)

    def site_url(self, name: str) -> str:
        return f"{self.public_url}/sites/{name}/"

    # ---- routes

    def routes(self) -> Iterable[SandboxRoute]:
        api = "/netlify/api/v1"
        return [
            SandboxRoute("GET", "/netlify/authorize", self.oauth.authorize_code),
            SandboxRoute("POST", "/netlify/oauth/token", self.token),
            SandboxRoute("GET", f"{api}/user", self.user),
            SandboxRoute("GET", f"{api}/accounts", self.accounts),
            SandboxRoute("GET", f"{api}/sites", self.list_sites),
            SandboxRoute("POST", f"{api}/sites", self.create_site),
            SandboxRoute("GET", f"{api}/sites/{{site_id}}", self.get_site),
            SandboxRoute("PATCH", f"{api}/sites/{{site_id}}", self.update_site),
            SandboxRoute("DELETE", f"{api}/sites/{{site_id}}", self.delete_site),
            SandboxRoute("GET", f"{api}/accounts/{{account_id}}/env", self.list_env),
            SandboxRoute("POST", f"{api}/accounts/{{account_id}}/env", self.create_env),
            SandboxRoute("PUT", f"{api}/accounts/{{account_id}}/env/{{key}}", self.put_env),
            SandboxRoute("DELETE", f"{api}/accounts/{{account_id}}/env/{{key}}", self.delete_env),
            SandboxRoute("POST", f"{api}/sites/{{site_id}}/builds", self.start_build),
            SandboxRoute("GET", f"{api}/builds/{{build_id}}", self.get_build),
            SandboxRoute("GET", f"{api}/deploys/{{deploy_id}}", self.get_deploy),
            SandboxRoute("GET", "/sites/{name}", self.serve_site),
            SandboxRoute("GET", "/sites/{name}/{path+}", self.serve_site),
            *self.settings.routes("netlify"),
            SandboxRoute("POST", "/__admin/netlify/tokens", self.admin_token),
            SandboxRoute("POST", "/__admin/netlify/next-build", self.admin_next_build),
        ]

    # ---- OAuth

    def token(self, request: SandboxRequest) -> SandboxResponse:
        data = form(request)
        if (
            data.get("client_id") != self.oauth.client_id
            or data.get("client_secret") != self.oauth.client_secret
        ):
            return json_response(
                {"error": "invalid_client", "error_description": "Client authentication failed."}, 401
            )
        if data.get("grant_type") != "authorization_code":
            return json_response(
                {"error": "unsupported_grant_type", "error_description": "Unsupported grant type."}, 400
            )
        grant, _why = self.oauth.redeem(data.get("code", ""), data.get("redirect_uri"))
        if grant is None:
            return json_response(
                {
                    "error": "invalid_grant",
                    "error_description": "The provided authorization grant is invalid, expired, revoked, does not "
                    "match the redirection URI used in the authorization request, or was issued to another client.",
                },
                400,
            )
        return json_response(
            {
                "access_token": self.issue_token(grant["account"]),
                "token_type": "Bearer",
                "scope": "public",
                "created_at": int(now()),
            }
        )

    # ---- helpers

    def _account(self, request: SandboxRequest) -> str | SandboxResponse:
        grant = self.data["tokens"].get(bearer(request) or "")
        return str(grant["account"]) if grant else _error(401, "Access Denied: Invalid token")

    def _site(self, request: SandboxRequest) -> tuple[str, dict[str, Any]] | SandboxResponse:
        site = self.data["sites"].get(request.params["site_id"])
        return owned(self._account(request), site, "account_id", _error(404, "Not Found"))

    def _site_json(self, site: dict[str, Any]) -> dict[str, Any]:
        url = self.site_url(site["name"])
        published = self.data["deploys"].get(site.get("published_deploy_id") or "")
        return {
            "id": site["id"],
            "site_id": site["id"],
            "name": site["name"],
            "url": url,
            "ssl_url": url,
            "admin_url": f"{self.public_url}/netlify/app/sites/{site['name']}",
            "deploy_url": url,
            "account_id": site["account_id"],
            "account_slug": site["account_id"],
            "account_name": site["account_id"],
            "state": "current",
            "created_at": site["created_at"],
            "updated_at": site["updated_at"],
            "build_settings": dict(site.get("repo") or {}),
            "deploy_hook": f"{self.public_url}/netlify/api/v1/build_hooks/{site['id']}",
            "published_deploy": self._deploy_json(published) if published else None,
        }

    def _name_taken(self, name: str, except_id: str | None = None) -> bool:
        return any(s["name"] == name and s["id"] != except_id for s in list(self.data["sites"].values()))

    @staticmethod
    def _repo_settings(repo: Any) -> dict[str, Any] | None:
        if not isinstance(repo, dict):
            return None
        return {
            "provider": str(repo.get("provider") or "github"),
            "repo_path": str(repo.get("repo_path") or repo.get("repo") or ""),
            "repo_branch": str(repo.get("repo_branch") or repo.get("branch") or "main"),
            "cmd": str(repo.get("cmd") or ""),
            "dir": str(repo.get("dir") or ""),
            "repo_url": f"https://github.com/{repo.get('repo_path') or ''}",
        }

    # ---- account

    def user(self, request: SandboxRequest) -> SandboxResponse:
        account = self._account(request)
        if isinstance(account, SandboxResponse):
            return account
        return json_response({"id": account, "email": f"{account}@sandbox.test", "full_name": account})

    def accounts(self, request: SandboxRequest) -> SandboxResponse:
        account = self._account(request)
        if isinstance(account, SandboxResponse):
            return account
        return json_response([{"id": account, "slug": account, "name": account, "type_name": "Starter"}])

    # ---- sites

    def list_sites(self, request: SandboxRequest) -> SandboxResponse:
        account = self._account(request)
        if isinstance(account, SandboxResponse):
            return account
        wanted = request.arg("name") or ""
        sites = [
            self._site_json(s)
            for s in list(self.data["sites"].values())
            if s["account_id"] == account and wanted in s["name"]
        ]
        return json_response(sites)

    def create_site(self, request: SandboxRequest) -> SandboxResponse:
        account = self._account(request)
        if isinstance(account, SandboxResponse):
            return account
        body = json_body(request)
        if body is not None and not isinstance(body, dict):
            return _error(400, "Invalid JSON body")
        body = body or {}
        name = body.get("name") or random_id("site-", 8)
        if not isinstance(name, str) or not name.replace("-", "").isalnum() or name != name.lower():
            return json_response({"errors": {"subdomain": ["is invalid"]}}, 422)
        with self.state.lock:
            if self._name_taken(name):
                return json_response({"errors": {"subdomain": ["must be unique"]}}, 422)
            site = {
                "id": str(uuid.uuid4()),
                "name": name,
                "account_id": account,
                "repo": self._repo_settings(body.get("repo")),
                "created_at": iso(),
                "updated_at": iso(),
                "published_deploy_id": None,
            }
            self.data["sites"][site["id"]] = site
        self.state.save()
        return json_response(self._site_json(site), 201)

    def get_site(self, request: SandboxRequest) -> SandboxResponse:
        found = self._site(request)
        if isinstance(found, SandboxResponse):
            return found
        return json_response(self._site_json(found[1]))

    def update_site(self, request: SandboxRequest) -> SandboxResponse:
        found = self._site(request)
        if isinstance(found, SandboxResponse):
            return found
        site = found[1]
        body = json_body(request)
        if not isinstance(body, dict):
            return _error(400, "Invalid JSON body")
        with self.state.lock:
            name = body.get("name")
            if isinstance(name, str) and name != site["name"]:
                if self._name_taken(name, site["id"]):
                    return json_response({"errors": {"subdomain": ["must be unique"]}}, 422)
                site["name"] = name
            if "repo" in body:
                site["repo"] = self._repo_settings(body["repo"])
            site["updated_at"] = iso()
        self.state.save()
        return json_response(self._site_json(site))

    def delete_site(self, request: SandboxRequest) -> SandboxResponse:
        found = self._site(request)
        if isinstance(found, SandboxResponse):
            return found
        with self.state.lock:
            self.data["sites"].pop(found[1]["id"], None)
            self.data["env"].pop(found[1]["id"], None)
        self.state.save()
        return SandboxResponse(204)

    # ---- environment variables

    def _env_site(self, request: SandboxRequest) -> dict[str, Any] | SandboxResponse:
        account = self._account(request)
        if isinstance(account, SandboxResponse):
            return account
        if request.params["account_id"] != account:
            return _error(404, "Not Found")
        site = self.data["sites"].get(request.arg("site_id") or "")
        if site is None or site["account_id"] != account:
            return _error(404, "Not Found")
        return self.data["env"].setdefault(site["id"], {})

    @staticmethod
    def _env_item(key: str, item: dict[str, Any]) -> dict[str, Any]:
        return {
            "key": key,
            "scopes": ["builds", "functions", "runtime", "post-processing"],
            "values": item["values"],
            "is_secret": item["is_secret"],
            "updated_at": item["updated_at"],
        }

    @staticmethod
    def _values(raw: Any) -> list[dict[str, Any]] | None:
        if not isinstance(raw, list) or not raw:
            return None
        values = []
        for value in raw:
            if not isinstance(value, dict) or not isinstance(value.get("value"), str):
                return None
            values.append(
                {"id": random_id("", 12), "value": value["value"], "context": value.get("context", "all")}
            )
        return values

    def list_env(self, request: SandboxRequest) -> SandboxResponse:
        env = self._env_site(request)
        if isinstance(env, SandboxResponse):
            return env
        return json_response([self._env_item(k, v) for k, v in sorted(env.items())])

    def create_env(self, request: SandboxRequest) -> SandboxResponse:
        env = self._env_site(request)
        if isinstance(env, SandboxResponse):
            return env
        body = json_body(request)
        if not isinstance(body, list):
            return _error(400, "Request body must be a list of environment variables")
        created: dict[str, dict[str, Any]] = {}
        for item in body:
            values = self._values(item.get("values")) if isinstance(item, dict) else None
            if values is None or not isinstance(item.get("key"), str) or not item["key"]:
                return _error(400, "Each variable needs a key and values")
            if item["key"] in env or item["key"] in created:
                return _error(422, f"Environment variable {item['key']} already exists")
            created[item["key"]] = {
                "values": values,
                "is_secret": bool(item.get("is_secret")),
                "updated_at": iso(),
            }
        with self.state.lock:
            env.update(created)
        self.state.save()
        return json_response([self._env_item(k, v) for k, v in created.items()], 201)

    def put_env(self, request: SandboxRequest) -> SandboxResponse:
        env = self._env_site(request)
        if isinstance(env, SandboxResponse):
            return env
        key = request.params["key"]
        if key not in env:
            return _error(404, "Environment variable not found")
        body = json_body(request)
        values = self._values(body.get("values")) if isinstance(body, dict) else None
        if values is None:
            return _error(400, "values are required")
        with self.state.lock:
            env[key] = {
                "values": values,
                "is_secret": bool(body.get("is_secret", env[key]["is_secret"])),
                "updated_at": iso(),
            }
        self.state.save()
        return json_response(self._env_item(key, env[key]))

    def delete_env(self, request: SandboxRequest) -> SandboxResponse:
        env = self._env_site(request)
        if isinstance(env, SandboxResponse):
            return env
        with self.state.lock:
            env.pop(request.params["key"], None)
        self.state.save()
        return SandboxResponse(204)

    # ---- builds and deploys

    def start_build(self, request: SandboxRequest) -> SandboxResponse:
        found = self._site(request)
        if isinstance(found, SandboxResponse):
            return found
        site = found[1]
        repo = site.get("repo") or {}
        if not repo.get("repo_path"):
            return _error(422, "This site is not linked to a repository; link one before triggering a build")
        sha, error = None, None
        repository = self.github.repository(repo["repo_path"]) if self.github else None
        if repository is None:
            error = f"Failed to prepare repo: repository {repo['repo_path']} not found"
        else:
            sha = repository[1].ref(f"refs/heads/{repo['repo_branch']}")
            if sha is None:
                error = f"Failed to prepare repo: branch {repo['repo_branch']} not found"
        with self.state.lock:
            if error is None and self._next_build_error:
                error = self._next_build_error.pop(0)
            build_id, deploy_id = uuid.uuid4().hex[:24], uuid.uuid4().hex[:24]
            started = now()
            self.data["builds"][build_id] = {
                "id": build_id,
                "deploy_id": deploy_id,
                "sha": sha,
                "site_id": site["id"],
            }
            self.data["deploys"][deploy_id] = {
                "id": deploy_id,
                "build_id": build_id,
                "site_id": site["id"],
                "sha": sha,
                "branch": repo.get("repo_branch"),
                "dir": repo.get("dir") or "",
                "created_at_ts": started,
                "ready_at_ts": started + float(self.settings["build_delay"]),
                "error": error,
                "published": False,
            }
        self.state.save()
        self.later(float(self.settings["build_delay"]) + 0.01, lambda: self._advance(deploy_id))
        return json_response(self._build_json(self.data["builds"][build_id]))

    def _advance(self, deploy_id: str) -> dict[str, Any]:
        """Publish a deploy whose build time is up (called by its timer and on every read)."""
        with self.state.lock:
            deploy = self.data["deploys"][deploy_id]
            if not deploy["published"] and deploy["error"] is None and now() >= deploy["ready_at_ts"]:
                deploy["published"] = True
                site = self.data["sites"].get(deploy["site_id"])
                if site is not None:
                    site["published_deploy_id"] = deploy_id
                self.state.save()
            return deploy

    def _state(self, deploy: dict[str, Any]) -> str:
        elapsed = now() - deploy["created_at_ts"]
        total = deploy["ready_at_ts"] - deploy["created_at_ts"]
        if elapsed < total / 4:
            return "new"
        if elapsed < total:
            return "building"
        return "error" if deploy["error"] else "ready"

    def _deploy_json(self, deploy: dict[str, Any]) -> dict[str, Any]:
        site = self.data["sites"].get(deploy["site_id"], {"name": "deleted", "id": deploy["site_id"]})
        url = self.site_url(site["name"])
        state = self._state(deploy)
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
            "branch": deploy["branch"],
            "context": "production",
            "error_message": deploy["error"] if state == "error" else None,
            "created_at": iso(deploy["created_at_ts"]),
            "published_at": iso(deploy["ready_at_ts"]) if state == "ready" else None,
        }

    def _build_json(self, build: dict[str, Any]) -> dict[str, Any]:
        deploy = self.data["deploys"][build["deploy_id"]]
        state = self._state(deploy)
        return {
            "id": build["id"],
            "deploy_id": build["deploy_id"],
            "sha": build["sha"],
            "done": state in ("ready", "error"),
            "error": deploy["error"] if state == "error" else None,
            "created_at": iso(deploy["created_at_ts"]),
        }

    def _of_own_site(self, request: SandboxRequest, kind: str) -> dict[str, Any] | SandboxResponse:
        """The build or deploy (`kind`: "build" | "deploy") the path names when its site is the token's
        account's, or the error Netlify answers."""
        account = self._account(request)
        if isinstance(account, SandboxResponse):
            return account
        record = self.data[f"{kind}s"].get(request.params[f"{kind}_id"])
        site = self.data["sites"].get(record["site_id"]) if record else None
        if record is None or site is None or site["account_id"] != account:
            return _error(404, "Not Found")
        return record

    def get_build(self, request: SandboxRequest) -> SandboxResponse:
        build = self._of_own_site(request, "build")
        if isinstance(build, SandboxResponse):
            return build
        self._advance(build["deploy_id"])
        return json_response(self._build_json(build))

    def get_deploy(self, request: SandboxRequest) -> SandboxResponse:
        deploy = self._of_own_site(request, "deploy")
        if isinstance(deploy, SandboxResponse):
            return deploy
        return json_response(self._deploy_json(self._advance(deploy["id"])))

    # ---- the live site

    def serve_site(self, request: SandboxRequest) -> SandboxResponse:
        site = next(
            (s for s in list(self.data["sites"].values()) if s["name"] == request.params["name"]), None
        )
        deploy = self.data["deploys"].get(site.get("published_deploy_id") or "") if site else None
        if site is None or deploy is None:
            return html("<h1>Not Found</h1><p>Looks like you followed a broken link.</p>", 404)
        sha = deploy["sha"]
        headers = {"X-Deploy-Id": deploy["id"], "X-Commit-Sha": sha or ""}
        path = request.params.get("path", "").strip("/")
        found = (
            self.github.repository(site["repo"]["repo_path"]) if self.github and site.get("repo") else None
        )
        if found is not None and sha:
            prefix = deploy["dir"].strip("/")
            candidate = "/".join(p for p in (prefix, path or "index.html") if p)
            content = self.github.read_file(found[1], sha, candidate) if self.github else None
            if content is None and path and not path.endswith(".html"):
                content = (
                    self.github.read_file(found[1], sha, f"{candidate}/index.html") if self.github else None
                )
            if content is not None:
                kind = mimetypes.guess_type(candidate)[0] or "application/octet-stream"
                if kind == "text/html":
                    content += f"\n<!-- deployed commit {sha} -->\n".encode()
                return SandboxResponse(200, content, {"Content-Type": kind, **headers})
        if path:
            return html("<h1>Not Found</h1><p>Looks like you followed a broken link.</p>", 404)
        name = html_escape.escape(site["name"])
        page = (
            f"<!doctype html><html><head><title>{name}</title></head><body>"
            f'<h1>{name}</h1><p>Deployed commit <code id="commit">{sha}</code> '
            f"from {html_escape.escape(site['repo']['repo_path'] if site.get('repo') else '')}.</p></body></html>"
        )
        response = html(page)
        response.headers.update(headers)
        return response

    # ---- admin

    def admin_token(self, request: SandboxRequest) -> SandboxResponse:
        body = json_body(request)
        account = body.get("account") if isinstance(body, dict) else None
        account = account if isinstance(account, str) and account else DEFAULT_ACCOUNT
        return json_response({"access_token": self.issue_token(account), "account_id": account}, 201)

    def admin_next_build(self, request: SandboxRequest) -> SandboxResponse:
        """Make the next build fail: {error: "message"}."""
        body = json_body(request)
        error = body.get("error") if isinstance(body, dict) else None
        if not isinstance(error, str) or not error:
            return json_response({"error": "invalid_request", "message": "error is required"}, 400)
        with self.state.lock:
            self._next_build_error.append(error)
        return json_response({"queued": error}, 201)
