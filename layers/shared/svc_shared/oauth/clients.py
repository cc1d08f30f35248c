"""The OAuth clients: registered ones (dynamic client registration, RFC 7591) and ones identified by a Client ID
Metadata Document URL (svc_shared.oauth.documents); client authentication at the token endpoint."""

from __future__ import annotations

import base64
import contextlib
import hmac
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.logs import get_logger
from svc_shared.core.tokens import hash_token, new_token
from svc_shared.oauth.documents import (
    FAILURE_TTL,
    DocumentCache,
    DocumentError,
    DocumentFetcher,
    looks_like_document_url,
)
from svc_shared.oauth.errors import OAuthError
from svc_shared.oauth.messages import (
    MAX_NAME_LENGTH,
    ClientCredentials,
    ClientMetadata,
    redirect_uris_problem,
)
from svc_shared.oauth.metadata import GRANT_TYPES, SCOPE
from svc_shared.storage import keys
from svc_shared.storage.dal import ConditionFailed, Table, item_absent, item_exists

logger = get_logger()

# A registration that never completes a token exchange is deleted after this long.
UNUSED_CLIENT_TTL = 7 * 24 * 3600
REGISTRATIONS_PER_MINUTE = 60


@dataclass(frozen=True)
class Client:
    client_id: str
    redirect_uris: tuple[str, ...]
    auth_method: str
    secret_hash: str | None
    name: str | None
    created_at: int
    used: bool
    # Identified by a metadata document at its client_id URL, rather than registered here.
    metadata_document: bool = False

    @property
    def confidential(self) -> bool:
        return self.auth_method != "none"

    @property
    def host(self) -> str | None:
        """The host that vouches for a metadata-document client (the consent page shows it)."""
        return urlsplit(self.client_id).hostname if self.metadata_document else None

    @property
    def display_name(self) -> str | None:
        return self.name or self.host


def _client(item: dict[str, Any]) -> Client:
    return Client(
        client_id=item["client_id"],
        redirect_uris=tuple(item["redirect_uris"]),
        auth_method=item["auth_method"],
        secret_hash=item.get("secret_hash"),
        name=item.get("client_name"),
        created_at=int(item["created_at"]),
        used=bool(item.get("used", False)),
        metadata_document=bool(item.get("document", False)),
    )


def _checked_document(url: str, body: dict[str, Any]) -> dict[str, Any]:
    """The parts of a metadata document this server uses, checked (the draft, §4 and §6)."""

    def refuse(reason: str) -> DocumentError:
        return DocumentError(url, reason)

    if body.get("client_id") != url:
        raise refuse(say("client_document.client_id_differs"))
    uris = body.get("redirect_uris")
    if not isinstance(uris, list) or not uris:
        raise refuse(say("oauth.redirect_uris_required"))
    problem = redirect_uris_problem(uris)
    if problem is not None:
        raise refuse(problem)
    if body.get("token_endpoint_auth_method", "none") != "none":
        raise refuse(say("client_document.secret_method"))
    grant_types = body.get("grant_types", list(GRANT_TYPES))
    if not isinstance(grant_types, list) or "authorization_code" not in grant_types:
        raise refuse(say("client_document.no_code_grant"))
    response_types = body.get("response_types", ["code"])
    if not isinstance(response_types, list) or "code" not in response_types:
        raise refuse(say("client_document.no_code_response"))
    name = body.get("client_name")
    if name is not None and (not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_LENGTH):
        raise refuse(say("oauth.client_name_invalid", max_length=MAX_NAME_LENGTH))
    return {"redirect_uris": list(dict.fromkeys(uris)), "client_name": name.strip() if name else None}


class Clients:
    def __init__(self, table: Table, clock: Clock, documents: DocumentFetcher | None = None) -> None:
        self._table = table
        self._clock = clock
        self._documents = documents or DocumentFetcher(clock=clock.now)
        self._memory = DocumentCache(clock.now)

    def register(self, metadata: ClientMetadata) -> dict[str, Any]:
        """Store a client of checked metadata and answer the registration response (RFC 7591 §3.2.1). The
        client secret appears in this answer only."""
        method = metadata.token_endpoint_auth_method
        uris = metadata.redirect_uris
        grant_types = list(metadata.grant_types)
        name = metadata.client_name
        now = int(self._clock.now())
        client_id = str(uuid.uuid4())
        secret = new_token() if method != "none" else None
        self._table.put(
            {
                "pk": keys.oauth_client(client_id),
                "sk": keys.CLIENT,
                "client_id": client_id,
                "redirect_uris": uris,
                "auth_method": method,
                "secret_hash": hash_token(secret) if secret else None,
                "client_name": name,
                "grant_types": grant_types,
                "created_at": now,
                "expires_at": now + UNUSED_CLIENT_TTL,
            },
            when=item_absent(),
        )
        answer: dict[str, Any] = {
            "client_id": client_id,
            "client_id_issued_at": now,
            "redirect_uris": uris,
            "token_endpoint_auth_method": method,
            "grant_types": grant_types,
            "response_types": ["code"],
            "scope": SCOPE,
        }
        if name:
            answer["client_name"] = name
        if secret:
            answer["client_secret"] = secret
            answer["client_secret_expires_at"] = 0
        return answer

    def get(self, client_id: object, *, fetch: bool = True) -> Client | None:
        """The client, or None for an unknown or expired id or an unusable metadata document. With
        `fetch=False` a metadata-document client is only looked up as last fetched (for showing its name)."""
        if looks_like_document_url(client_id):
            assert isinstance(client_id, str)
            if not fetch:
                item = self._table.get(keys.oauth_client(client_id), keys.CLIENT)
                return _client(item) if item and item.get("document") else None
            try:
                return self.lookup(client_id)
            except DocumentError:
                return None
        if not isinstance(client_id, str) or not client_id or len(client_id) > 100:
            return None
        item = self._table.get(keys.oauth_client(client_id), keys.CLIENT)
        if item is None:
            return None
        if not item.get("used") and item.get("expires_at", 0) <= self._clock.now():
            return None
        return _client(item)

    def lookup(self, client_id: object) -> Client | None:
        """As get, but an unusable metadata document raises DocumentError saying why."""
        if not looks_like_document_url(client_id):
            return self.get(client_id)
        assert isinstance(client_id, str)
        remembered = self._memory.get(client_id)
        if isinstance(remembered, DocumentError):
            raise remembered
        if isinstance(remembered, Client):
            return remembered
        now = self._clock.now()
        item = self._table.get(keys.oauth_client(client_id), keys.CLIENT)
        if item and item.get("document") and item.get("fresh_until", 0) > now:
            client = _client(item)
            self._memory.put(client_id, client, float(item["fresh_until"]))
            return client
        try:
            document = self._documents.fetch(client_id)
            checked = _checked_document(client_id, document.body)
        except DocumentError as exc:
            self._memory.put(client_id, exc, now + FAILURE_TTL)
            raise
        return self._keep_document(client_id, checked, document.fresh_until, item)

    def _keep_document(
        self, url: str, checked: dict[str, Any], fresh_until: float, known: dict[str, Any] | None
    ) -> Client:
        """Store the checked document, so every instance reuses it while fresh and the workspace can name the
        client without fetching; like a registration, it is deleted if no token exchange ever follows."""
        now = int(self._clock.now())
        used = bool(known and known.get("used"))
        item: dict[str, Any] = {
            "pk": keys.oauth_client(url),
            "sk": keys.CLIENT,
            "client_id": url,
            "document": True,
            "redirect_uris": checked["redirect_uris"],
            "auth_method": "none",
            "client_name": checked["client_name"],
            "created_at": int(known["created_at"]) if known else now,
            "fresh_until": int(fresh_until),
            "used": used,
        }
        if not used:
            item["expires_at"] = now + UNUSED_CLIENT_TTL
        self._table.put(item)
        client = _client(item)
        self._memory.put(url, client, fresh_until)
        return client

    def mark_used(self, client: Client) -> None:
        """A client that completed a token exchange no longer expires."""
        if client.used:
            return
        with contextlib.suppress(ConditionFailed):  # deleted meanwhile: nothing to keep
            self._table.update(
                keys.oauth_client(client.client_id),
                keys.CLIENT,
                set={"used": True},
                remove=("expires_at",),
                when=item_exists(),
            )

    def authenticate(self, credentials: ClientCredentials, authorization: str | None) -> Client:
        """The client making a token request, authenticated by its registered method (RFC 6749 §2.3)."""
        basic_id = basic_secret = None
        if authorization and authorization[:6].lower() == "basic ":
            try:
                decoded = base64.b64decode(authorization[6:].strip(), validate=True).decode()
                raw_id, _, raw_secret = decoded.partition(":")
                basic_id, basic_secret = unquote(raw_id), unquote(raw_secret)
            except (ValueError, UnicodeDecodeError) as exc:
                raise OAuthError("invalid_client", say("oauth.malformed_basic")) from exc
        client_id = basic_id or credentials.client_id
        if credentials.client_id and basic_id and credentials.client_id != basic_id:
            raise OAuthError("invalid_client", say("oauth.client_id_differs"))
        try:
            client = self.lookup(client_id)
        except DocumentError as exc:
            # Nothing of what the fetch found: the caller is not a signed-in person (the consent page explains).
            logger.info("client metadata document refused", extra={"url": exc.url, "reason": exc.reason})
            raise OAuthError("invalid_client", say("oauth.document_unusable")) from None
        if client is None:
            raise OAuthError("invalid_client", say("oauth.unknown_client_id"))
        if client.auth_method == "none":
            if basic_secret or credentials.client_secret:
                raise OAuthError("invalid_client", say("oauth.public_client"))
            return client
        secret = basic_secret if client.auth_method == "client_secret_basic" else credentials.client_secret
        if (
            not secret
            or client.secret_hash is None
            or not hmac.compare_digest(hash_token(secret), client.secret_hash)
        ):
            raise OAuthError("invalid_client", say("oauth.client_auth_failed", method=client.auth_method))
        return client
