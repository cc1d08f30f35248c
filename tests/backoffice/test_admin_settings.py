"""Settings screens against the real database: the store's settings form, and staff (invite, change role,
remove) where only an owner grants or touches owner, and a role too low sees a page in words."""

from __future__ import annotations

import re

from adminhelpers import csrf_of, get, post, submit, text

from svc_backoffice.domain import store


def _member(db, email: str):
    return next(m for m in store.list_staff(db) if m["email"] == email)


def test_an_owner_invites_a_viewer_who_is_listed_as_invited(as_role, db):
    owner = as_role("owner")
    answer = submit(
        owner,
        "/settings/staff",
        "/settings/staff",
        {"invite_email": "new@shop.example", "invite_role": "viewer"},
    )
    assert answer.status == 303 and answer.location.endswith("notice=invited")
    member = _member(db, "new@shop.example")
    assert (member["role"], member["status"]) == ("viewer", "invited")
    page = text(get(owner, "/settings/staff?notice=invited"))
    assert "Invitation sent" in page and "new@shop.example" in page and "Withdraw invitation" in page


def test_an_invitation_with_a_bad_email_or_twice_is_refused_beside_the_field(as_role, db):
    owner = as_role("owner")
    bad = submit(
        owner, "/settings/staff", "/settings/staff", {"invite_email": "not-an-email", "invite_role": "viewer"}
    )
    assert bad.status == 400 and 'id="invite_email-error"' in bad.body
    twice = submit(
        owner,
        "/settings/staff",
        "/settings/staff",
        {"invite_email": "viewer@shop.example", "invite_role": "editor"},
    )
    assert twice.status == 409 and "already exists" in text(twice)


def test_an_admin_sees_no_owner_control_and_the_server_refuses_one(as_role, db, staff):
    admin = as_role("admin")
    page = get(admin, "/settings/staff")
    assert '<option value="owner"' not in page.body  # neither to invite nor to change a role to
    owner_id = staff["owner"]["id"]
    assert f"/settings/staff/{owner_id}/remove" not in page.body
    token = csrf_of(page)
    granted = post(admin, f"/settings/staff/{staff['viewer']['id']}/role", {"role": "owner"}, csrf=token)
    assert granted.status == 403 and "Only an owner" in text(granted)
    removed = post(admin, f"/settings/staff/{owner_id}/remove", {}, csrf=token)
    assert removed.status == 403 and _member(db, "owner@shop.example")["role"] == "owner"


def test_an_owner_changes_a_role_and_removes_a_member(as_role, db, staff):
    owner = as_role("owner")
    viewer_id = staff["viewer"]["id"]
    assert (
        submit(owner, "/settings/staff", f"/settings/staff/{viewer_id}/role", {"role": "editor"}).status
        == 303
    )
    assert _member(db, "viewer@shop.example")["role"] == "editor"
    assert submit(owner, "/settings/staff", f"/settings/staff/{viewer_id}/remove", {}).status == 303
    assert "viewer@shop.example" not in text(get(owner, "/settings/staff"))


def test_staff_is_an_admins_page_and_a_viewer_reads_why_not(as_role, db):
    answer = get(as_role("editor"), "/settings/staff")
    assert answer.status == 403 and "Your role (editor) cannot do this: it needs admin or above" in text(
        answer
    )


def test_store_settings_are_saved_and_change_how_money_reads(as_role, db):
    owner = as_role("owner")
    fields = {
        "store_name": "Maison Lumière",
        "contact_email": "hello@maison.example",
        "currency": "usd",
        "locale": "en",
        "timezone": "America/New_York",
        "low_stock_threshold": "4",
        "weight_unit": "g",
    }
    assert submit(owner, "/settings", "/settings", fields).status == 303
    row = store.get_settings_row(db)
    assert (row["store_name"], row["currency"], row["timezone"]) == (
        "Maison Lumière",
        "USD",
        "America/New_York",
    )
    assert 'id="store">Maison Lumière<' in get(owner, "/").body and "$0.00" in text(get(owner, "/"))
    bad = submit(owner, "/settings", "/settings", {**fields, "currency": "euros", "low_stock_threshold": "x"})
    assert (
        bad.status == 400
        and 'id="currency-error"' in bad.body
        and 'id="low_stock_threshold-error"' in bad.body
    )


def test_a_viewer_reads_the_settings_without_a_control(as_role, db):
    page = get(as_role("viewer"), "/settings")
    assert page.status == 200 and ">Save<" not in page.body
    assert not re.search(r'<form[^>]*method="post"[^>]*action="/settings"', page.body)
    token = csrf_of(get(as_role("owner"), "/settings"))
    assert post(as_role("viewer"), "/settings", {"store_name": "X"}, csrf=token).status == 403


def test_the_last_owner_stays_and_the_page_says_why(as_role, db, staff):
    owner = as_role("owner")
    assert (
        submit(owner, "/settings/staff", f"/settings/staff/{staff['owner2']['id']}/remove", {}).status == 303
    )
    last = submit(
        owner, "/settings/staff", f"/settings/staff/{staff['owner']['id']}/role", {"role": "viewer"}
    )
    assert last.status == 409 and last.headers["Content-Type"].startswith("text/html")
    assert _member(db, "owner@shop.example")["role"] == "owner"
