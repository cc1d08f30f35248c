"""db_host adapter: the Supabase Management API (OAuth, organizations, projects, health, SQL, API keys, the
connection pooler)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from svc_shared.providers.http import OAuthWebFlow, Provider, ProviderNotFound

REGION = "eu-central-1"
READY = "ACTIVE_HEALTHY"
# Supabase's pooler (Supavisor) serves session mode on 5432 and transaction mode on 6543 of the same host.
SESSION_PORT = 5432


@dataclass(frozen=True)
class Pooler:
    """Where a project's primary database is reached through the pooler in session mode (no secret here)."""

    host: str
    port: int
    user: str
    database: str


@dataclass(frozen=True)
class Organization:
    slug: str
    name: str | None


@dataclass(frozen=True)
class DbProject:
    """A database project, with the Management API's values (None where it gives none)."""

    ref: str | None  # its ref (older answers name it id)
    name: str | None
    region: str | None
    status: str | None  # ACTIVE_HEALTHY once it serves
    organization_slug: str | None


@dataclass(frozen=True)
class ApiKeys:
    public: str | None  # anon: safe in a browser
    privileged: str | None  # service_role: bypasses row level security, kept sealed


def _project(body: dict[str, Any]) -> DbProject:
    return DbProject(
        ref=body.get("ref") or body.get("id"),
        name=body.get("name"),
        region=body.get("region"),
        status=body.get("status"),
        organization_slug=body.get("organization_slug"),
    )


class DbHostOAuth(OAuthWebFlow):
    name = "db_host"
    authorize_path = "/v1/oauth/authorize"
    authorize_asks = {"response_type": "code", "scope": "all"}

    def _grant(self, client_id: str, client_secret: str, form: dict[str, str]) -> dict[str, Any]:
        return self.request(
            "POST",
            "/v1/oauth/token",
            data=form,
            auth=(client_id, client_secret),
            retry=False,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )

    def exchange(self, *, client_id: str, client_secret: str, code: str, redirect_uri: str) -> dict[str, Any]:
        return self._grant(
            client_id,
            client_secret,
            {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri},
        )

    def refresh(self, *, client_id: str, client_secret: str, refresh_token: str) -> dict[str, Any]:
        return self._grant(
            client_id, client_secret, {"grant_type": "refresh_token", "refresh_token": refresh_token}
        )


class DbHost(Provider):
    name = "db_host"

    def organizations(self) -> list[Organization]:
        return [
            Organization(slug=str(o["slug"]), name=o.get("name"))
            for o in self.request("GET", "/v1/organizations") or []
        ]

    def projects(self) -> list[DbProject]:
        return [_project(p) for p in self.request("GET", "/v1/projects") or []]

    def create_project(
        self, *, name: str, db_pass: str, organization_slug: str, region: str = REGION
    ) -> DbProject:
        body = self.request(
            "POST",
            "/v1/projects",
            retry=False,
            json={"name": name, "db_pass": db_pass, "organization_slug": organization_slug, "region": region},
        )
        return _project(body)

    def project(self, ref: str) -> DbProject:
        return _project(self.request("GET", f"/v1/projects/{quote(ref)}"))

    def health(self, ref: str) -> list[dict[str, Any]]:
        return self.request(
            "GET", f"/v1/projects/{quote(ref)}/health", params=[("services", "db"), ("services", "rest")]
        )

    def query(self, ref: str, sql: str) -> list[dict[str, Any]]:
        """Run SQL in the project's database; the rows it returns (empty for DDL)."""
        return (
            self.request(
                "POST", f"/v1/projects/{quote(ref)}/database/query", json={"query": sql}, retry=False
            )
            or []
        )

    def api_keys(self, ref: str) -> ApiKeys:
        """The public (anon) and privileged (service_role) keys."""
        keys = self.request("GET", f"/v1/projects/{quote(ref)}/api-keys", params={"reveal": "true"})
        named = {k["name"]: str(k["api_key"]) for k in keys if isinstance(k, dict) and k.get("api_key")}
        return ApiKeys(public=named.get("anon"), privileged=named.get("service_role"))

    def session_pooler(self, ref: str) -> Pooler:
        """The primary database's pooler, at its session-mode port."""
        configs = self.request("GET", f"/v1/projects/{quote(ref)}/config/database/pooler")
        primary = next(
            (
                c
                for c in configs or []
                if isinstance(c, dict) and c.get("database_type") == "PRIMARY" and c.get("db_host")
            ),
            None,
        )
        if primary is None:
            raise ProviderNotFound(self.name, 200, "the pooler configuration has no PRIMARY database")
        port = int(primary["db_port"]) if primary.get("pool_mode") == "session" else SESSION_PORT
        return Pooler(
            host=str(primary["db_host"]),
            port=port,
            user=str(primary["db_user"]),
            database=str(primary.get("db_name") or "postgres"),
        )
