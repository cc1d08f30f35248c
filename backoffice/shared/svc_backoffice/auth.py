"""Signing in by hand-off and identifying the signed-in staff member."""

from __future__ import annotations

from dataclasses import dataclass

from svc_backoffice import handoff, sessions
from svc_backoffice.config import get_settings
from svc_backoffice.db import Database
from svc_backoffice.route_table import ROLE_RANK


@dataclass(frozen=True)
class Staff:
    id: str
    email: str
    role: str

    @property
    def rank(self) -> int:
        return ROLE_RANK[self.role]


def sign_in(db: Database, token: str) -> str:
    """Verify and consume a hand-off token; returns the session cookie value. Raises HandoffRejected."""
    settings = get_settings()
    claims = handoff.verify(
        token,
        public_key=settings.handoff_public_key,
        issuer=settings.handoff_issuer,
        audience=settings.handoff_audience,
    )
    handoff.consume(db, claims)
    if claims.role == handoff.INVITEE:
        # Only an invitation lets in a person the platform knows nothing more of.
        row = db.one(
            "UPDATE staff SET joined_at = coalesce(joined_at, now()) "
            "WHERE lower(email) = lower(%s) AND removed_at IS NULL RETURNING id, removed_at",
            (claims.email,),
        )
        if row is None:
            raise handoff.NotInvited("no invitation for this email")
    else:
        row = db.one(
            "INSERT INTO staff (email, role, joined_at) VALUES (%s, %s, now()) ON CONFLICT (lower(email)) "
            "DO UPDATE SET joined_at = coalesce(staff.joined_at, now()) RETURNING id, removed_at",
            (claims.email, claims.role),
        )
    assert row is not None
    if row["removed_at"] is not None:
        raise handoff.HandoffRejected("staff member was removed")
    return sessions.mint(str(row["id"]))


def current_staff(db: Database, cookie: str | None) -> Staff | None:
    staff_id = sessions.read(cookie)
    if staff_id is None:
        return None
    row = db.one(
        "SELECT id::text, email, role FROM staff WHERE id = %s::uuid AND removed_at IS NULL", (staff_id,)
    )
    return Staff(**row) if row else None
