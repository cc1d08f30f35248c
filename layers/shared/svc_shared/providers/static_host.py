"""static_host adapter: the Netlify API (sites linked to a repository, environment, builds, deploys)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from svc_shared.providers.http import HttpPool, OAuthWebFlow, Provider

READY_STATES = frozenset({"ready"})
FAILED_STATES = frozenset({"error"})


@dataclass(frozen=True)
class Site:
    id: str
    account_id: str
    name: str
    url: str | None
    ssl_url: str | None
    repo_path: str | None  # the repository it builds from (owner/name), None when none is linked
    deploy_hook: str | None = None  # POSTed to build the site again (the shop's storefront after a change)


@dataclass(frozen=True)
class Build:
    id: str | None
    deploy_id: str | None  # the deploy the build produces


@dataclass(frozen=True)
class Deploy:
    id: str
    state: str | None  # READY_STATES, FAILED_STATES, or on the way
    ssl_url: str | None
    deploy_ssl_url: str | None  # this deploy's own address
    commit_ref: str | None = None  # the commit it builds
    title: str | None = None  # that commit's subject
    created_at: str | None = None  # ISO 8601
    error_message: str | None = None  # why its build failed
    build_id: str | None = None  # where its build log is


def _deploy(body: dict[str, Any], deploy_id: str = "") -> Deploy:
    return Deploy(
        id=str(body.get("id") or deploy_id),
        state=body.get("state"),
        ssl_url=body.get("ssl_url"),
        deploy_ssl_url=body.get("deploy_ssl_url"),
        commit_ref=_text(body.get("commit_ref")),
        title=_text(body.get("title")),
        created_at=_text(body.get("created_at")),
        error_message=_text(body.get("error_message")),
        build_id=_text(body.get("build_id")),
    )


def _site(body: dict[str, Any]) -> Site:
    return Site(
        id=str(body["id"]),
        account_id=str(body["account_id"]),
        name=str(body.get("name")),
        url=body.get("url"),
        ssl_url=body.get("ssl_url"),
        repo_path=(body.get("build_settings") or {}).get("repo_path"),
        deploy_hook=body.get("deploy_hook") or None,
    )


class StaticHostOAuth(OAuthWebFlow):
    """Authorize on the app host; exchange on the API host (`token_url`)."""

    name = "static_host"
    authorize_path = "/authorize"
    authorize_asks = {"response_type": "code"}

    def __init__(self, base_url: str, token_url: str, *, http: HttpPool | None = None) -> None:
        super().__init__(base_url, http=http)
        self.token_url = token_url

    def exchange(self, *, client_id: str, client_secret: str, code: str, redirect_uri: str) -> dict[str, Any]:
        return self.request(
            "POST",
            "",
            url=self.token_url,
            retry=False,
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect_uri,
                "client_id": client_id,
                "client_secret": client_secret,
            },
        )


class StaticHost(Provider):
    name = "static_host"

    def find_site(self, name: str) -> Site | None:
        """The site of exactly this name (the API filters by substring)."""
        sites = self.request("GET", "/sites", params={"name": name, "filter": "all"})
        return next((_site(s) for s in sites or [] if s.get("name") == name), None)

    def create_site(
        self, *, name: str, repo_path: str, branch: str, cmd: str = "", publish_dir: str = ""
    ) -> Site:
        body = self.request(
            "POST",
            "/sites",
            retry=False,
            json={
                "name": name,
                "repo": {
                    "provider": "github",
                    "repo_path": repo_path,
                    "repo_branch": branch,
                    "cmd": cmd,
                    "dir": publish_dir,
                },
            },
        )
        return _site(body)

    def link_repo(self, site_id: str, *, repo_path: str, branch: str) -> Site:
        body = self.request(
            "PATCH",
            f"/sites/{quote(site_id)}",
            retry=True,
            json={"repo": {"provider": "github", "repo_path": repo_path, "repo_branch": branch}},
        )
        return _site(body)

    def set_env(self, account_id: str, site_id: str, variables: dict[str, str]) -> None:
        """Create or replace the site's environment variables."""
        existing = {
            e["key"]
            for e in self.request("GET", f"/accounts/{quote(account_id)}/env", params={"site_id": site_id})
            or []
        }
        fresh = [
            {"key": k, "values": [{"value": v, "context": "all"}], "is_secret": "KEY" in k or "SECRET" in k}
            for k, v in variables.items()
            if k not in existing
        ]
        if fresh:
            self.request(
                "POST",
                f"/accounts/{quote(account_id)}/env",
                params={"site_id": site_id},
                json=fresh,
                retry=False,
            )
        for key in variables.keys() & existing:
            self.request(
                "PUT",
                f"/accounts/{quote(account_id)}/env/{quote(key)}",
                params={"site_id": site_id},
                json={"key": key, "values": [{"value": variables[key], "context": "all"}]},
            )

    def env(self, account_id: str, site_id: str) -> dict[str, str]:
        items = self.request("GET", f"/accounts/{quote(account_id)}/env", params={"site_id": site_id}) or []
        return {e["key"]: (e.get("values") or [{}])[0].get("value", "") for e in items}

    def start_build(self, site_id: str) -> Build:
        body = self.request("POST", f"/sites/{quote(site_id)}/builds", retry=False) or {}
        return Build(id=_text(body.get("id")), deploy_id=_text(body.get("deploy_id")))

    def deploy(self, deploy_id: str) -> Deploy:
        return _deploy(self.request("GET", f"/deploys/{quote(deploy_id)}"), deploy_id)

    def deploys(self, site_id: str, *, limit: int = 10) -> list[Deploy]:
        """The site's most recent deploys, newest first."""
        body = self.request("GET", f"/sites/{quote(site_id)}/deploys", params={"per_page": str(limit)})
        return [_deploy(d) for d in body or []][:limit]

    def published_deploy_id(self, site_id: str) -> str | None:
        """The deploy the site serves now."""
        body = self.request("GET", f"/sites/{quote(site_id)}")
        return _text((body.get("published_deploy") or {}).get("id"))

    def build_log(self, build_id: str) -> str:
        body = self.request("GET", f"/builds/{quote(build_id)}/log") or {}
        return str(body.get("log") or "")


def _text(value: Any) -> str | None:
    return str(value) if value is not None else None
