"""db_host sandbox (Supabase Management API shape): OAuth with expiring, rotating tokens, organizations per
account, projects that become ready after a delay, SQL run for real in one PostgreSQL database per project
(`sbx_<ref>` on the server of DATABASE_URL), API keys, the connection pooler's configuration (the same server:
connections go straight to it), and the per-token rate limit."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from svc_local.postgres import server_endpoint
from svc_local.providers.common import (
    BaseProvider,
    OAuthApp,
    Settings,
    iso,
    json_body,
    json_body_as,
    now,
    owned,
    random_id,
    route,
)
from svc_local.providers.supabase.databases import (
    DatabaseMissing,
    ProjectDatabases,
    QueryFailed,
    role_password,
)
from svc_local.providers.supabase.tokens import Tokens, message
from svc_local.sandbox import SandboxRequest, SandboxResponse, SandboxRoute, json_response

DEFAULT_ACCOUNT = "sandbox"
NO_ORGS_ACCOUNT = "no-orgs"
READY = "ACTIVE_HEALTHY"
COMING_UP = "COMING_UP"


def _jwt(secret: str, claims: dict[str, Any]) -> str:
    def part(data: dict[str, Any]) -> str:
        raw = json.dumps(data, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    signing = f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(claims)}"
    mac = hmac.new(secret.encode(), signing.encode(), hashlib.sha256).digest()
    return f"{signing}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


class Supabase(BaseProvider):
    """Mounted at /supabase; the adapter's base URL is {sandbox}/supabase and it calls /v1/... below it."""

    name = "supabase"

    def __init__(
        self,
        state_dir: Path | None,
        *,
        client_id: str,
        client_secret: str,
        database_url: str | None,
        token_lifetime: float = 86400,
        project_ready_delay: float = 2.0,
        rate_limit_per_minute: int | None = 60,
        rate_limit_window: float = 60,
    ) -> None:
        super().__init__(
            state_dir,
            {
                "accounts": {
                    DEFAULT_ACCOUNT: {
                        "organizations": [{"id": "sandbox-org", "slug": "sandbox-org", "name": "Sandbox Org"}]
                    },
                    NO_ORGS_ACCOUNT: {"organizations": []},
                },
                "tokens": {},
                "refresh_tokens": {},
                "projects": {},
            },
        )
        self.oauth = OAuthApp(self.state, client_id, client_secret, DEFAULT_ACCOUNT)
        self.database_url = database_url
        self.databases = ProjectDatabases(database_url)
        self.settings = Settings(
            access_token_lifetime=token_lifetime,
            project_ready_delay=project_ready_delay,
            rate_limit_per_minute=rate_limit_per_minute,
            rate_limit_window=rate_limit_window,
        )
        self.tokens = Tokens(self.state, self.oauth, self.settings)

    # ---- public API

    def ensure_account(self, name: str, organizations: list[dict[str, Any]] | None = None) -> None:
        with self.state.lock:
            accounts = self.data["accounts"]
            if name not in accounts:
                slug = f"{name}-org"
                accounts[name] = {
                    "organizations": organizations
                    if organizations is not None
                    else [{"id": slug, "slug": slug, "name": f"{name.title()} Org"}]
                }
            elif organizations is not None:
                accounts[name]["organizations"] = organizations
        self.state.save()

    def project_database_url(self, ref: str) -> str | None:
        project = self.data["projects"].get(ref)
        return self.databases.url(project["database"]) if project is not None else None

    def oauth_next(self, data: dict[str, Any]) -> dict[str, Any]:
        account = data.get("account")
        if isinstance(account, str) and account:
            orgs = data.get("organizations")
            self.ensure_account(account, orgs if isinstance(orgs, list) else None)
        return self.oauth.queue(data)

    # ---- routes

    def routes(self) -> Iterable[SandboxRoute]:
        return [
            *super().routes(),
            SandboxRoute("GET", "/supabase/v1/oauth/authorize", self.oauth.authorize_code),
            SandboxRoute("POST", "/supabase/v1/oauth/token", self.tokens.token),
            *self.settings.routes("supabase"),
        ]

    @route("GET", "/__admin/supabase/rate-limited")
    def admin_rate_limited(self, request: SandboxRequest) -> SandboxResponse:
        return json_response({"refused": self.tokens.rate_limited})

    # ---- helpers

    def _project(self, request: SandboxRequest) -> dict[str, Any]:
        """The project the path names, when it is the token's account's (Refused: 401, 429, 404)."""
        project = self.data["projects"].get(request.params["ref"])
        return owned(self.tokens.account(request), project, "account", message(404, "Project not found"))

    def _status(self, project: dict[str, Any]) -> str:
        ready_at = project["created_at_ts"] + float(self.settings["project_ready_delay"])
        if self.databases.failure(project["ref"]) is not None:
            return "INIT_FAILED"
        return READY if now() >= ready_at and self.databases.ready(project["ref"]) else COMING_UP

    def _project_json(self, project: dict[str, Any], *, detail: bool = False) -> dict[str, Any]:
        body = {
            "id": project["ref"],
            "ref": project["ref"],
            "organization_id": project["organization_slug"],
            "organization_slug": project["organization_slug"],
            "name": project["name"],
            "region": project["region"],
            "created_at": project["created_at"],
            "status": self._status(project),
        }
        if detail:
            body["database"] = {
                "host": f"db.{project['ref']}.supabase.co",
                "version": "15.8.1",
                "postgres_engine": "15",
                "release_channel": "ga",
            }
        return body

    # ---- organizations and projects

    @route("GET", "/supabase/v1/organizations")
    def organizations(self, request: SandboxRequest) -> SandboxResponse:
        account = self.tokens.account(request)
        return json_response(list(self.data["accounts"].get(account, {}).get("organizations", [])))

    @route("GET", "/supabase/v1/projects")
    def list_projects(self, request: SandboxRequest) -> SandboxResponse:
        account = self.tokens.account(request)
        with self.state.lock:
            projects = [p for p in self.data["projects"].values() if p["account"] == account]
        return json_response([self._project_json(p, detail=True) for p in projects])

    @route("POST", "/supabase/v1/projects")
    def create_project(self, request: SandboxRequest) -> SandboxResponse:
        account = self.tokens.account(request)
        body = json_body_as(request, dict, message(400, "Invalid request body"))
        missing = [k for k in ("name", "db_pass") if not isinstance(body.get(k), str) or not body[k]]
        slug = body.get("organization_slug") or body.get("organization_id")
        if not isinstance(slug, str) or not slug:
            missing.append("organization_slug")
        if missing:
            return message(400, f"Missing required field(s): {', '.join(missing)}")
        orgs = self.data["accounts"].get(account, {}).get("organizations", [])
        org = next((o for o in orgs if slug in (o.get("slug"), o.get("id"))), None)
        if org is None:
            return message(404, f"Organization {slug} not found")
        cap = org.get("max_projects")
        if isinstance(cap, int):
            active = sum(1 for p in self.data["projects"].values() if p["organization_slug"] == org["slug"])
            if active >= cap:
                return message(
                    400,
                    "The following organization members have reached their maximum limits for the number "
                    "of active free projects within organizations where they are an administrator or owner: "
                    f"{account}",
                )
        ref = random_id("", 20, "abcdefghijklmnopqrstuvwxyz")
        project = {
            "ref": ref,
            "account": account,
            "name": body["name"],
            "organization_slug": org["slug"],
            "region": body.get("region") or "us-east-1",
            "created_at": iso(),
            "created_at_ts": now(),
            "database": f"sbx_{ref}",
            # The project's own database role (named as its database) signs in with the password it was
            # created with, as a Supabase project's `postgres` user does: never the server's superuser.
            "db_pass": body["db_pass"],
            "jwt_secret": random_id("", 40),
        }
        with self.state.lock:
            self.data["projects"][ref] = project
        self.state.save()
        self.databases.create(ref, project["database"], role_password(project))
        return json_response(self._project_json(project), 201)

    @route("GET", "/supabase/v1/projects/{ref}")
    def get_project(self, request: SandboxRequest) -> SandboxResponse:
        return json_response(self._project_json(self._project(request), detail=True))

    @route("GET", "/supabase/v1/projects/{ref}/health")
    def health(self, request: SandboxRequest) -> SandboxResponse:
        project = self._project(request)
        services = request.query.get("services") or []
        if not services:
            return message(400, "services is required")
        status = self._status(project)
        healthy = status == READY
        return json_response(
            [{"name": s, "healthy": healthy, "status": READY if healthy else COMING_UP} for s in services]
        )

    @route("POST", "/supabase/v1/projects/{ref}/database/query")
    def query(self, request: SandboxRequest) -> SandboxResponse:
        project = self._project(request)
        body = json_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            return message(400, "query is required")
        if not self.database_url:
            return message(503, "The sandbox has no PostgreSQL server (DATABASE_URL) for project databases")
        try:
            rows = self.databases.run(
                project["ref"], project["database"], body["query"], role_password(project)
            )
        except DatabaseMissing as exc:
            return message(500, f"Failed to create the project database: {exc}")
        except QueryFailed as exc:
            return message(400, f"Failed to run sql query: ERROR: {exc}")
        return json_response(rows, 201)

    @route("GET", "/supabase/v1/projects/{ref}/api-keys")
    def api_keys(self, request: SandboxRequest) -> SandboxResponse:
        project = self._project(request)
        reveal = request.arg("reveal") == "true"
        keys = []
        for role in ("anon", "service_role"):
            token = _jwt(
                project["jwt_secret"],
                {
                    "iss": "supabase",
                    "ref": project["ref"],
                    "role": role,
                    "iat": int(project["created_at_ts"]),
                    "exp": 2_000_000_000,
                },
            )
            keys.append(
                {
                    "name": role,
                    "api_key": token if reveal or role == "anon" else token[:12] + "·" * 20,
                    "type": "legacy",
                    "id": role,
                    "description": None,
                }
            )
        return json_response(keys)

    @route("GET", "/supabase/v1/projects/{ref}/config/database/pooler")
    def pooler(self, request: SandboxRequest) -> SandboxResponse:
        """The pooler configuration: the sandbox's PostgreSQL server stands in for Supavisor (session mode),
        with the project's own database and its own role."""
        project = self._project(request)
        if not self.database_url:
            return message(503, "The sandbox has no PostgreSQL server (DATABASE_URL) for project databases")
        host, port, _, _ = server_endpoint(self.database_url)
        user = project["database"]  # the project's own role
        return json_response(
            [
                {
                    "identifier": project["ref"],
                    "database_type": "PRIMARY",
                    "is_using_scram_auth": True,
                    "db_user": user,
                    "db_host": host,
                    "db_port": port,
                    "db_name": project["database"],
                    "connection_string": f"postgresql://{user}:[YOUR-PASSWORD]@{quote(host, safe='')}:{port}/{project['database']}",
                    "pool_mode": "session",
                    "default_pool_size": 15,
                    "max_client_conn": 200,
                }
            ]
        )

    # ---- admin

    @route("POST", "/__admin/supabase/tokens")
    def admin_tokens(self, request: SandboxRequest) -> SandboxResponse:
        """Tokens for an account without the browser step: {account?} -> the token endpoint's answer."""
        body = json_body(request)
        account = body.get("account") if isinstance(body, dict) else None
        account = account if isinstance(account, str) and account else DEFAULT_ACCOUNT
        self.ensure_account(account)
        return json_response(self.tokens.issue(account), 201)

    @route("POST", "/__admin/supabase/accounts")
    def admin_account(self, request: SandboxRequest) -> SandboxResponse:
        """Create or change an account: {account, organizations: [{id, slug, name, max_projects?}]}."""
        body = json_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("account"), str) or not body["account"]:
            return json_response({"error": "invalid_request", "message": "account is required"}, 400)
        orgs = body.get("organizations")
        if orgs is not None and (
            not isinstance(orgs, list) or not all(isinstance(o, dict) and o.get("slug") for o in orgs)
        ):
            return json_response({"error": "invalid_request", "message": "organizations need a slug"}, 400)
        if orgs is not None:
            orgs = [{"id": o.get("id", o["slug"]), "name": o.get("name", o["slug"]), **o} for o in orgs]
        self.ensure_account(body["account"], orgs)
        return json_response({"account": body["account"], **self.data["accounts"][body["account"]]}, 201)

    @route("GET", "/__admin/supabase/projects/{ref}")
    def admin_project(self, request: SandboxRequest) -> SandboxResponse:
        project = self.data["projects"].get(request.params["ref"])
        if project is None:
            return json_response({"error": "not_found"}, 404)
        public = {k: v for k, v in project.items() if k != "jwt_secret"}
        return json_response(
            {
                **public,
                "status": self._status(project),
                "database_url": self.project_database_url(project["ref"]),
            }
        )
