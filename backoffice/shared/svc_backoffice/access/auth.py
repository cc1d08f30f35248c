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


def verified(token: str) -> handoff.Handoff:
    """The hand-off's claims when it verifies for this backoffice (nothing is spent); HandoffRejected."""
    keys, audience = handoff_keys_and_audience()
    return handoff.verify(
        token, public_keys=keys, issuer=config.get_settings().handoff_issuer, audience=audience
    )


def sign_in(db: Database | None, token: str, binding: str | None = None) -> str:
    """Verify and consume a hand-off token presented with the browser's binding cookie; returns the session
    cookie value. Raises HandoffRejected. `db` None: a hosted shop that is not there (an unknown or unpublished
    project), which has invited nobody. A person the store has not invited is told so for any token that
    verifies, even one used before, so whoever may not open a shop gets the same answers from it whether it
    exists, is published or not."""
    claims = verified(token)
    shop = tenancy.current_shop()
    if shop is not None and shop.account_access is not None and claims.account is None:
        raise handoff.HandoffRejected("a hosted shop's hand-off names the platform account")
    # Hosted, the shop is on the platform's origin: the browser that asked for the hand-off holds its cookie.
    if shop is not None and not handoff.bound_to(claims, binding):
        raise handoff.HandoffRejected("the hand-off was minted for another browser")
    if db is None:
        raise handoff.NotInvited("no such shop")
    if claims.role == handoff.INVITEE:
        # Only an invitation lets in a person the platform knows nothing more of: not a row a workspace
        # role once wrote (that access ended with the role).
        sql = "SELECT id FROM staff WHERE lower(email) = lower(%s) AND removed_at IS NULL AND invited"
        if db.one(sql, (claims.email,)) is None:
            raise handoff.NotInvited("no invitation for this email")
    handoff.consume(db, claims)
    if claims.role == handoff.INVITEE:
        row = db.one(
            "UPDATE staff SET joined_at = coalesce(joined_at, now()) WHERE lower(email) = lower(%s) "
            "AND removed_at IS NULL AND invited RETURNING id, removed_at, session_epoch",
            (claims.email,),
        )
        if row is None:  # the invitation was withdrawn in between
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
    return sessions.mint(
        str(row["id"]),
        epoch=int(row["session_epoch"]),
        account=claims.account,
        account_epoch=claims.account_epoch,
    )


def current_staff(db: Database, cookie: str | None) -> Staff | None:
    """The signed-in staff member, unless the cookie is invalid, its session was ended by signing out or a
    staff change (the epoch moved on), the member was removed, or (hosted) the platform account that signed
    in no longer has access: deleted, its sessions ended, or its workspace access gone when the store did not
    invite it."""
    found = sessions.read_session(cookie)
    if found is None:
        return None
    row = db.one(
        "SELECT id::text, email, role, invited FROM staff "
        "WHERE id = %s::uuid AND removed_at IS NULL AND session_epoch = %s",
        (found.staff_id, found.epoch),
    )
    if row is None or not _account_still_admitted(found, invited=bool(row.pop("invited"))):
        return None
    return Staff(**row)


def _account_still_admitted(session: sessions.Session, *, invited: bool) -> bool:
    shop = tenancy.current_shop()
    if shop is None or shop.account_access is None:
        return True  # self-hosted: no platform to ask; the store's own staff rules decide
    if session.account is None:
        return False
    access = shop.account_access(session.account, session.account_epoch)
    if access is None:
        return False
    return access != handoff.INVITEE or invited


def sign_out(db: Database, cookie: str | None) -> None:
    """End the cookie's session on the server, with every other session of its staff member: the session
    epoch moves on, so every cookie minted before is refused (a cookie already ended changes nothing)."""
    found = sessions.read_session(cookie)
    if found is not None:
        db.all(
            "UPDATE staff SET session_epoch = session_epoch + 1 WHERE id = %s::uuid AND session_epoch = %s",
            (found.staff_id, found.epoch),
        )
