"""Workspace sessions: a signed cookie naming a server-side session that sign-out revokes."""

from __future__ import annotations

from dataclasses import dataclass

from svc_shared import keys
from svc_shared.clock import Clock, system_clock
from svc_shared.dal import Table
from svc_shared.tokens import BadSignature, hash_token, new_token, sign, unsign

SESSION_COOKIE = "svc_ws_session"
_PURPOSE = "workspace-session"


@dataclass(frozen=True)
class Session:
    user_id: str
    cookie: str
    expires_at: int


class Sessions:
    def __init__(
        self, table: Table, signing_key: bytes, ttl_seconds: int, clock: Clock = system_clock
    ) -> None:
        self._table = table
        self._key = signing_key
        self._ttl = ttl_seconds
        self._clock = clock

    def create(self, user_id: str) -> Session:
        sid = new_token()
        now = int(self._clock.now())
        expires_at = now + self._ttl
        self._table.put(
            {
                "pk": keys.session(hash_token(sid)),
                "sk": keys.SESSION,
                "user_id": user_id,
                "created_at": now,
                "expires_at": expires_at,
            }
        )
        cookie = sign({"sid": sid, "uid": user_id, "exp": expires_at}, self._key, _PURPOSE)
        return Session(user_id=user_id, cookie=cookie, expires_at=expires_at)

    def _claims(self, cookie: str | None) -> dict[str, object] | None:
        if not cookie:
            return None
        try:
            claims = unsign(cookie, self._key, _PURPOSE)
        except BadSignature:
            return None
        exp = claims.get("exp")
        if not isinstance(exp, int) or exp <= self._clock.now() or not isinstance(claims.get("sid"), str):
            return None
        return claims

    def resolve(self, cookie: str | None) -> str | None:
        """The signed-in user's id, or None for a missing, tampered, expired or revoked session."""
        claims = self._claims(cookie)
        if claims is None:
            return None
        item = self._table.get(keys.session(hash_token(str(claims["sid"]))), keys.SESSION)
        if item is None or item["expires_at"] <= self._clock.now() or item["user_id"] != claims.get("uid"):
            return None
        return str(item["user_id"])

    def revoke(self, cookie: str | None) -> None:
        claims = self._claims(cookie)
        if claims is not None:
            self._table.delete(keys.session(hash_token(str(claims["sid"]))), keys.SESSION)
