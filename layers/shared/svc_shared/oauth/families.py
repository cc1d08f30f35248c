"""Token families: the access and refresh tokens one grant issues, their rotation, revocation, and access-token
verification. A family is born when an authorization code is exchanged (svc_shared.oauth.grants).

Every secret is stored as its SHA-256 hash. Rotation is a transaction:
- a refresh rotates inside one transaction that requires the old refresh token to be active and the family
  to point at it, so concurrent refreshes cannot both win;
- a rotated refresh token presented again is reuse: the whole family is revoked (RFC 9700 §4.14.2). An operator
  may allow a grace window (REFRESH_GRACE_SECONDS, default 0) within which a replay re-issues the family's pair
  for a client that lost the response.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.tokens import hash_token, new_token
from svc_shared.oauth.clients import Client
from svc_shared.oauth.errors import OAuthError
from svc_shared.oauth.mcpauth import MAX_ACCESS_TOKEN, Gate, issue_access_token
from svc_shared.oauth.messages import TokenRequest
from svc_shared.oauth.metadata import SCOPE
from svc_shared.storage import keys
from svc_shared.storage.dal import ConditionFailed, Table, TransactionConflict, attr, item_absent

ACCESS_TTL = 24 * 3600
REFRESH_TTL = 30 * 24 * 3600
_MAX_ROTATION_ATTEMPTS = 40


@dataclass(frozen=True)
class TokenPair:
    access_token: str
    refresh_token: str
    scope: str

    def response(self) -> dict[str, Any]:
        return {
            "access_token": self.access_token,
            "token_type": "Bearer",
            "expires_in": ACCESS_TTL,
            "refresh_token": self.refresh_token,
            "scope": self.scope,
        }


# The earlier, random access tokens: "svcat_" and new_token()'s 32 bytes in URL-safe base64.
RANDOM_ACCESS_TOKEN_LENGTH = len("svcat_") + 43


@dataclass(frozen=True)
class AccessGrant:
    """What a verified access token allows: who, through which client, for which resource."""

    user_id: str
    client_id: str
    scope: str
    resource: str
    expires_at: int


@dataclass(eq=False)
class TokenFamilies:
    table: Table
    clock: Clock
    resource: str
    # Signed access tokens and the user's /mcp gate (svc_shared.oauth.mcpauth); without a key, random tokens.
    access_key: Callable[[], bytes] | None = field(default=None, repr=False)
    _: KW_ONLY
    grace_seconds: int = 0
    gate: Gate = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.gate = Gate(self.table, self.clock)

    def _access_token(
        self, user_id: str, family_id: str, client_id: str, expires_at: int, scope: str
    ) -> tuple[str, str]:
        if self.access_key is None:
            return f"svcat_{new_token()}", ""
        return issue_access_token(
            self.access_key(),
            resource=self.resource,
            user_id=user_id,
            grant_id=family_id,
            client_id=client_id,
            expires_at=expires_at,
            scope=scope,
        )

    def _gate_grant(self, access: dict[str, Any]) -> list[dict[str, Any]]:
        """The gate update that makes a newly written access token its grant's current one."""
        if not access.get("token_id"):
            return []
        return [
            self.gate.grant_action(
                access["user_id"],
                access["family_id"],
                access["client_id"],
                access["token_id"],
                access["created_at"],
            )
        ]

    # -- token families -----------------------------------------------------------------------------------
    def _token_items(
        self, family_id: str, client_id: str, user_id: str, resource: str, scope: str
    ) -> tuple[TokenPair, dict[str, Any], dict[str, Any]]:
        now = int(self.clock.now())
        access_token, token_id = self._access_token(user_id, family_id, client_id, now + ACCESS_TTL, scope)
        pair = TokenPair(access_token=access_token, refresh_token=f"svcrt_{new_token()}", scope=scope)
        common = {
            "family_id": family_id,
            "client_id": client_id,
            "user_id": user_id,
            "resource": resource,
            "scope": scope,
            "created_at": now,
        }
        access = {
            "pk": keys.oauth_access(hash_token(pair.access_token)),
            "sk": keys.ACCESS,
            **common,
            "token_id": token_id or None,
            "expires_at": now + ACCESS_TTL,
        }
        refresh = {
            "pk": keys.oauth_refresh(hash_token(pair.refresh_token)),
            "sk": keys.REFRESH,
            **common,
            "status": "active",
            "access_hash": hash_token(pair.access_token),
            "expires_at": now + REFRESH_TTL,
        }
        return pair, access, refresh

    def _successor_items(self, old: dict[str, Any]) -> tuple[TokenPair, dict[str, Any], dict[str, Any]]:
        """The pair that follows `old`'s in its family (same client, user, resource and scope)."""
        return self._token_items(
            old["family_id"], old["client_id"], old["user_id"], old["resource"], old["scope"]
        )

    def _new_family(
        self, family_id: str, client_id: str, user_id: str, resource: str, scope: str
    ) -> TokenPair:
        pair, access, refresh = self._token_items(family_id, client_id, user_id, resource, scope)
        now = int(self.clock.now())
        actions = [
            self.table.put_action(access),
            self.table.put_action(refresh),
            *self._gate_grant(access),
            self.table.put_action(
                {
                    "pk": keys.oauth_family(family_id),
                    "sk": keys.FAMILY,
                    "family_id": family_id,
                    "client_id": client_id,
                    "user_id": user_id,
                    "resource": resource,
                    "scope": scope,
                    "current_rt": refresh["pk"],
                    "current_at": access["pk"],
                    "created_at": now,
                    "expires_at": now + REFRESH_TTL,
                },
                when=item_absent(),
            ),
        ]
        for attempt in range(3):  # a /mcp request of the same user may be writing the gate item right now
            try:
                self.table.transact(actions)
                break
            except TransactionConflict as conflict:
                if attempt == 2 or "ConditionalCheckFailed" in conflict.reasons:
                    raise
                time.sleep(random.uniform(0.005, 0.03))
        return pair

    def refresh(self, client: Client, request: TokenRequest) -> TokenPair:
        token = request.refresh_token
        if not token:
            raise OAuthError("invalid_request", say("oauth.refresh_token_required"))
        if request.scope and set(request.scope.split()) - {SCOPE}:
            raise OAuthError("invalid_scope", say("oauth.scope_must_be", scope=SCOPE))
        key = keys.oauth_refresh(hash_token(token))
        for _ in range(_MAX_ROTATION_ATTEMPTS):
            item = self.table.get(key, keys.REFRESH, consistent=True)
            now = self.clock.now()
            if item is None or item["expires_at"] <= now or item["client_id"] != client.client_id:
                raise OAuthError("invalid_grant", say("oauth.invalid_refresh"))
            if request.resource and request.resource != item["resource"]:
                raise OAuthError("invalid_target", say("oauth.resource_differs_from_grant"))
            try:
                if item["status"] == "active":
                    return self._rotate(item)
                if (
                    item["status"] == "rotated"
                    and self.grace_seconds
                    and now - item["rotated_at"] <= self.grace_seconds
                ):
                    return self._reissue(item)
            except (TransactionConflict, ConditionFailed):
                # Another request rotated this family first: read again and take the path that now applies.
                time.sleep(random.uniform(0.001, 0.02))
                continue
            if item["status"] in ("rotated", "superseded"):
                self.revoke_family(item["family_id"])  # reuse: the token may have been stolen
            raise OAuthError("invalid_grant", say("oauth.invalid_refresh"))
        raise OAuthError("invalid_grant", say("oauth.invalid_refresh"))

    def _rotate(self, old: dict[str, Any]) -> TokenPair:
        """Consume an active refresh token: the old pair dies, a new pair is born, in one transaction."""
        pair, access, refresh = self._successor_items(old)
        self.table.transact(
            [
                self.table.update_action(
                    old["pk"],
                    keys.REFRESH,
                    set={"status": "rotated", "rotated_at": access["created_at"], "successor": refresh["pk"]},
                    when=attr("status").eq("active"),
                ),
                self.table.delete_action(keys.oauth_access(old["access_hash"]), keys.ACCESS),
                self.table.put_action(access),
                self.table.put_action(refresh),
                *self._gate_grant(access),
                self._family_move(
                    old["family_id"], old["pk"], refresh["pk"], access["pk"], access["created_at"]
                ),
            ]
        )
        return pair

    def _reissue(self, old: dict[str, Any]) -> TokenPair:
        """A rotated refresh token replayed within the grace window: supersede its successor (which the
        client never received, or lost) with a new pair, and keep the family alive."""
        successor_pk = old["successor"]
        successor = self.table.get(successor_pk, keys.REFRESH, consistent=True)
        if successor is None:  # the family was revoked
            raise OAuthError("invalid_grant", say("oauth.invalid_refresh"))
        if successor["status"] == "rotated":
            # The successor was already used, so whoever replays this token is not the client that lost
            # a response: treat it as theft.
            self.revoke_family(old["family_id"])
            raise OAuthError("invalid_grant", say("oauth.invalid_refresh"))
        if successor["status"] != "active":
            raise ConditionFailed("a concurrent request superseded the successor")
        pair, access, refresh = self._successor_items(old)
        self.table.transact(
            [
                self.table.update_action(
                    old["pk"],
                    keys.REFRESH,
                    set={"successor": refresh["pk"]},
                    when=attr("successor").eq(successor_pk),
                ),
                self.table.update_action(
                    successor_pk,
                    keys.REFRESH,
                    set={"status": "superseded", "rotated_at": access["created_at"]},
                    when=attr("status").eq("active"),
                ),
                self.table.delete_action(keys.oauth_access(successor["access_hash"]), keys.ACCESS),
                self.table.put_action(access),
                self.table.put_action(refresh),
                *self._gate_grant(access),
                self._family_move(
                    old["family_id"], successor_pk, refresh["pk"], access["pk"], access["created_at"]
                ),
            ]
        )
        return pair

    def _family_move(self, family_id: str, from_rt: str, to_rt: str, to_at: str, now: int) -> dict[str, Any]:
        return self.table.update_action(
            keys.oauth_family(family_id),
            keys.FAMILY,
            set={"current_rt": to_rt, "current_at": to_at, "expires_at": now + REFRESH_TTL},
            when=attr("current_rt").eq(from_rt) & attr("revoked_at").missing(),
        )

    def revoke_family(self, family_id: str) -> None:
        """Kill every live token of a family: mark it revoked and delete its live access and refresh tokens
        (earlier ones were already deleted or rotated)."""
        for _ in range(_MAX_ROTATION_ATTEMPTS):
            family = self.table.get(keys.oauth_family(family_id), keys.FAMILY, consistent=True)
            if family is None or family.get("revoked_at"):
                return
            now = int(self.clock.now())
            try:
                self.table.transact(
                    [
                        self.table.update_action(
                            family["pk"],
                            keys.FAMILY,
                            set={"revoked_at": now},
                            when=attr("current_rt").eq(family["current_rt"]) & attr("revoked_at").missing(),
                        ),
                        self.table.delete_action(family["current_at"], keys.ACCESS),
                        self.table.delete_action(family["current_rt"], keys.REFRESH),
                        self.gate.revoke_action(family["user_id"], family_id),
                    ]
                )
                return
            except TransactionConflict:
                continue

    def revoke_token(self, client: Client, token: str | None) -> None:
        """RFC 7009: revoke the grant behind an access or refresh token the client holds, whichever it is (the
        hint is only an optimisation, so both kinds are looked up). A token that is unknown, expired, or
        another client's is answered the same way and changes nothing."""
        if not token or len(token) > MAX_ACCESS_TOKEN:
            return
        token_hash = hash_token(token)
        for pk, sk in (
            (keys.oauth_refresh(token_hash), keys.REFRESH),
            (keys.oauth_access(token_hash), keys.ACCESS),
        ):
            item = self.table.get(pk, sk, consistent=True)
            if item is not None and item["client_id"] == client.client_id:
                self.revoke_family(item["family_id"])
                return

    # -- verification -------------------------------------------------------------------------------------
    def verify_access_token(self, token: str | None) -> AccessGrant | None:
        """The grant behind a bearer token, or None; one read. Revocation deletes the item. A token of
        neither shape (signed: with a `.`, at most MAX_ACCESS_TOKEN; random: `svcat_` and 43 URL-safe
        characters) is refused with no read."""
        if not token or not token.startswith("svcat_"):
            return None
        if len(token) > MAX_ACCESS_TOKEN or ("." not in token and len(token) != RANDOM_ACCESS_TOKEN_LENGTH):
            return None
        item = self.table.get(keys.oauth_access(hash_token(token)), keys.ACCESS)
        if item is None or item["expires_at"] <= self.clock.now() or item["resource"] != self.resource:
            return None
        return AccessGrant(
            user_id=item["user_id"],
            client_id=item["client_id"],
            scope=item["scope"],
            resource=item["resource"],
            expires_at=int(item["expires_at"]),
        )
