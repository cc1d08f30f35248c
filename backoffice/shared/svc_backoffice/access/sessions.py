"""The `svc_session` cookie: an HS256-signed JWT naming the staff member, valid SESSION_TTL_SECONDS (default
8 hours) and sent httpOnly, SameSite=Lax, Secure. The cookie holds no role: the gate reads the role from
`staff` on every request, so a role change or removal is immediate.

Self-hosted the key is SESSION_SECRET / SESSION_SECRET_ARN. Hosted the key is the shop's `session_key` and
the token names the shop (`shop` claim): a cookie of one shop is refused at every other, even should two
shops ever share a key.

The token also names the staff member's session epoch (`ep`, 0 when absent) at sign-in: signing out raises
`staff.session_epoch` (svc_backoffice.access.auth), which ends every session minted before on the server.
Hosted, it names the platform account that signed in and that account's session epoch then (`acct`, `aep`):
the platform is asked on every request whether that account still has access (Shop.account_access)."""

from __future__ import annotations

import time
from typing import NamedTuple

import jwt

from svc_backoffice.core import config, tenancy

SESSION_COOKIE = "svc_session"
_TYPE = "svc_session"


def _key() -> bytes:
    shop = tenancy.current_shop()
    return shop.session_key if shop is not None else config.session_secret()


class Session(NamedTuple):
    staff_id: str
    epoch: int
    account: str | None = None  # the platform account that signed in (hosted)
    account_epoch: int = 0  # that account's session epoch at sign-in


def mint(
    staff_id: str,
    *,
    epoch: int = 0,
    account: str | None = None,
    account_epoch: int = 0,
    now: float | None = None,
) -> str:
    issued = int(time.time() if now is None else now)
    claims: dict[str, object] = {
        "sub": staff_id,
        "ep": epoch,
        "typ": _TYPE,
        "iat": issued,
        "exp": issued + config.get_settings().session_ttl_seconds,
    }
    if account is not None:
        claims["acct"], claims["aep"] = account, account_epoch
    shop = tenancy.current_shop()
    if shop is not None:
        claims["shop"] = shop.id
    return jwt.encode(claims, _key(), algorithm="HS256")


def read(token: str | None) -> str | None:
    """The staff id of a valid, unexpired session cookie of this shop, else None."""
    found = read_session(token)
    return found.staff_id if found is not None else None


def read_session(token: str | None) -> Session | None:
    """The claims of a valid, unexpired session cookie of this shop, else None."""
    if not token:
        return None
    try:
        claims = jwt.decode(
            token, _key(), algorithms=["HS256"], options={"require": ["sub", "exp", "iat", "typ"]}
        )
    except jwt.PyJWTError:
        return None
    shop = tenancy.current_shop()
    if claims.get("typ") != _TYPE or claims.get("shop") != (shop.id if shop is not None else None):
        return None
    epoch, account, account_epoch = claims.get("ep", 0), claims.get("acct"), claims.get("aep", 0)
    if not isinstance(epoch, int) or not isinstance(account_epoch, int):
        return None
    if account is not None and not isinstance(account, str):
        return None
    return Session(str(claims["sub"]), epoch, account, account_epoch)
