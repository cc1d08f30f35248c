"""A hosted shop's backoffice sessions over HTTP, as the people who hold them meet them: a session ends when
the store changes who its holder is (removed, invited again, given another role)."""

from __future__ import annotations

import contextlib
import re
import secrets
import uuid
from collections.abc import Iterator

import httpx
from stackproc import create_user
from test_journeys import connect, signed_in


def open_backoffice(browser: httpx.Client, link: str) -> None:
    """The platform's sign-in link, followed to the shop: the browser holds a backoffice session after."""
    sso = browser.get(browser.get(link).headers["location"])
    assert sso.status_code == 302 and "svc_session" in sso.cookies, sso.headers


def is_signed_out(answer: httpx.Response) -> bool:
    location = answer.headers.get("location", "")
    return answer.status_code == 302 and location.endswith("/auth/signed-out")


def the_shop(stack) -> tuple[str, str]:
    """The demo store: the platform's sign-in link to its backoffice, and its backoffice's address."""
    return stack.services["sign-in"].split(" ")[0], stack.services["backoffice"]


@contextlib.contextmanager
def the_owner(gateway: str, link: str) -> Iterator[httpx.Client]:
    """The demo store's owner, signed in to its backoffice."""
    with signed_in(gateway, "demo@svc.local", "demo-password-123") as owner:
        open_backoffice(owner, link)
        yield owner


def invite(gateway: str, stack, name: str, role: str) -> tuple[str, str]:
    """A new person (a platform account made for them, password person-pass-123) invited to the demo store's
    backoffice by its owner with `role`: their email and their staff row's id."""
    link, backoffice = the_shop(stack)
    email = f"{name}-{secrets.token_hex(3)}@example.com"
    create_user(stack, email, "person-pass-123")
    with the_owner(gateway, link) as owner:
        invited = owner.post(f"{backoffice}/api/staff", json={"email": email, "role": role})
        assert invited.status_code == 201, invited.text
    return email, invited.json()["id"]


def test_a_removed_member_invited_again_does_not_get_the_old_session_back(gateway, stack):
    """The attack: removed, then invited again before accepting, a member's old cookie worked again (the
    invitation reused the removed row and its session epoch). Removal, the new invitation and a role change
    each end the person's sessions in the shop; only a new sign-in lets them in again."""
    link, backoffice = the_shop(stack)
    email, staff_id = invite(gateway, stack, "rita", "editor")
    with the_owner(gateway, link) as owner, signed_in(gateway, email, "person-pass-123") as rita:
        open_backoffice(rita, link)
        assert rita.get(f"{backoffice}/api/products").status_code == 200

        removed = owner.request("DELETE", f"{backoffice}/api/staff", json={"id": staff_id})
        assert removed.json() == {"ok": True}
        assert is_signed_out(rita.get(f"{backoffice}/api/products"))

        again = owner.post(f"{backoffice}/api/staff", json={"email": email, "role": "editor"})
        assert (again.status_code, again.json()["status"]) == (201, "invited")
        # The cookie from before the removal is still in Rita's browser: it stays ended.
        assert is_signed_out(rita.get(f"{backoffice}/api/products"))
        assert is_signed_out(rita.post(f"{backoffice}/api/products", json={"title": "Back in?"}))

        open_backoffice(rita, link)  # accepting the new invitation: a new session
        assert rita.post(f"{backoffice}/api/products", json={"title": "Rita's mug"}).status_code == 201

        changed = owner.patch(f"{backoffice}/api/staff", json={"id": staff_id, "role": "viewer"})
        assert changed.json()["role"] == "viewer"
        # A role change ends the session too (not merely the insufficient-role answer of the gate).
        assert is_signed_out(rita.get(f"{backoffice}/api/products"))
        open_backoffice(rita, link)
        assert rita.get(f"{backoffice}/api/products").status_code == 200
        refused = rita.post(f"{backoffice}/api/products", json={"title": "As a viewer"})
        assert refused.headers["location"].endswith("reason=insufficient_role")


def test_the_gate_comes_first_and_every_answer_is_guarded(gateway, stack):
    """Over the platform's gateway: a viewer's POST without a body is the insufficient-role redirect (not a
    415), a method a path lacks is a 405 naming the methods it has, and every answer, the platform's own 404
    for an unknown shop included, carries nosniff and a policy."""
    link, backoffice = the_shop(stack)
    email, _ = invite(gateway, stack, "vic", "viewer")
    with the_owner(gateway, link) as owner:
        put = owner.put(f"{backoffice}/api/products", json={})
        assert (put.status_code, put.headers["allow"]) == (405, "GET, POST")
        assert put.json() == {"error": "This address does not answer that method; it answers GET, POST."}
    with signed_in(gateway, email, "person-pass-123") as vic:
        open_backoffice(vic, link)
        bare = vic.post(f"{backoffice}/api/products")  # no body, no Content-Type
        assert bare.headers["location"].endswith("/auth/signed-out?reason=insufficient_role")
        answers = [
            vic.get(f"{backoffice}/api/products"),
            bare,
            vic.get(f"{backoffice}/api/nowhere"),
            vic.get(f"{gateway}/shops/{secrets.token_hex(8)}/api/products"),
        ]
        assert [a.status_code for a in answers] == [200, 302, 404, 404]
        for answer in answers:
            assert answer.headers["x-content-type-options"] == "nosniff"
            assert answer.headers["content-security-policy"].startswith("default-src 'none'")


def account_form(browser: httpx.Client) -> str:
    """The workspace's CSRF token, from the Account page as a browser reads it."""
    page = browser.get("/workspace/account")
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found, page.text[:300]
    return found[1]


@contextlib.contextmanager
def shop_tab_and_laptop(
    gateway: str, email: str, password: str, link: str, backoffice: str
) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    """The person signed in from two browsers: one with the shop's backoffice open (it answers), the other on
    the workspace."""
    with signed_in(gateway, email, password) as shop_tab, signed_in(gateway, email, password) as laptop:
        open_backoffice(shop_tab, link)
        assert shop_tab.get(f"{backoffice}/api/products").status_code == 200
        yield shop_tab, laptop


def test_the_platform_account_ending_its_sessions_ends_its_backoffice_sessions(gateway, stack):
    """A platform password change, "Sign out everywhere" and the account's deletion each end the person's
    backoffice session in the shop at once (the cookie used to keep working for its 8 hours)."""
    link, backoffice = the_shop(stack)
    email, _ = invite(gateway, stack, "ada", "editor")

    # 1. A password change, from another browser of hers.
    with shop_tab_and_laptop(gateway, email, "person-pass-123", link, backoffice) as (shop_tab, laptop):
        changed = laptop.post(
            "/workspace/account/password",
            data={
                "csrf": account_form(laptop),
                "current_password": "person-pass-123",
                "new_password": "person-pass-456",
                "new_password_again": "person-pass-456",
            },
        )
        assert changed.status_code == 303
        assert is_signed_out(shop_tab.get(f"{backoffice}/api/products"))

    # 2. "Sign out everywhere".
    with shop_tab_and_laptop(gateway, email, "person-pass-456", link, backoffice) as (shop_tab, laptop):
        ended = laptop.post("/logout", data={"everywhere": "yes", "csrf": account_form(laptop)})
        assert ended.status_code == 303
        assert is_signed_out(shop_tab.get(f"{backoffice}/api/products"))

    # 3. Deleting the account.
    with shop_tab_and_laptop(gateway, email, "person-pass-456", link, backoffice) as (shop_tab, laptop):
        deleted = laptop.post(
            "/workspace/account/delete",
            data={"csrf": account_form(laptop), "confirm": "yes", "password": "person-pass-456"},
        )
        assert deleted.status_code == 303 and deleted.headers["location"].endswith("/account/deleted")
        assert is_signed_out(shop_tab.get(f"{backoffice}/api/products"))


def test_a_hand_off_link_signs_in_only_the_browser_that_asked_for_it(gateway, stack):
    """Login CSRF: someone takes the hand-off link the platform gave their own browser and makes another
    person's browser open it; that browser is not signed in to the shop as them. The asker's browser is."""
    link, backoffice = the_shop(stack)
    with signed_in(gateway, "demo@svc.local", "demo-password-123") as attacker:
        minted = attacker.get(link)
        assert minted.status_code == 303 and "svc_handoff" in minted.cookies
        handoff = minted.headers["location"]
        with httpx.Client(timeout=30) as victim:
            opened = victim.get(handoff)
            assert opened.status_code == 302
            assert opened.headers["location"].endswith("/auth/signed-out?reason=invalid_handoff")
            assert "svc_session" not in opened.cookies
            assert is_signed_out(victim.get(f"{backoffice}/api/products"))
        own = attacker.get(handoff)  # the browser that asked: the link still works there
        assert own.status_code == 302 and "svc_session" in own.cookies
        assert attacker.get(f"{backoffice}/api/products").status_code == 200


def _outsider_path(browser: httpx.Client, project_id: str) -> list[tuple[int, str]]:
    """Open backoffice as a browser does: each hop's status and path (the project's id written <id>), then
    the page it ends on and the cookies the hops left."""
    hops, answer = [], browser.get("/backoffice/sso", params={"project": project_id})
    while answer.status_code in (302, 303):
        hops.append(
            (answer.status_code, httpx.URL(answer.headers["location"]).path.replace(project_id, "<id>"))
        )
        answer = browser.get(answer.headers["location"])
    return [*hops, (answer.status_code, answer.text)]


def test_an_outsider_learns_nothing_of_a_project_from_open_backoffice(gateway, stack):
    """Someone signed in to the platform, with no role in a project and no invitation, opens its backoffice
    link: the published demo store, a project that does not exist and one not published yet (someone
    else's new project) take the same hops and end on the same page."""
    demo_store = stack.services["sign-in"].split(" ")[0].split("project=", 1)[1]
    email = f"olga-{secrets.token_hex(3)}@example.com"
    create_user(stack, email, "person-pass-123")
    owner_email = f"nina-{secrets.token_hex(3)}@example.com"
    create_user(stack, owner_email, "person-pass-123")
    with signed_in(gateway, owner_email, "person-pass-123") as owner:
        for provider in ("repo_host", "db_host", "static_host"):
            connect(owner, provider)
        page = owner.get("/").text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        assert csrf, page[:300]
        created = owner.post(
            "/workspace/projects",
            data={"csrf": csrf.group(1), "prompt": "Linen aprons sewn to order in a small studio"},
            headers={"Origin": gateway},
        )
        assert created.status_code == 303, created.text[:300]
        unpublished = created.headers["location"].rstrip("/").rsplit("/", 1)[1]
    with signed_in(gateway, email, "person-pass-123") as olga:
        answers = [_outsider_path(olga, project) for project in (demo_store, str(uuid.uuid4()), unpublished)]
    assert answers[0] == answers[1] == answers[2], answers
    assert answers[0][:2] == [(303, "/shops/<id>/auth/sso"), (302, "/shops/<id>/auth/signed-out")]
    assert "This store has not invited your email address." in answers[0][-1][1]
