"""Store settings and staff management with the owner-only rules."""

from __future__ import annotations

import uuid

GRANT = "Only an owner can grant the owner role."
REMOVE = "Only an owner can remove another owner."


def test_settings_read_and_update(as_role):
    assert as_role("viewer").get("/api/settings").json()["currency"] == "EUR"
    admin = as_role("admin")
    answer = admin.patch("/api/settings", {"store_name": "Bean & Co", "currency": "USD"})
    assert answer.status == 200
    assert (answer.json()["store_name"], answer.json()["currency"]) == ("Bean & Co", "USD")
    assert admin.patch("/api/settings", {"currency": "usd"}).status == 400
    assert admin.patch("/api/settings", {}).status == 200


def test_admin_adds_and_lists_staff(as_role):
    admin = as_role("admin")
    answer = admin.post("/api/staff", {"email": "new@shop.example", "role": "editor", "name": "New"})
    assert answer.status == 201
    assert answer.json()["role"] == "editor"
    assert admin.post("/api/staff", {"email": "NEW@shop.example", "role": "viewer"}).status == 409
    assert admin.post("/api/staff", {"email": "nope", "role": "viewer"}).status == 400
    emails = [m["email"] for m in admin.get("/api/staff").json()["items"]]
    assert "new@shop.example" in emails and emails[0].startswith("owner")


def test_only_an_owner_grants_owner(as_role, staff):
    admin, owner = as_role("admin"), as_role("owner")
    answer = admin.post("/api/staff", {"email": "boss@shop.example", "role": "owner"})
    assert (answer.status, answer.json()) == (403, {"error": GRANT})
    answer = admin.patch("/api/staff", {"id": staff["editor"]["id"], "role": "owner"})
    assert (answer.status, answer.json()) == (403, {"error": GRANT})
    assert owner.post("/api/staff", {"email": "boss@shop.example", "role": "owner"}).status == 201
    assert owner.patch("/api/staff", {"id": staff["editor"]["id"], "role": "owner"}).json()["role"] == "owner"


def test_only_an_owner_removes_an_owner(as_role, staff):
    admin, owner = as_role("admin"), as_role("owner")
    answer = admin.delete("/api/staff", {"id": staff["owner2"]["id"]})
    assert (answer.status, answer.json()) == (403, {"error": REMOVE})
    answer = admin.patch("/api/staff", {"id": staff["owner2"]["id"], "role": "viewer"})
    assert (answer.status, answer.json()) == (403, {"error": REMOVE})
    assert owner.delete("/api/staff", {"id": staff["owner2"]["id"]}).json() == {"ok": True}
    assert owner.delete("/api/staff", {"id": staff["owner2"]["id"]}).status == 404


def test_admin_manages_non_owners(as_role, staff):
    admin = as_role("admin")
    assert (
        admin.patch("/api/staff", {"id": staff["viewer"]["id"], "role": "editor"}).json()["role"] == "editor"
    )
    assert admin.delete("/api/staff", {"id": staff["viewer"]["id"]}).status == 200
    assert admin.patch("/api/staff", {"id": str(uuid.uuid4()), "role": "viewer"}).status == 404
    assert admin.delete("/api/staff", {"id": "not-a-uuid"}).status == 400
    assert admin.delete("/api/staff").status == 400


def test_the_last_owner_cannot_leave(as_role, staff):
    owner = as_role("owner")
    assert owner.delete("/api/staff", {"id": staff["owner2"]["id"]}).status == 200
    answer = owner.delete("/api/staff", {"id": staff["owner"]["id"]})
    assert (answer.status, answer.json()) == (409, {"error": "The store must keep at least one owner."})
    assert owner.patch("/api/staff", {"id": staff["owner"]["id"], "role": "admin"}).status == 409
