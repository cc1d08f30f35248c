"""Provider connections of a workspace user: the OAuth dance with each provider, one encrypted token per
(user, provider), the connections summary, disconnecting, and fresh db_host tokens on demand."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.crypto import DecryptionFailed, Envelope
from svc_shared.core.errors import Conflict, DomainError, InvalidInput, UpstreamError
from svc_shared.core.tokens import BadSignature, sign, unsign
from svc_shared.domain.accounts import Accounts
from svc_shared.providers.http import ProviderError
from svc_shared.storage import keys
from svc_shared.storage.dal import ConditionFailed, Table, attr, item_absent

if TYPE_CHECKING:
    from svc_shared.providers.repo_host import RepoHost

Provider = Literal["repo_host", "db_host", "static_host"]
PROVIDERS: tuple[str, ...] = ("repo_host", "db_host", "static_host")
STATE_TTL = 600
REFRESH_MARGIN = 120
_PURPOSE = "provider-oauth-state"


class ConnectionFailed(DomainError, code="connection_failed"):
    """A provider connection could not be completed (state, expiry, exchange); `provider` once the state
    has named it."""

    def __init__(self, message: str, *, code: str | None = None, provider: str | None = None) -> None:
        super().__init__(message, code=code)
        self.provider = provider


class ReconnectRequired(DomainError, code="reconnect_required"):
    """No usable token: missing, unreadable, expired without a working refresh, or under-scoped."""

    def __init__(self, message: str, *, provider: str) -> None:
        super().__init__(message)
        self.provider = provider


@dataclass(frozen=True)
class ProviderApp:
    """One provider's OAuth app: its adapter and client credentials (the secret is read when needed)."""

    oauth: Any
    client_id: str
    client_secret: Any  # a callable returning the secret, so Secrets Manager is read only when used


@dataclass(frozen=True)
class StoredToken:
    provider: str
    access_token: str
    account: str | None
    expires_at: int | None


def _expiry(now: int, expires_in: object) -> int | None:
    """When a token expires, from the provider's `expires_in` (absent: it does not expire)."""
    try:
        seconds = int(float(str(expires_in)))
    except ValueError:
        return None
    return now + seconds if seconds > 0 else None


def check_provider(provider: object) -> str:
    if provider not in PROVIDERS:
        raise InvalidInput(
            say("connections.provider_invalid", providers=", ".join(PROVIDERS)), code="invalid_provider"
        )
    return str(provider)


@dataclass(eq=False)
class Connections:
    tokens: Table
    envelope: Envelope = field(repr=False)
    accounts: Accounts
    apps: dict[str, ProviderApp] = field(repr=False)  # with their client credentials
    _: KW_ONLY
    state_key: bytes = field(repr=False)
    redirect_uri: Callable[[], str]  # the callback URL, from the public base URL when it is needed
    clock: Clock
    repo_host_api: Callable[[str], RepoHost]  # factory: token -> RepoHost adapter

    # -- the OAuth dance ----------------------------------------------------------------------------------
    def initiate(self, user_id: str, provider: str) -> str:
        """The provider's authorization URL, with a signed state valid 10 minutes for this user and provider."""
        app = self.apps[check_provider(provider)]
        state = sign(
            {
                "u": user_id,
                "p": provider,
                "n": secrets.token_urlsafe(12),
                "exp": int(self.clock.now()) + STATE_TTL,
            },
            self.state_key,
            _PURPOSE,
        )
        return str(
            app.oauth.authorize_url(client_id=app.client_id, redirect_uri=self.redirect_uri(), state=state)
        )

    def _state(self, user_id: str, state: str | None) -> tuple[str, str]:
        try:
            data = unsign(state or "", self.state_key, _PURPOSE)
        except BadSignature:
            raise ConnectionFailed(say("connections.state_not_verified"), code="state_invalid") from None
        provider, nonce = data.get("p"), data.get("n")
        if data.get("u") != user_id or provider not in PROVIDERS or not isinstance(nonce, str):
            raise ConnectionFailed(say("connections.state_not_verified"), code="state_invalid")
        if not isinstance(data.get("exp"), int) or data["exp"] <= self.clock.now():
            raise ConnectionFailed(say("connections.state_expired"), code="state_expired")
        return str(provider), nonce

    def provider_of(self, user_id: str, state: str | None) -> str | None:
        """The provider a callback's state names (for its failure to be shown on that provider's card), or
        None when the state is not one this user's flow signed."""
        try:
            data = unsign(state or "", self.state_key, _PURPOSE)
        except BadSignature:
            return None
        provider = data.get("p")
        return str(provider) if data.get("u") == user_id and provider in PROVIDERS else None

    def complete(self, user_id: str, *, code: str | None, state: str | None) -> str:
        """Finish a connection: verify the state (once), exchange the code, store the token encrypted.
        Nothing is stored unless the whole exchange succeeded."""
        provider, nonce = self._state(user_id, state)
        try:  # a state is good for one callback: a replay is refused before the code is spent
            self.tokens.put(
                {
                    "user_id": user_id,
                    "provider": keys.connection_state(nonce),
                    "expires_at": int(self.clock.now()) + STATE_TTL,
                },
                when=item_absent(),
            )
        except ConditionFailed:
            raise ConnectionFailed(
                say("connections.state_not_verified"), code="state_replayed", provider=provider
            ) from None
        if not code:
            raise ConnectionFailed(
                say("connections.exchange_failed"), code="exchange_failed", provider=provider
            )
        app = self.apps[provider]
        try:
            grant = app.oauth.exchange(
                client_id=app.client_id,
                client_secret=app.client_secret(),
                code=code,
                redirect_uri=self.redirect_uri(),
            )
            account = self._account(provider, grant["access_token"])
        except (ProviderError, UpstreamError, KeyError, TypeError) as exc:
            raise ConnectionFailed(
                say("connections.exchange_failed"), code="exchange_failed", provider=provider
            ) from exc
        self._store(user_id, provider, grant, account, version=None)
        if provider == "repo_host":
            self.accounts.set_repo_host(user_id, connected=True, username=account)
        return provider

    def _account(self, provider: str, access_token: str) -> str | None:
        if provider == "repo_host":
            return self.repo_host_api(access_token).user().login
        return None

    def _store(
        self, user_id: str, provider: str, grant: dict[str, Any], account: str | None, *, version: int | None
    ) -> None:
        context = {"user_id": user_id, "provider": provider}
        expires_in = grant.get("expires_in")
        now = int(self.clock.now())
        item = {
            "user_id": user_id,
            "provider": provider,
            "access_token": self.envelope.encrypt(grant["access_token"], context),
            "refresh_token": self.envelope.encrypt(grant["refresh_token"], context)
            if grant.get("refresh_token")
            else None,
            "scope": grant.get("scope"),
            "account": account,
            "token_expires_at": _expiry(now, expires_in),
            "version": (version or 0) + 1,
            "updated_at": now,
        }
        if version is None:
            self.tokens.put(item)  # a reconnect replaces the row
        else:
            self.tokens.put(item, when=attr("version").eq(version))

    # -- reading ------------------------------------------------------------------------------------------
    def summary(self, user_id: str) -> dict[str, Any]:
        rows = {r["provider"] for r in self.tokens.query(user_id)}
        return {"success": True, "connections": {p: p in rows for p in PROVIDERS}}

    def require_for_projects(self, user_id: str) -> None:
        """A project's code and database live in the user's own accounts: both must be connected first."""
        connected = self.summary(user_id)["connections"]
        if not (connected["repo_host"] and connected["db_host"]):
            raise Conflict(say("connections.required_for_projects"), code="connections_required")

    def details(self, user_id: str) -> dict[str, dict[str, Any]]:
        """Per provider: connected or not, the connected account where known, and since when."""
        rows = {r["provider"]: r for r in self.tokens.query(user_id) if r["provider"] in PROVIDERS}
        return {
            p: {
                "connected": p in rows,
                "account": rows[p].get("account") if p in rows else None,
                "updated_at": rows[p].get("updated_at") if p in rows else None,
            }
            for p in PROVIDERS
        }

    def disconnect(self, user_id: str, provider: str) -> None:
        """Forget the stored token only: repositories, database projects and sites stay as they are."""
        self.tokens.delete(user_id, check_provider(provider))
        if provider == "repo_host":
            self.accounts.set_repo_host(user_id, connected=False, username=None)

    def token(self, user_id: str, provider: str, *, missing_message: str | None = None) -> StoredToken:
        """A usable token: decrypted, and for db_host refreshed first when it is about to expire."""
        message = missing_message or (
            say("connections.db_host_not_connected")
            if provider == "db_host"
            else say("connections.repo_host_not_connected")
        )
        row = self.tokens.get(user_id, check_provider(provider), consistent=True)
        if row is None:
            raise ReconnectRequired(message, provider=provider)
        expires = row.get("token_expires_at")
        if expires is not None and expires - REFRESH_MARGIN <= self.clock.now():
            row = self._refresh(user_id, provider, row, message)
        return self._read(row, message)

    def _read(self, row: dict[str, Any], message: str) -> StoredToken:
        context = {"user_id": row["user_id"], "provider": row["provider"]}
        try:
            access = self.envelope.decrypt_text(row["access_token"], context)
        except DecryptionFailed as exc:
            raise ReconnectRequired(message, provider=row["provider"]) from exc
        return StoredToken(row["provider"], access, row.get("account"), row.get("token_expires_at"))

    def _refresh(self, user_id: str, provider: str, row: dict[str, Any], message: str) -> dict[str, Any]:
        """Rotate an expiring token once, even when several requests need it at the same time: the write is
        conditional on the row's version, and a loser reads the winner's token."""
        app = self.apps.get(provider)
        if app is None or not row.get("refresh_token") or not hasattr(app.oauth, "refresh"):
            raise ReconnectRequired(message, provider=provider)
        context = {"user_id": user_id, "provider": provider}
        try:
            refresh_token = self.envelope.decrypt_text(row["refresh_token"], context)
            grant = app.oauth.refresh(
                client_id=app.client_id, client_secret=app.client_secret(), refresh_token=refresh_token
            )
            self._store(user_id, provider, grant, row.get("account"), version=int(row.get("version", 0)))
        except (ConditionFailed, ProviderError, DecryptionFailed, KeyError) as exc:
            latest = self.tokens.get(user_id, provider, consistent=True)
            if latest is not None and latest.get("version") != row.get("version"):
                return latest  # another request refreshed it first
            raise ReconnectRequired(message, provider=provider) from exc
        fresh = self.tokens.get(user_id, provider, consistent=True)
        if fresh is None:
            raise ReconnectRequired(message, provider=provider)
        return fresh
