"""Hosted, a session stays only while the platform account that signed in may still be there: the shop asks
(Shop.account_access) on every request. Access that came from a workspace ends with it (removed from the
workspace, the project made private), unless the store invited the person itself; an account deleted or whose
sessions were ended loses every session."""

from __future__ import annotations

import dataclasses
import uuid

import pytest
from test_backoffice_hosting import (  # noqa: F401
    BROWSER_BINDING,
    call,
    hosted,
    make_shop,
    session_of,
    shop_databases,
)

from svc_backoffice.access import handoff
from svc_backoffice.hosting.shops import Shop

ISSUER = "svc-platform"


class Platform:
    """What the platform answers about its accounts: the hand-off role each has on the shop now, by the
    session epoch it signed in with."""

    def __init__(self) -> None:
        self.roles: dict[str, str] = {}
        self.epochs: dict[str, int] = {}

    def access(self, account: str, epoch: int) -> str | None:
        if account not in self.roles or self.epochs.get(account, 0) != epoch:
            return None
        return self.roles[account]


@pytest.fixture
def platform() -> Platform:
    return Platform()


@pytest.fixture
def shop(hosted, shop_databases, handoff_key, platform) -> Shop:  # noqa: F811
    return dataclasses.replace(
        make_shop("p_alpha", shop_databases[0], handoff_key), account_access=platform.access
    )


def hand_off(shop: Shop, key, platform: Platform, email: str, role: str, *, account: str | None):
    token = handoff.encode(
        key,
        issuer=ISSUER,
        audience=shop.base_url,
        email=email,
        role=role,
        jti=uuid.uuid4().hex,
        account=account,
        account_epoch=platform.epochs.get(account or "", 0),
        binding=BROWSER_BINDING,
    )
    return call(shop, "GET", f"/auth/sso?token={token}")


def signed_out(answer) -> bool:
    return answer.status == 302 and answer.location == "/shops/p_alpha/auth/signed-out"


def test_a_workspace_members_session_ends_with_the_workspace_access(shop, handoff_key, platform):
    member, email = f"acct-{uuid.uuid4().hex[:6]}", f"m-{uuid.uuid4().hex[:6]}@example.com"
    platform.roles[member] = "admin"
    cookie = session_of(hand_off(shop, handoff_key, platform, email, "admin", account=member))[0]
    assert call(shop, "GET", "/api/staff", cookie=cookie).status == 200
    platform.roles[member] = handoff.INVITEE  # removed from the workspace, or the project made private
    assert signed_out(call(shop, "GET", "/api/products", cookie=cookie))
    again = hand_off(shop, handoff_key, platform, email, handoff.INVITEE, account=member)
    assert again.location == "/shops/p_alpha/auth/signed-out?reason=not_invited"


def test_a_person_the_store_invited_keeps_access_without_the_workspace(shop, handoff_key, platform):
    owner, admin = f"acct-{uuid.uuid4().hex[:6]}", f"acct-{uuid.uuid4().hex[:6]}"
    platform.roles[owner] = "owner"
    owner_email, email = f"o-{uuid.uuid4().hex[:6]}@example.com", f"i-{uuid.uuid4().hex[:6]}@example.com"
    owner_cookie = session_of(hand_off(shop, handoff_key, platform, owner_email, "owner", account=owner))[0]
    invited = call(shop, "POST", "/api/staff", cookie=owner_cookie, body={"email": email, "role": "editor"})
    assert invited.status == 201, invited.body
    platform.roles[admin] = "admin"  # in the workspace too, when first signing in
    cookie = session_of(hand_off(shop, handoff_key, platform, email, "admin", account=admin))[0]
    platform.roles[admin] = handoff.INVITEE  # the workspace access ends; the store's invitation stays
    assert call(shop, "GET", "/api/products", cookie=cookie).status == 200
    assert session_of(hand_off(shop, handoff_key, platform, email, handoff.INVITEE, account=admin))


@pytest.mark.parametrize("ending", ["deleted", "sessions ended"])
def test_an_account_deleted_or_signed_out_everywhere_loses_every_session(shop, handoff_key, platform, ending):
    owner = f"acct-{uuid.uuid4().hex[:6]}"
    platform.roles[owner] = "owner"
    cookie = session_of(
        hand_off(shop, handoff_key, platform, f"{owner}@example.com", "owner", account=owner)
    )[0]
    assert call(shop, "GET", "/api/products", cookie=cookie).status == 200
    if ending == "deleted":
        del platform.roles[owner]
    else:
        platform.epochs[owner] = 1
    assert signed_out(call(shop, "GET", "/api/products", cookie=cookie))


def test_a_hosted_hand_off_that_names_no_account_is_refused(shop, handoff_key, platform):
    answer = hand_off(shop, handoff_key, platform, "who@example.com", "owner", account=None)
    assert answer.location == "/shops/p_alpha/auth/signed-out?reason=invalid_handoff"
