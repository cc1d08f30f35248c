"""The /mcp hot path: an authenticated, rate-limited request in one DynamoDB round trip.

An access token names its user, grant (the OAuth token family) and its own id under an HMAC signature (a key
derived from the session secret in Secrets Manager, fetched once per instance). Reading it is pure
computation: a malformed, forged, expired or other-resource token is refused with no I/O at all.

Each user has one gate item (`USER#<id>` / `MCP`) that holds, per live grant, the id of its current access
token (`TOKEN#<grant>`) and when it was last used (`USED#<grant>`), and the sliding log of
the user's /mcp requests (60 places in six string attributes `l0`..`l5`, see ratelimit.py). One conditional
UpdateItem on that item admits a request: the condition requires the token to be its grant's current one and
one group of the log to be as this instance last saw it; the update rewrites that group, nothing else, so it
costs what a counter increment costs. "Last used" rides on the same write when this instance has not recorded
it for the grant in the last USE_RESOLUTION seconds (so it is exact to within a minute, the workspace shows it
to the minute). Issuing or rotating tokens sets `TOKEN#<grant>` in the same transaction that writes the
tokens, and revoking a grant removes it, so a revoked or rotated-away access
token is refused by the very next request, on every instance.

The stored access-token hash items stay as they were (RFC 7009 revocation finds a token's grant by its hash).
Tokens issued before this format (`svcat_<random>`) are still honoured until they expire: their hash item is
read, then the gate counts the request (two round trips, for at most a day).
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from svc_shared.core.clock import Clock
from svc_shared.core.tokens import BadSignature, new_token, sign, unsign
from svc_shared.storage import keys
from svc_shared.storage.dal import Cond, ConditionFailed, Table, TransactionConflict, attr
from svc_shared.storage.ratelimit import SlidingLog, log_time

ACCESS_PREFIX = "svcat_"
# The signed claims carry the client_id, which may be a metadata document URL of up to 500 characters
# (svc_shared.oauth.documents.MAX_URL_LENGTH): such a token is about 950 characters.
MAX_ACCESS_TOKEN = 1024
RATE_LIMIT, RATE_WINDOW = 60, 60
USE_RESOLUTION = 60  # seconds: a grant's "last used" is written at most this often per instance
_REMEMBERED = 10_000  # grants whose last-use write an instance remembers
DEFAULT_SCOPE = "mcp:all"
_FIELDS = {"u": str, "g": str, "j": str, "c": str, "e": int}


def _purpose(resource: str) -> str:
    # The resource is part of the signature: a token issued for another resource does not verify here.
    return f"mcp-access {resource}"


@dataclass(frozen=True)
class AccessClaims:
    """What a signed access token says (before the gate has checked that its grant still holds it)."""

    user_id: str
    grant_id: str
    token_id: str
    client_id: str
    expires_at: int
    scope: str = DEFAULT_SCOPE


def issue_access_token(
    key: bytes,
    *,
    resource: str,
    user_id: str,
    grant_id: str,
    client_id: str,
    expires_at: int,
    scope: str = DEFAULT_SCOPE,
) -> tuple[str, str]:
    """(access token, its id)."""
    token_id = new_token(12)
    payload = {"u": user_id, "g": grant_id, "j": token_id, "c": client_id, "e": int(expires_at), "s": scope}
    return ACCESS_PREFIX + sign(payload, key, _purpose(resource)), token_id


def read_access_token(token: str | None, key: bytes, resource: str, now: float) -> AccessClaims | None:
    """The claims of a well-formed, authentic, unexpired token for `resource`; None otherwise. No I/O."""
    if not token or len(token) > MAX_ACCESS_TOKEN or not token.startswith(ACCESS_PREFIX):
        return None
    try:
        payload = unsign(token[len(ACCESS_PREFIX) :], key, _purpose(resource))
    except BadSignature:
        return None
    if any(not isinstance(payload.get(name), kind) for name, kind in _FIELDS.items()):
        return None
    if payload["e"] <= now:
        return None
    scope = payload.get("s", DEFAULT_SCOPE)  # tokens issued before scopes were signed in hold the only scope
    if not isinstance(scope, str):
        return None
    return AccessClaims(payload["u"], payload["g"], payload["j"], payload["c"], payload["e"], scope)


def is_signed_format(token: str) -> bool:
    """Signed tokens carry a `.` between payload and signature; tokens of the earlier format never do."""
    return "." in token


@dataclass(frozen=True)
class Admission:
    allowed: bool
    revoked: bool = False
    retry_after: int = 0


@dataclass(frozen=True)
class AuthorizedClient:
    """One grant of a user, as the workspace lists it."""

    grant_id: str
    client_id: str
    authorized_at: int
    last_used_at: float | None


@dataclass(eq=False)
class Gate:
    table: Table
    clock: Clock
    limit: int = RATE_LIMIT
    window: int = RATE_WINDOW
    _log: SlidingLog = field(init=False, repr=False)
    # grant id -> when this instance last wrote its "last used"
    _used: dict[str, float] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self._log = SlidingLog(self.limit, self.window)

    def admit(self, user_id: str, grant_id: str | None, token_id: str | None, amount: int = 1) -> Admission:
        """Count `amount` requests of the user if they fit in the sliding window and the token is its
        grant's current one (grant None: an earlier-format token already checked by its hash). One
        UpdateItem when this instance's view of the user's log is current (see ratelimit.py); it also
        records the grant's last use when this instance has not done so for USE_RESOLUTION seconds."""
        now = log_time(self.clock)
        pk = keys.user(user_id)
        names = keys.gate_attributes(grant_id) if grant_id is not None else {}
        record_use = grant_id is not None and now - self._used.get(grant_id, -math.inf) >= USE_RESOLUTION

        def send(sets: dict[str, Any], when: Cond | None, remove: list[str]) -> dict[str, Any]:
            if grant_id is not None:
                if record_use:
                    sets = {**sets, names["used"]: now}
                current = attr(names["token"]).eq(token_id)
                when = current & when if when is not None else current
            for attempt in range(3):
                try:
                    return self.table.update(
                        pk,
                        keys.MCP_GATE,
                        set=sets,
                        remove=remove,
                        when=when,
                        returns="NONE",
                        old_on_failure=True,
                    )
                except TransactionConflict:
                    # A token issuance, rotation or revocation of this user is being written: a few ms.
                    if attempt == 2:
                        raise
                    time.sleep(random.uniform(0.005, 0.02))
            raise AssertionError("unreachable")

        def holds(item: dict[str, Any]) -> bool:
            return grant_id is None or item.get(names["token"]) == token_id

        try:
            allowed, wait, revoked = self._log.admit(pk, now, amount, send, holds)
        except TransactionConflict:  # still being written after three tries: the client retries in a second
            return Admission(False, retry_after=1)
        if revoked:
            self._used.pop(grant_id or "", None)
            return Admission(False, revoked=True)
        if allowed and record_use and grant_id is not None:
            if len(self._used) >= _REMEMBERED:
                self._used.clear()
            self._used[grant_id] = now
        return Admission(allowed, retry_after=wait)

    # -- what token issuance and revocation add to their transactions ------------------------------------
    def grant_action(
        self, user_id: str, grant_id: str, client_id: str, token_id: str, now: int
    ) -> dict[str, Any]:
        """Make `token_id` the grant's current access token (a new grant, or a rotation). The grant's client and
        authorization time live on its token family item, not here: every /mcp request writes this item, so it
        holds what the request needs and no more (a metadata-document client id is up to 500 characters)."""
        names = keys.gate_attributes(grant_id)
        return self.table.update_action(
            keys.user(user_id),
            keys.MCP_GATE,
            set={names["token"]: token_id},
            remove=(names["client"], names["authorized"]),  # as gate items written before kept them
        )

    def revoke_action(self, user_id: str, grant_id: str) -> dict[str, Any]:
        """Forget the grant: its access token is refused from the next request on."""
        return self.table.update_action(
            keys.user(user_id), keys.MCP_GATE, remove=keys.gate_attributes(grant_id).values()
        )

    def revoke_access_token(self, claims: AccessClaims) -> bool:
        """Refuse this one access token from the next request on, keeping its grant (its refresh token can
        still get a new one): for RFC 7009 revocation of an access token. False when the grant already holds
        another token (rotated, or revoked). One conditional UpdateItem."""
        names = keys.gate_attributes(claims.grant_id)
        try:
            self.table.update(
                keys.user(claims.user_id),
                keys.MCP_GATE,
                set={names["token"]: "-"},
                when=attr(names["token"]).eq(claims.token_id),
                returns="NONE",
            )
        except ConditionFailed:
            return False
        return True

    # -- the workspace's list ------------------------------------------------------------------------------
    def _item(self, user_id: str) -> tuple[dict[str, Any], list[str]]:
        """The user's gate item and the ids of its live grants (one consistent read)."""
        item = self.table.get(keys.user(user_id), keys.MCP_GATE, consistent=True) or {}
        prefix = keys.GATE_TOKEN_PREFIX
        return item, [name[len(prefix) :] for name in item if name.startswith(prefix)]

    def live_grants(self, user_id: str) -> list[str]:
        """The ids of the user's live grants (one read of the gate item)."""
        return self._item(user_id)[1]

    def authorized_clients(self, user_id: str) -> list[AuthorizedClient]:
        """The user's live grants, most recently used first (never used: by authorization time): the gate item
        for which grants live and their last use, their token family items for the client and when it was
        authorized. A grant whose family is gone (its refresh token expired) is left out."""
        item, grants = self._item(user_id)
        families = {
            str(family["family_id"]): family
            for family in (
                self.table.batch_get([(keys.oauth_family(g), keys.FAMILY) for g in grants]) if grants else []
            )
        }
        found = []
        for grant_id in grants:
            attributes = keys.gate_attributes(grant_id)
            family = families.get(grant_id, {})
            client_id = item.get(attributes["client"]) or family.get("client_id")
            if client_id is None:
                continue
            used = item.get(attributes["used"])
            found.append(
                AuthorizedClient(
                    grant_id=grant_id,
                    client_id=str(client_id),
                    authorized_at=int(item.get(attributes["authorized"]) or family.get("created_at", 0)),
                    last_used_at=float(used) if used is not None else None,
                )
            )
        return sorted(found, key=lambda c: (c.last_used_at or -math.inf, c.authorized_at), reverse=True)


# -- the workspace page: authorized MCP clients ------------------------------------------------------------
@dataclass(frozen=True)
class AuthorizedClientView:
    grant_id: str
    client_id: str
    client_name: str
    authorized_at: int
    last_used_at: float | None

    def public(self) -> dict[str, Any]:
        last_used_at = int(self.last_used_at) if self.last_used_at is not None else None
        return {**asdict(self), "last_used_at": last_used_at}


@dataclass(eq=False)
class McpClients:
    """A user's authorized MCP clients (one per grant), and revoking one. "Last used" is written by the
    /mcp request's own gate update: listing costs no extra write on the hot path."""

    grants: Any  # oauth.grants.Grants
    clients: Any  # oauth.clients.Clients

    def list(self, user_id: str) -> list[AuthorizedClientView]:
        views = []
        for found in self.grants.gate.authorized_clients(user_id):
            client = self.clients.get(found.client_id, fetch=False)
            name = (client.display_name if client else None) or "MCP client"
            views.append(
                AuthorizedClientView(
                    found.grant_id, found.client_id, name, found.authorized_at, found.last_used_at
                )
            )
        return views

    def revoke(self, user_id: str, grant_id: str) -> bool:
        """Revoke one of the user's grants: its access token is refused from the next request on and its
        refresh token no longer works. False when the user holds no such grant (nothing is changed)."""
        if grant_id not in self.grants.gate.live_grants(user_id):
            return False
        self.grants.revoke_family(grant_id)
        return True


def revoke_user_grants(grants: Any, user_id: str) -> int:
    """Revoke every MCP grant of the user (`grants`: an oauth.grants.Grants): each one's access and refresh
    tokens stop working from the next request on. Returns how many grants were live."""
    live = grants.gate.live_grants(user_id)
    for grant_id in live:
        grants.revoke_family(grant_id)
    return len(live)
