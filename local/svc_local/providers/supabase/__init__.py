"""db_host sandbox (Supabase Management API shape): OAuth with expiring, rotating tokens, organizations per
account, projects that become ready after a delay, SQL run for real in one PostgreSQL database per project
(`sbx_<ref>` on the server of DATABASE_URL), API keys, the connection pooler's configuration (the same server:
connections go straight to it), and the per-token rate limit."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import hashlib
import hmac
import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from svc_local.postgres import server_endpoint
from svc_local.providers.common import (
    BaseProvider,
    OAuthApp,
    Settings,
    basic,
    bearer,
    form,
    iso,
    json_body,
    now,
    owned,
    random_id,
)
from svc_local.sandbox import SandboxRequest, SandboxResponse, SandboxRoute, json_response

DEFAULT_ACCOUNT = "sandbox"
NO_ORGS_ACCOUNT = "no-orgs"
READY = "ACTIVE_HEALTHY"
COMING_UP = "COMING_UP"


def _message(status: int, message: str) -> SandboxResponse:
    return json_response({"message": message}, status)


def _jwt(secret: str, claims: dict[str, Any]) -> str:
    def part(data: dict[str, Any]) -> str:
        raw = json.dumps(data, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    signing = f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(claims)}"
    mac = hmac.new(secret.encode(), signing.encode(), hashlib.sha256).digest()
    return f"{signing}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


def _jsonable(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes | memoryview):
        return "\\x" + bytes(value).hex()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def database_url_for(server_url: str, database: str) -> str:
    """The same server, another database (the path of a libpq URL names the database)."""
    parts = urlsplit(server_url)
    return urlunsplit(parts._replace(path=f"/{database}"))


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
        self.settings = Settings(
            access_token_lifetime=token_lifetime,
            project_ready_delay=project_ready_delay,
            rate_limit_per_minute=rate_limit_per_minute,
            rate_limit_window=rate_limit_window,
        )
        self.rate_limited = 0  # requests answered 429 (GET /__admin/supabase/rate-limited)
        self._calls: dict[str, deque[float]] = {}
        self._databases: dict[str, threading.Event] = {}
        self._db_errors: dict[str, str] = {}

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

    def issue_tokens(self, account: str) -> dict[str, Any]:
        lifetime = float(self.settings["access_token_lifetime"])
        access = random_id("sbp_oauth_", 40, "0123456789abcdef")
        refresh = random_id("sbr_", 40, "0123456789abcdef")
        with self.state.lock:
            self.data["tokens"][access] = {
                "account": account,
                "expires_at": now() + lifetime,
                "refresh": refresh,
            }
            self.data["refresh_tokens"][refresh] = {"account": account, "access": access}
        self.state.save()
        return {
            "access_token": access,
            "refresh_token": refresh,
            "expires_in": int(lifetime),
            "token_type": "Bearer",
        }

    def project_database_url(self, ref: str) -> str | None:
        project = self.data["projects"].get(ref)
        if project is None or not self.database_url:
            return None
        return database_url_for(self.database_url, project["database"])

    def oauth_next(self, data: dict[str, Any]) -> dict[str, Any]:
        account = data.get("account")
        if isinstance(account, str) and account:
            orgs = data.get("organizations")
            self.ensure_account(account, orgs if isinstance(orgs, list) else None)
        return self.oauth.queue(data)

    # ---- routes

    def routes(self) -> Iterable[SandboxRoute]:
        v1 = "/supabase/v1"
        project = f"{v1}/projects/{{ref}}"
        return [
            SandboxRoute("GET", f"{v1}/oauth/authorize", self.oauth.authorize_code),
            SandboxRoute("POST", f"{v1}/oauth/token", self.token),
            SandboxRoute("GET", f"{v1}/organizations", self.organizations),
            SandboxRoute("GET", f"{v1}/projects", self.list_projects),
            SandboxRoute("POST", f"{v1}/projects", self.create_project),
            SandboxRoute("GET", project, self.get_project),
            SandboxRoute("GET", f"{project}/health", self.health),
            SandboxRoute("POST", f"{project}/database/query", self.query),
            SandboxRoute("GET", f"{project}/api-keys", self.api_keys),
            SandboxRoute("GET", f"{project}/config/database/pooler", self.pooler),
            *self.settings.routes("supabase"),
            SandboxRoute(
                "GET",
                "/__admin/supabase/rate-limited",
                lambda request: json_response({"refused": self.rate_limited}),
            ),
            SandboxRoute("POST", "/__admin/supabase/tokens", self.admin_tokens),
            SandboxRoute("POST", "/__admin/supabase/accounts", self.admin_account),
            SandboxRoute("GET", "/__admin/supabase/projects/{ref}", self.admin_project),
        ]

    # ---- OAuth

    def token(self, request: SandboxRequest) -> SandboxResponse:
        data = form(request)
        credentials = basic(request) or (data.get("client_id", ""), data.get("client_secret", ""))
        if credentials != (self.oauth.client_id, self.oauth.client_secret):
            return _message(401, "Invalid client credentials")
        grant_type = data.get("grant_type")
        if grant_type == "authorization_code":
            grant, why = self.oauth.redeem(data.get("code", ""), data.get("redirect_uri"))
            if grant is None:
                return _message(
                    400,
                    "Invalid redirect_uri"
                    if why == "redirect_uri_mismatch"
                    else "Invalid authorization code",
                )
            verifier, challenge = data.get("code_verifier"), grant.get("code_challenge")
            if challenge:
                digest = hashlib.sha256((verifier or "").encode()).digest()
                if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != challenge:
                    return _message(400, "Invalid code_verifier")
            return json_response(self.issue_tokens(grant["account"]), 201)
        if grant_type == "refresh_token":
            with self.state.lock:
                old = self.data["refresh_tokens"].pop(data.get("refresh_token", ""), None)
                if old is not None:
                    self.data["tokens"].pop(old["access"], None)
            if old is None:
                self.state.save()
                return _message(400, "Invalid refresh token")
            return json_response(self.issue_tokens(old["account"]), 201)
        return _message(400, "Unsupported grant_type")

    # ---- helpers

    def _account(self, request: SandboxRequest) -> str | SandboxResponse:
        token = bearer(request) or ""
        with self.state.lock:
            grant = self.data["tokens"].get(token)
        if grant is None or grant["expires_at"] <= now():
            return _message(401, "Unauthorized")
        limit = self.settings["rate_limit_per_minute"]
        if limit:
            # `limit` requests per `rate_limit_window` seconds (60: the Management API's per-minute limit; a
            # test shortens the window to see the same behaviour in seconds). A refused request is not counted.
            window = float(self.settings["rate_limit_window"] or 60)
            moment = time.monotonic()
            with self.state.lock:
                calls = self._calls.setdefault(token, deque())
                while calls and calls[0] <= moment - window:
                    calls.popleft()
                if len(calls) >= limit:
                    self.rate_limited += 1
                    wait = max(1, int(window - (moment - calls[0])) + 1)
                    return json_response({"message": "Too many requests"}, 429, {"Retry-After": str(wait)})
                calls.append(moment)
        return str(grant["account"])

    def _project(self, request: SandboxRequest) -> tuple[str, dict[str, Any]] | SandboxResponse:
        project = self.data["projects"].get(request.params["ref"])
        return owned(self._account(request), project, "account", _message(404, "Project not found"))

    def _status(self, project: dict[str, Any]) -> str:
        ready_at = project["created_at_ts"] + float(self.settings["project_ready_delay"])
        event = self._databases.get(project["ref"])
        database_ready = event is None or event.is_set()
        if project["ref"] in self._db_errors:
            return "INIT_FAILED"
        return READY if now() >= ready_at and database_ready else COMING_UP

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

    def organizations(self, request: SandboxRequest) -> SandboxResponse:
        account = self._account(request)
        if isinstance(account, SandboxResponse):
            return account
        return json_response(list(self.data["accounts"].get(account, {}).get("organizations", [])))

    def list_projects(self, request: SandboxRequest) -> SandboxResponse:
        account = self._account(request)
        if isinstance(account, SandboxResponse):
            return account
        with self.state.lock:
            projects = [p for p in self.data["projects"].values() if p["account"] == account]
        return json_response([self._project_json(p, detail=True) for p in projects])

    def create_project(self, request: SandboxRequest) -> SandboxResponse:
        account = self._account(request)
        if isinstance(account, SandboxResponse):
            return account
        body = json_body(request)
        if not isinstance(body, dict):
            return _message(400, "Invalid request body")
        missing = [k for k in ("name", "db_pass") if not isinstance(body.get(k), str) or not body[k]]
        slug = body.get("organization_slug") or body.get("organization_id")
        if not isinstance(slug, str) or not slug:
            missing.append("organization_slug")
        if missing:
            return _message(400, f"Missing required field(s): {', '.join(missing)}")
        orgs = self.data["accounts"].get(account, {}).get("organizations", [])
        org = next((o for o in orgs if slug in (o.get("slug"), o.get("id"))), None)
        if org is None:
            return _message(404, f"Organization {slug} not found")
        cap = org.get("max_projects")
        if isinstance(cap, int):
            active = sum(1 for p in self.data["projects"].values() if p["organization_slug"] == org["slug"])
            if active >= cap:
                return _message(
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
            "jwt_secret": random_id("", 40),
        }
        with self.state.lock:
            self.data["projects"][ref] = project
        self.state.save()
        self._create_database(project)
        return json_response(self._project_json(project), 201)

    def _create_database(self, project: dict[str, Any]) -> None:
        """CREATE DATABASE in the background (it takes a moment); the project is COMING_UP until it exists."""
        if not self.database_url:
            return
        event = self._databases[project["ref"]] = threading.Event()

        def create() -> None:
            try:
                import psycopg

                with psycopg.connect(self.database_url or "", autocommit=True, connect_timeout=10) as conn:
                    exists = conn.execute(
                        "SELECT 1 FROM pg_database WHERE datname = %s", (project["database"],)
                    ).fetchone()
                    if not exists:
                        conn.execute(f'CREATE DATABASE "{project["database"]}"')
            except Exception as exc:  # noqa: BLE001 - reported as INIT_FAILED and on every query
                self._db_errors[project["ref"]] = str(exc)
            finally:
                event.set()

        threading.Thread(target=create, name=f"sbx-db-{project['ref']}", daemon=True).start()

    def get_project(self, request: SandboxRequest) -> SandboxResponse:
        found = self._project(request)
        if isinstance(found, SandboxResponse):
            return found
        return json_response(self._project_json(found[1], detail=True))

    def health(self, request: SandboxRequest) -> SandboxResponse:
        found = self._project(request)
        if isinstance(found, SandboxResponse):
            return found
        services = request.query.get("services") or []
        if not services:
            return _message(400, "services is required")
        status = self._status(found[1])
        healthy = status == READY
        return json_response(
            [{"name": s, "healthy": healthy, "status": READY if healthy else COMING_UP} for s in services]
        )

    def query(self, request: SandboxRequest) -> SandboxResponse:
        found = self._project(request)
        if isinstance(found, SandboxResponse):
            return found
        project = found[1]
        body = json_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            return _message(400, "query is required")
        if not self.database_url:
            return _message(503, "The sandbox has no PostgreSQL server (DATABASE_URL) for project databases")
        event = self._databases.get(project["ref"])
        if event is None:  # created before a restart: make sure it exists
            self._create_database(project)
            event = self._databases[project["ref"]]
        event.wait(30)
        if project["ref"] in self._db_errors:
            return _message(500, f"Failed to create the project database: {self._db_errors[project['ref']]}")
        import psycopg
        from psycopg.rows import dict_row

        url = database_url_for(self.database_url, project["database"])
        try:
            with psycopg.connect(url, autocommit=True, row_factory=dict_row, connect_timeout=10) as conn:
                cursor = conn.execute(body["query"].encode("utf-8"))
                rows: list[dict[str, Any]] = []
                while True:  # several statements: the rows of the last one that returned rows
                    if cursor.description is not None:
                        rows = list(cursor.fetchall())
                    if not cursor.nextset():
                        break
        except psycopg.Error as exc:
            diag = exc.diag
            detail = diag.message_primary or str(exc).strip()
            code = f"{diag.sqlstate}: " if diag.sqlstate else ""
            return _message(400, f"Failed to run sql query: ERROR: {code}{detail}")
        return json_response(_jsonable(rows), 201)

    def api_keys(self, request: SandboxRequest) -> SandboxResponse:
        found = self._project(request)
        if isinstance(found, SandboxResponse):
            return found
        project = found[1]
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

    def pooler(self, request: SandboxRequest) -> SandboxResponse:
        """The pooler configuration: the sandbox's PostgreSQL server stands in for Supavisor (session mode),
        with the project's own database and the server's user."""
        found = self._project(request)
        if isinstance(found, SandboxResponse):
            return found
        project = found[1]
        if not self.database_url:
            return _message(503, "The sandbox has no PostgreSQL server (DATABASE_URL) for project databases")
        host, port, user, _ = server_endpoint(self.database_url)
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

    def admin_tokens(self, request: SandboxRequest) -> SandboxResponse:
        """Tokens for an account without the browser step: {account?} -> the token endpoint's answer."""
        body = json_body(request)
        account = body.get("account") if isinstance(body, dict) else None
        account = account if isinstance(account, str) and account else DEFAULT_ACCOUNT
        self.ensure_account(account)
        return json_response(self.issue_tokens(account), 201)

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
