"""Workspace sessions: a signed cookie naming a server-side session that sign-out revokes.

Each session records the user's session epoch (`session_epoch` on the profile, 0 until first raised) when it
was created; a password change and "sign out everywhere" raise the epoch, which ends every session made
before at once: a session is valid only while its epoch is the profile's (both read in one round trip)."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

from svc_shared.core.clock import Clock, system_clock
from svc_shared.core.tokens import BadSignature, hash_token, new_token, sign, unsign
from svc_shared.storage import keys
from svc_shared.storage.dal import Table, TransactionConflict

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

    def create(self, user_id: str, epoch: int = 0) -> Session:
        """A new session of the user, valid while the profile's session epoch is `epoch` (the one read when
        the credentials were checked: should it have been raised since, the session is born ended)."""
        sid = new_token()
        now = int(self._clock.now())
        expires_at = now + self._ttl
        self._table.put(
            {
                "pk": keys.session(hash_token(sid)),
                "sk": keys.SESSION,
                "user_id": user_id,
                "epoch": epoch,
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
        """The signed-in user's id, or None for a missing, tampered, expired or revoked session, or one
        ended by a raised session epoch. One round trip: the session and the profile, strongly consistent
        (a password change ends the old sessions from the very next request)."""
        found = self.resolve_epoch(cookie)
        return found[0] if found is not None else None

    def resolve_epoch(self, cookie: str | None) -> tuple[str, int] | None:
        """As resolve, with the session epoch the session is valid in (what an authorization code issued
        through this session is bound to: raising the epoch ends the code too)."""
        claims = self._claims(cookie)
        uid = claims.get("uid") if claims is not None else None
        if claims is None or not isinstance(uid, str):
            return None
        item, profile = self._read(keys.session(hash_token(str(claims["sid"]))), uid)
        if (
            item is None
            or profile is None
            or item["expires_at"] <= self._clock.now()
            or item["user_id"] != uid
        ):
            return None
        epoch = int(profile.get("session_epoch", 0))
        if int(item.get("epoch", 0)) != epoch:
            return None
        return uid, epoch

    def _read(self, session_pk: str, user_id: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """The session item and the user's profile as they are now, in one round trip (TransactGetItems:
        serializable, and authorized as GetItem, which every function reading sessions holds)."""
        for attempt in range(3):
            try:
                item, profile = self._table.transact_get(
                    [(session_pk, keys.SESSION), (keys.user(user_id), keys.PROFILE)]
                )
                return item, profile
            except TransactionConflict:  # a transaction is writing the profile right now: a few ms
                if attempt == 2:
                    raise
                time.sleep(random.uniform(0.005, 0.02))
        raise AssertionError("unreachable")

    def revoke(self, cookie: str | None) -> None:
        claims = self._claims(cookie)
        if claims is not None:
            self._table.delete(keys.session(hash_token(str(claims["sid"]))), keys.SESSION)
