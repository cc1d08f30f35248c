"""Integrations: connection records with a sealed, write-only secret; and the search-console (gsc) OAuth 2.0
connect flow with PKCE against a provider whose endpoints are configuration (the platform's provider sandbox
in development and tests, Google's endpoints in production)."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb

from svc_backoffice.access.auth import Staff
from svc_backoffice.core import config, tenancy
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.config import Settings
from svc_backoffice.core.errors import InvalidInput, Unprocessable
from svc_backoffice.core.logs import logger
from svc_backoffice.data import sealing
from svc_backoffice.data.db import Database, Row
from svc_backoffice.domain.models.content import IntegrationCreate, IntegrationUpdate
from svc_backoffice.domain.rows import Table

COLUMNS = "id, kind, status, config, secret_encrypted IS NOT NULL AS secret_set, connected_at, created_at, updated_at"


def _purpose(kind: str) -> str:
    return sealing.purpose_of("integrations", "secret", kind)


class Integrations(Table[IntegrationCreate, IntegrationUpdate]):
    """Connection records: the secret sealed at rest and write-only; a connected one says since when."""

    def create(self, db: Database, body: IntegrationCreate) -> Row:
        sealed = sealing.seal_given(body.secret, _purpose(body.kind))
        row = db.one(
            "INSERT INTO integrations (kind, status, config, secret_encrypted, connected_at) "  # noqa: S608
            "VALUES (%s, %s, %s, %s, CASE WHEN %s = 'connected' THEN now() END) "
            f"RETURNING {COLUMNS}",
            (body.kind, body.status, Jsonb(body.config), sealed, body.status),
        )
        assert row is not None
        return row

    def update(self, db: Database, row_id: str, body: IntegrationUpdate) -> Row:
        changes = sealing.sealed_changes(
            db, "integrations", row_id, body, write_only="secret", json_field="config"
        )
        sets = [f"{name} = %({name})s" for name in changes] or ["id = id"]
        if "status" in changes:
            # The schema asks a connected integration for its connected_at; any other status clears it.
            sets.append(
                "connected_at = CASE WHEN %(status)s = 'connected' THEN coalesce(connected_at, now()) END"
            )
        row = db.one(
            f"UPDATE integrations SET {', '.join(sets)} WHERE id = %(id)s RETURNING {COLUMNS}",  # noqa: S608
            {**changes, "id": row_id},
        )
        assert row is not None
        return row


INTEGRATIONS = Integrations("integrations", COLUMNS, IntegrationCreate, IntegrationUpdate, order="kind")
list_integrations, get_integration, create_integration = (
    INTEGRATIONS.all,
    INTEGRATIONS.read,
    INTEGRATIONS.create,
)
update_integration, delete_integration = INTEGRATIONS.update, INTEGRATIONS.delete


# -- search console ------------------------------------------------------------------------------------------
GSC = "gsc"
GSC_SCOPE = "https://www.googleapis.com/auth/webmasters.readonly"
STATE_TTL_SECONDS = 600
HTTP_TIMEOUT_SECONDS = 5


class GscNotConfigured(Unprocessable):
    def __init__(self) -> None:
        super().__init__(say("search_console.not_configured"))


@dataclass(frozen=True)
class GscEndpoints:
    authorize: str
    token: str
    revoke: str
    sites: str

    @classmethod
    def of(cls, settings: Settings) -> GscEndpoints:
        base = (settings.gsc_provider_base_url or "").rstrip("/")
        if base:
            return cls(
                authorize=f"{base}/o/oauth2/v2/auth",
                token=f"{base}/token",
                revoke=f"{base}/revoke",
                sites=f"{base}/webmasters/v3/sites",
            )
        return cls(
            authorize="https://accounts.google.com/o/oauth2/v2/auth",
            token="https://oauth2.googleapis.com/token",  # noqa: S106 - a URL
            revoke="https://oauth2.googleapis.com/revoke",
            sites="https://www.googleapis.com/webmasters/v3/sites",
        )


class ProviderError(RuntimeError):
    """The provider answered with an error or could not be reached."""


def _http(url: str, *, form: dict[str, str] | None = None, token: str | None = None) -> Any:
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")  # noqa: S310 - configured https or sandbox URL
    request.add_header("Accept", "application/json")
    if data is not None:
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_SECONDS) as answer:  # noqa: S310
            text = answer.read().decode()
    except urllib.error.HTTPError as exc:
        raise ProviderError(f"{url.split('?')[0]} answered {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise ProviderError(f"{url.split('?')[0]} unreachable: {exc}") from None
    try:
        return json.loads(text) if text else {}
    except ValueError:
        raise ProviderError(f"{url.split('?')[0]} answered non-JSON") from None


def _client(settings: Settings) -> tuple[str, str]:
    if not settings.gsc_client_id:
        raise GscNotConfigured()
    secret = config.gsc_client_secret(settings)
    if not secret:
        raise GscNotConfigured()
    return settings.gsc_client_id, secret


def _redirect_uri() -> str:
    """Where the provider sends the browser back: hosted, the shop's own callback under its base URL;
    self-hosted, GSC_REDIRECT_URI or HANDOFF_AUDIENCE + /api/gsc/callback."""
    shop = tenancy.current_shop()
    if shop is not None:
        return f"{shop.base_url}/api/gsc/callback"
    own = config.self_hosted_settings()
    return own.gsc_redirect_uri or own.handoff_audience.rstrip("/") + "/api/gsc/callback"


def _gsc_row(db: Database, *, lock: bool = False) -> Row | None:
    sql = "SELECT id, status, config, secret_encrypted, connected_at FROM integrations WHERE kind = %s"
    return db.one(sql + (" FOR UPDATE" if lock else ""), (GSC,))


def _sealed_json(value: dict[str, Any]) -> bytes:
    return sealing.seal(json.dumps(value), _purpose(GSC))


def _opened_json(row: Row) -> dict[str, Any]:
    if not row.get("secret_encrypted"):
        return {}
    try:
        return dict(json.loads(sealing.unseal(row["secret_encrypted"], _purpose(GSC))))
    except (sealing.SealError, ValueError):
        return {}


def gsc_connect(db: Database, staff: Staff) -> dict[str, Any]:
    """Start the flow: a one-time state (kept hashed) and a PKCE verifier, sealed in the gsc row."""
    settings = config.get_settings()
    client_id, _ = _client(settings)
    state, verifier = secrets.token_urlsafe(32), secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    pending = {
        "flow": "pending",
        "state_sha256": hashlib.sha256(state.encode()).hexdigest(),
        "verifier": verifier,
        "staff_id": staff.id,
        "expires_at": int(time.time()) + STATE_TTL_SECONDS,
    }
    db.all(
        "INSERT INTO integrations (kind, status, secret_encrypted) VALUES (%s, 'pending', %s) "
        "ON CONFLICT (kind) DO UPDATE SET status = 'pending', secret_encrypted = EXCLUDED.secret_encrypted, "
        "connected_at = NULL",
        (GSC, _sealed_json(pending)),
    )
    query = urllib.parse.urlencode(
        {
            "client_id": client_id,
            "redirect_uri": _redirect_uri(),
            "response_type": "code",
            "scope": GSC_SCOPE,
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "access_type": "offline",
            "prompt": "consent",
        }
    )
    return {
        "authorize_url": f"{GscEndpoints.of(settings).authorize}?{query}",
        "expires_in": STATE_TTL_SECONDS,
    }


def gsc_callback(
    db: Database, staff: Staff, *, code: str | None, state: str | None, error: str | None
) -> str:
    """Finish the flow; returns where to send the browser. A bad or expired state is 400 (nothing changes)."""
    settings = config.get_settings()
    if not state:
        raise InvalidInput(say("search_console.missing_state"))
    row = _gsc_row(db, lock=True)
    pending = _opened_json(row) if row else {}
    if (
        pending.get("flow") != "pending"
        or pending.get("staff_id") != staff.id
        or not secrets.compare_digest(
            pending.get("state_sha256", ""), hashlib.sha256(state.encode()).hexdigest()
        )
    ):
        raise InvalidInput(say("search_console.state_unverified"))
    if int(pending.get("expires_at", 0)) < time.time():
        raise InvalidInput(say("search_console.expired"))
    assert row is not None
    back = settings.gsc_return_path
    if error or not code:
        db.all(
            "UPDATE integrations SET status = 'error', secret_encrypted = NULL, config = config || %s "
            "WHERE id = %s",
            (Jsonb({"last_error": (error or "missing_code")[:200]}), row["id"]),
        )
        return f"{back}?gsc=error&reason={urllib.parse.quote((error or 'missing_code')[:100])}"
    client_id, client_secret = _client(settings)
    try:
        tokens = _http(
            GscEndpoints.of(settings).token,
            form={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": _redirect_uri(),
                "client_id": client_id,
                "client_secret": client_secret,
                "code_verifier": pending["verifier"],
            },
        )
        access_token = tokens["access_token"]
    except (ProviderError, KeyError, TypeError) as exc:
        logger.warning("search-console code exchange failed", extra={"reason": str(exc)})
        db.all(
            "UPDATE integrations SET status = 'error', secret_encrypted = NULL, config = config || %s "
            "WHERE id = %s",
            (Jsonb({"last_error": "code_exchange_failed"}), row["id"]),
        )
        return f"{back}?gsc=error&reason=code_exchange_failed"
    stored = {
        "flow": "connected",
        "access_token": access_token,
        "refresh_token": tokens.get("refresh_token"),
        "expires_at": int(time.time()) + int(tokens.get("expires_in") or 3600),
    }
    db.all(
        "UPDATE integrations SET status = 'connected', connected_at = now(), secret_encrypted = %s, "
        "config = (config - 'last_error') || %s WHERE id = %s",
        (_sealed_json(stored), Jsonb({"scope": str(tokens.get("scope") or GSC_SCOPE)}), row["id"]),
    )
    return f"{back}?gsc=connected"


def _access_token(db: Database, settings: Settings, row: Row) -> str | None:
    stored = _opened_json(row)
    if stored.get("flow") != "connected":
        return None
    if int(stored.get("expires_at", 0)) > time.time() + 30:
        return str(stored["access_token"])
    if not stored.get("refresh_token"):
        return None
    client_id, client_secret = _client(settings)
    tokens = _http(
        GscEndpoints.of(settings).token,
        form={
            "grant_type": "refresh_token",
            "refresh_token": stored["refresh_token"],
            "client_id": client_id,
            "client_secret": client_secret,
        },
    )
    stored |= {
        "access_token": tokens["access_token"],
        "refresh_token": tokens.get("refresh_token") or stored["refresh_token"],
        "expires_at": int(time.time()) + int(tokens.get("expires_in") or 3600),
    }
    db.all("UPDATE integrations SET secret_encrypted = %s WHERE id = %s", (_sealed_json(stored), row["id"]))
    return str(stored["access_token"])


def gsc_status(db: Database) -> dict[str, Any]:
    """The connection and, when connected, the verified sites as the provider lists them now."""
    settings = config.get_settings()
    row = _gsc_row(db)
    if row is None:
        return {"connected": False, "status": "disconnected", "connected_at": None, "sites": []}
    result: dict[str, Any] = {
        "connected": row["status"] == "connected",
        "status": row["status"],
        "connected_at": row["connected_at"],
        "last_error": (row["config"] or {}).get("last_error"),
        "sites": [],
    }
    if row["status"] != "connected":
        return result
    try:
        token = _access_token(db, settings, row)
        if token is None:
            raise ProviderError("no usable token")
        listing = _http(GscEndpoints.of(settings).sites, token=token)
        result["sites"] = [
            {"site_url": s.get("siteUrl"), "permission": s.get("permissionLevel")}
            for s in listing.get("siteEntry", [])
            if isinstance(s, dict)
        ]
    except (ProviderError, KeyError, TypeError, AttributeError) as exc:
        logger.warning("search-console sites unavailable", extra={"reason": str(exc)})
        result["sites"] = None
        result["provider_error"] = say("search_console.unreachable")
    return result


def gsc_disconnect(db: Database) -> dict[str, Any]:
    """Revoke the token at the provider (best effort) and forget it."""
    settings = config.get_settings()
    row = _gsc_row(db, lock=True)
    if row is None:
        return {"ok": True, "revoked": False}
    stored = _opened_json(row)
    revoked = False
    token = stored.get("refresh_token") or stored.get("access_token")
    if stored.get("flow") == "connected" and token:
        try:
            _http(GscEndpoints.of(settings).revoke, form={"token": str(token)})
            revoked = True
        except ProviderError as exc:
            logger.warning("search-console revoke failed", extra={"reason": str(exc)})
    db.all(
        "UPDATE integrations SET status = 'disconnected', secret_encrypted = NULL, connected_at = NULL, "
        "config = '{}' WHERE id = %s",
        (row["id"],),
    )
    return {"ok": True, "revoked": revoked}
