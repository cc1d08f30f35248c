"""The static_host sandbox (Netlify shape): OAuth, sites linked to a repository of the GitHub sandbox,
environment variables, builds that run the repository's own build, and each site's live deploy served at
/sites/{name}/."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from svc_local.providers.common import form, html, iso, json_body, json_body_as, now, random_id, route
from svc_local.providers.netlify.base import DEFAULT_ACCOUNT, error
from svc_local.providers.netlify.deploys import Deploys
from svc_local.providers.netlify.serve import NOT_FOUND, serve_deploy
from svc_local.sandbox import Sandbox, SandboxRequest, SandboxResponse, SandboxRoute, json_response


class Netlify(Deploys):
    """Mounted at /netlify: authorize at /netlify/authorize, token at /netlify/oauth/token, API at
    /netlify/api/v1, build hooks at /netlify/api/v1/build_hooks/{id}, live sites at /sites/{name}/."""

    def attach(self, sandbox: Sandbox) -> None:
        """Once mounted: pushes to the GitHub sandbox start builds, and a site whose live deploy has no files
        (kept from before builds ran) builds again."""
        super().attach(sandbox)
        if self.github is not None:
            self.github.ref_listeners.append(self.on_push)
        for site in list(self.data["sites"].values()):
            deploy = self.data["deploys"].get(site.get("published_deploy_id") or "")
            linked = (site.get("repo") or {}).get("repo_path")
            if deploy is not None and linked and not self.files(deploy["id"]).is_dir():
                sha, problem = self._branch_head(site)
                self.enqueue(site, sha, "api", problem)

    def issue_token(self, account: str) -> str:
        token = random_id("nfp_", 40)
        with self.state.lock:
            self.data["tokens"][token] = {"account": account, "created_at": now()}
        self.state.save()
        return token

    def oauth_next(self, data: dict[str, Any]) -> dict[str, Any]:
        return self.oauth.queue(data)

    def routes(self) -> Iterable[SandboxRoute]:
        return [
            *super().routes(),
            SandboxRoute("GET", "/netlify/authorize", self.oauth.authorize_code),
            *self.settings.routes("netlify"),
        ]

    # ---- OAuth

    @route("POST", "/netlify/oauth/token")
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

    # ---- sites

    def _site_json(self, site: dict[str, Any]) -> dict[str, Any]:
        url = self.site_url(site["name"])
        published = self.data["deploys"].get(site.get("published_deploy_id") or "")
        if not site.get("hook_id"):
            site["hook_id"] = self.hook_id()
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
            "deploy_hook": f"{self.public_url}/netlify/api/v1/build_hooks/{site['hook_id']}",
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

    @route("GET", "/netlify/api/v1/user")
    def user(self, request: SandboxRequest) -> SandboxResponse:
        account = self._account(request)
        return json_response({"id": account, "email": f"{account}@sandbox.test", "full_name": account})

    @route("GET", "/netlify/api/v1/accounts")
    def accounts(self, request: SandboxRequest) -> SandboxResponse:
        account = self._account(request)
        return json_response([{"id": account, "slug": account, "name": account, "type_name": "Starter"}])

    @route("GET", "/netlify/api/v1/sites")
    def list_sites(self, request: SandboxRequest) -> SandboxResponse:
        account = self._account(request)
        wanted = request.arg("name") or ""
        sites = [
            self._site_json(s)
            for s in list(self.data["sites"].values())
            if s["account_id"] == account and wanted in s["name"]
        ]
        return json_response(sites)

    @route("POST", "/netlify/api/v1/sites")
    def create_site(self, request: SandboxRequest) -> SandboxResponse:
        account = self._account(request)
        body = json_body(request)
        if body is not None and not isinstance(body, dict):
            return error(400, "Invalid JSON body")
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
                "hook_id": self.hook_id(),
            }
            self.data["sites"][site["id"]] = site
        self.state.save()
        return json_response(self._site_json(site), 201)

    @route("GET", "/netlify/api/v1/sites/{site_id}")
    def get_site(self, request: SandboxRequest) -> SandboxResponse:
        return json_response(self._site_json(self._site(request)))

    @route("PATCH", "/netlify/api/v1/sites/{site_id}")
    def update_site(self, request: SandboxRequest) -> SandboxResponse:
        site = self._site(request)
        body = json_body_as(request, dict, error(400, "Invalid JSON body"))
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

    @route("DELETE", "/netlify/api/v1/sites/{site_id}")
    def delete_site(self, request: SandboxRequest) -> SandboxResponse:
        site = self._site(request)
        with self.state.lock:
            self.data["sites"].pop(site["id"], None)
            self.data["env"].pop(site["id"], None)
        self.state.save()
        return SandboxResponse(204)

    # ---- the live site

    @route("*", "/sites/{name}")
    @route("*", "/sites/{name}/{path+}")
    def serve_site(self, request: SandboxRequest) -> SandboxResponse:
        name = request.params["name"]
        site = next((s for s in list(self.data["sites"].values()) if s["name"] == name), None)
        live = self.published(site) if site else None
        if site is None or live is None:
            return html(NOT_FOUND, 404)
        deploy, files = live
        response = serve_deploy(request, files, f"/sites/{name}", self.edge)
        response.headers.update({"X-Nf-Deploy-Id": deploy["id"], "X-Commit-Sha": deploy["sha"] or ""})
        return response

    # ---- admin

    @route("POST", "/__admin/netlify/tokens")
    def admin_token(self, request: SandboxRequest) -> SandboxResponse:
        body = json_body(request)
        account = body.get("account") if isinstance(body, dict) else None
        account = account if isinstance(account, str) and account else DEFAULT_ACCOUNT
        return json_response({"access_token": self.issue_token(account), "account_id": account}, 201)

    @route("POST", "/__admin/netlify/next-build")
    def admin_next_build(self, request: SandboxRequest) -> SandboxResponse:
        """Make the next build fail: {error: "message"}."""
        body = json_body(request)
        failure = body.get("error") if isinstance(body, dict) else None
        if not isinstance(failure, str) or not failure:
            return json_response({"error": "invalid_request", "message": "error is required"}, 400)
        with self.state.lock:
            self._next_build_error.append(failure)
        return json_response({"queued": failure}, 201)
