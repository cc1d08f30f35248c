"""Staff invitations: an admin or owner invites an email with a role; the person joins by the platform's
hand-off (which vouches for the email only, role `invitee`); the list shows invitations and members; a
withdrawn invitation or an uninvited email does not get in; the last owner cannot leave."""

from __future__ import annotations

import pytest
from bohelpers import Client, invoke, sso
from test_backoffice_auth import cookie_of, token


@pytest.fixture
def admin(as_role):
    return as_role("admin")


@pytest.fixture
def owner(as_role):
    return as_role("owner")


def staff_by_email(client) -> dict[str, dict]:
    return {m["email"]: m for m in client.get("/api/staff").json()["items"]}


def test_an_invited_person_joins_in_the_invited_role(admin, handoff_key):
    invited = admin.post("/api/staff", {"email": "Nina@shop.example", "name": "Nina", "role": "editor"})
    assert invited.status == 201
    assert (invited.json()["status"], invited.json()["joined_at"]) == ("invited", None)
    assert staff_by_email(admin)["Nina@shop.example"]["status"] == "invited"

    answer = sso(f"/auth/sso?token={token(handoff_key, email='nina@SHOP.example', role='invitee')}")
    assert (answer.status, answer.location) == (302, "/")
    nina = Client(cookie_of(answer))
    assert nina.post("/api/products", {"title": "Nina's first"}).status == 201  # an editor now
    member = staff_by_email(admin)["Nina@shop.example"]
    assert member["status"] == "active" and member["joined_at"] is not None
    assert member["role"] == "editor"


def test_an_uninvited_email_is_told_to_ask_for_an_invitation(db, staff, handoff_key):
    answer = sso(f"/auth/sso?token={token(handoff_key, email='stranger@else.example', role='invitee')}")
    assert (answer.status, answer.location) == (302, "/auth/signed-out?reason=not_invited")
    assert not answer.cookies or all("Max-Age=0" in c or "svc_session=;" in c for c in answer.cookies)
    page = invoke("GET", answer.location)
    assert "This store has not invited your email address. Ask its owner to invite you" in page.body
    assert db.one("SELECT 1 FROM staff WHERE email = 'stranger@else.example'") is None


def test_an_uninvited_email_is_told_so_again_for_the_same_link(db, staff, handoff_key):
    """Nothing is spent on someone the store has not invited: the same link answers the same again, as a
    shop that is not there answers it (svc_shared.routes.shops), so a replay tells an outsider nothing."""
    link = f"/auth/sso?token={token(handoff_key, email='stranger@else.example', role='invitee')}"
    for _ in range(2):
        assert sso(link).location == "/auth/signed-out?reason=not_invited"


def test_a_withdrawn_invitation_no_longer_lets_in(admin, handoff_key):
    invited = admin.post("/api/staff", {"email": "gone@shop.example", "role": "viewer"}).json()
    assert admin.delete("/api/staff", {"id": invited["id"]}).json() == {"ok": True}
    assert "gone@shop.example" not in staff_by_email(admin)
    answer = sso(f"/auth/sso?token={token(handoff_key, email='gone@shop.example', role='invitee')}")
    assert answer.location == "/auth/signed-out?reason=not_invited"
    # Invited again, it is a new invitation.
    again = admin.post("/api/staff", {"email": "gone@shop.example", "role": "viewer"})
    assert (again.status, again.json()["status"]) == (201, "invited")


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        (
            {"email": "admin@shop.example", "role": "viewer"},
            409,
            {"error": "A staff member with that email already exists."},
        ),
        (
            {"email": "boss@shop.example", "role": "owner"},
            403,
            {"error": "Only an owner can grant the owner role."},
        ),
        ({"email": "not-an-email", "role": "viewer"}, 400, "email"),
        ({"email": "x\x01@shop.example", "role": "viewer"}, 400, "email"),
        ({"email": "ok@shop.example", "role": "root"}, 400, "role"),
        ({"role": "viewer"}, 400, "email"),
    ],
)
def test_invitation_edges(admin, body, status, error):
    answer = admin.post("/api/staff", body)
    assert answer.status == status, answer.body
    if status == 400:
        assert list(answer.json()["error"]["fieldErrors"]) == [error]
    else:
        assert answer.json() == error


def test_unknown_role_names_the_roles_there_are(admin):
    answer = admin.post("/api/staff", {"email": "ok@shop.example", "role": "root"})
    assert answer.json()["error"]["fieldErrors"]["role"] == [
        "Input should be 'viewer', 'editor', 'admin' or 'owner'"
    ]


def test_only_an_owner_invites_an_owner_and_an_editor_invites_no_one(owner, as_role):
    assert owner.post("/api/staff", {"email": "co@shop.example", "role": "owner"}).status == 201
    refused = as_role("editor").post("/api/staff", {"email": "x@shop.example", "role": "viewer"})
    assert (refused.status, refused.location) == (302, "/auth/signed-out?reason=insufficient_role")


def test_the_last_owner_cannot_be_removed(owner, staff):
    assert owner.delete("/api/staff", {"id": staff["owner2"]["id"]}).json() == {"ok": True}
    answer = owner.delete("/api/staff", {"id": staff["owner"]["id"]})
    assert (answer.status, answer.json()) == (409, {"error": "The store must keep at least one owner."})


def test_a_role_change_or_a_removal_ends_the_members_sessions(admin, staff, db):
    editor = Client(staff["editor"]["cookie"])
    assert editor.get("/api/products").status == 200
    changed = admin.patch("/api/staff", {"id": staff["editor"]["id"], "role": "viewer"})
    assert changed.json()["role"] == "viewer"
    assert editor.get("/api/products").location == "/auth/signed-out"
    renamed = admin.patch("/api/staff", {"id": staff["viewer"]["id"], "name": "Vera"})
    assert renamed.status == 200
    assert Client(staff["viewer"]["cookie"]).get("/api/products").status == 200  # a new name is no new person
    assert admin.delete("/api/staff", {"id": staff["viewer"]["id"]}).json() == {"ok": True}
    again = admin.post("/api/staff", {"email": staff["viewer"]["email"], "role": "viewer"})
    assert again.status == 201
    assert Client(staff["viewer"]["cookie"]).get("/api/products").location == "/auth/signed-out"
