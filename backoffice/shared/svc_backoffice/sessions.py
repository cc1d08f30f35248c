"""The `svc_session` cookie: an HS256-signed JWT (key SESSION_SECRET / SESSION_SECRET_ARN) naming the staff
member, valid SESSION_TTL_SECONDS (default 8 hours) and sent httpOnly, SameSite=Lax, Secure. The cookie holds
no role: the gate reads the role from `staff` on every request, so a role change or removal is immediate."""

from __future__ import annotations

import time

import jwt

from svc_backoffice.config import get_settings, session_secret

SESSION_COOKIE = "svc_session"
_TYPE = "svc_session"


def mint(staff_id: str, *, now: float | None = None) -> str:
    issued = int(time.time() if now is None else now)
    claims = {
        "sub": staff_id,
        "typ": _TYPE,
        "iat": issued,
        "exp": issued + get_settings().session_ttl_seconds,
    }
    return jwt.encode(claims, session_secret(), algorithm="HS256")


def read(token: str | None) -> str | None:
    """The staff id of a valid, unexpired session cookie, else None."""
    if not token:
        return None
    try:
        claims = jwt.decode(
            token, session_secret(), algorithms=["HS256"], options={"require": ["sub", "exp", "iat", "typ"]}
        )
    except jwt.PyJWTError:
        return None
    return str(claims["sub"]) if claims.get("typ") == _TYPE else None
