"""Signing in by hand-off and identifying the signed-in staff member."""

from __future__ import annotations

from dataclasses import dataclass

from svc_backoffice.access import handoff, sessions
from svc_backoffice.access.roles import ROLE_RANK
from svc_backoffice.core import config, tenancy
from svc_backoffice.data.db import Database


@dataclass(frozen=True)
class Staff:
    id: str
    email: str
    role: str

    @property
    def rank(self) -> int:
        return ROLE_RANK[self.role]


def handoff_keys_and_audience() -> tuple[tuple[str, ...], str]:
    """Which keys verify this backoffice's hand-offs and the audience they must name: the Shop's (its base
    URL) when hosted; HANDOFF_PUBLIC_KEY's PEM blocks and HANDOFF_AUDIENCE self-hosted."""
    shop = tenancy.current_shop()
    if shop is not None:
        return shop.handoff_public_keys, shop.base_url
    settings = config.self_hosted_settings()
    return handoff.split_pem_blocks(settings.handoff_public_key), settings.handoff_audience


def sign_in(db: Database, token: str) -> str:
    """Verify and consume a hand-off token; returns the session cookie value. Raises HandoffRejected."""
    keys, audience = handoff_keys_and_audience()
    claims = handoff.verify(
        token, public_keys=keys, issuer=config.get_settings().handoff_issuer, audience=audience
    )
    handoff.consume(db, claims)
    if claims.role == handoff.INVITEE:
        # Only an invitation lets in a person the platform knows nothing more of.
        row = db.one(
            "UPDATE staff SET joined_at = coalesce(joined_at, now()) "
            "WHERE lower(email) = lower(%s) AND removed_at IS NULL RETURNING id, removed_at, session_epoch",
            (claims.email,),
        )
        if row is None:
            raise handoff.NotInvited("no invitation for this email")
    else:
        row = db.one(
            "INSERT INTO staff (email, role, joined_at) VALUES (%s, %s, now()) ON CONFLICT (lower(email)) "
            "DO UPDATE SET joined_at = coalesce(staff.joined_at, now()) RETURNING id, removed_at, session_epoch",
            (claims.email, claims.role),
        )
    assert row is not None
    if row["removed_at"] is not None:
        raise handoff.HandoffRejected("staff member was removed")
    return sessions.mint(str(row["id"]), epoch=int(row["session_epoch"]))


def current_staff(db: Database, cookie: str | None) -> Staff | None:
    """The signed-in staff member, unless the cookie is invalid, its session was ended by signing out (the
    epoch moved on) or the member was removed."""
    found = sessions.read_session(cookie)
    if found is None:
        return None
    row = db.one(
        "SELECT id::text, email, role FROM staff "
        "WHERE id = %s::uuid AND removed_at IS NULL AND session_epoch = %s",
        found,
    )
    return Staff(**row) if row else None


def sign_out(db: Database, cookie: str | None) -> None:
    """End the cookie's session on the server, with every other session of its staff member: the session
    epoch moves on, so every cookie minted before is refused (a cookie already ended changes nothing)."""
    found = sessions.read_session(cookie)
    if found is not None:
        db.all(
            "UPDATE staff SET session_epoch = session_epoch + 1 WHERE id = %s::uuid AND session_epoch = %s",
            found,
        )
