"""Writes of the backoffice driven by another page (another app on the same site, or any other site), and a
sign-out that only cleared the cookie: each refused now (self-hosted: the origin is HANDOFF_AUDIENCE's)."""

from __future__ import annotations

import pytest
from bohelpers import Client, invoke

OWN = "https://shop.example"  # the origin of bohelpers.AUDIENCE
SIBLING = "https://blog.shop.example"  # same site, another origin


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/api/products", '{"title": "Planted"}'),
        ("PATCH", "/api/settings", '{"store_name": "Planted"}'),
        ("POST", "/api/blog/comments/approve-all", ""),
    ],
)
def test_a_write_that_is_not_declared_json_is_415_and_changes_nothing(as_role, db, method, path, body):
    owner = as_role("owner")
    answer = owner.request(method, path, raw_body=body or None, headers={"Content-Type": "text/plain"})
    assert answer.status == 415
    assert answer.json() == {"error": "Request body must be JSON (Content-Type: application/json)."}
    assert db.one("SELECT count(*) AS n FROM products WHERE title = 'Planted'")["n"] == 0


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": SIBLING, "Sec-Fetch-Site": "same-site"},
        {"Origin": SIBLING},
        {"Sec-Fetch-Site": "cross-site"},
        {"Origin": "null"},
    ],
)
def test_json_from_another_origin_is_403_and_creates_nothing(as_role, db, headers):
    answer = as_role("owner").post("/api/products", {"title": "Planted"}, headers=headers)
    assert answer.status == 403
    assert answer.json() == {
        "error": "This request did not come from this backoffice's site, so it was refused."
    }
    assert db.one("SELECT count(*) AS n FROM products WHERE title = 'Planted'")["n"] == 0


@pytest.mark.parametrize(
    "headers",
    [{"Origin": OWN, "Sec-Fetch-Site": "same-origin"}, {"Origin": OWN}, {}],
)
def test_json_from_the_backoffice_itself_passes(as_role, headers):
    assert as_role("owner").post("/api/products", {"title": "Ours"}, headers=headers).status == 201


def test_a_delete_without_a_body_needs_no_type_but_the_origin(as_role, db):
    owner = as_role("owner")
    product = owner.post("/api/products", {"title": "Gone"}).json()
    refused = owner.delete(f"/api/products/{product['id']}", headers={"Origin": SIBLING})
    assert refused.status == 403
    assert owner.delete(f"/api/products/{product['id']}", headers={"Origin": OWN}).status in (200, 204)


def test_sign_out_ends_the_session_on_the_server(as_role, staff):
    kept = Client(staff["owner"]["cookie"])  # the same cookie, kept by whoever copied it
    assert kept.get("/api/products").status == 200
    out = as_role("owner").post("/auth/sign-out", headers={"Origin": OWN})
    assert (out.status, out.location) == (302, "/auth/signed-out")
    assert any(c.startswith("svc_session=;") and "Max-Age=0" in c for c in out.cookies)
    answer = kept.get("/api/products")
    assert (answer.status, answer.location) == (302, "/auth/signed-out")


def test_another_site_cannot_sign_the_staff_member_out(as_role, staff):
    refused = as_role("owner").post("/auth/sign-out", headers={"Origin": "https://evil.example"})
    assert refused.status == 403
    assert not refused.cookies
    assert Client(staff["owner"]["cookie"]).get("/api/products").status == 200


def test_signing_out_twice_or_without_a_session_is_harmless(db):
    assert invoke("POST", "/auth/sign-out").status == 302
    assert Client("svc_session=garbage").post("/auth/sign-out").status == 302
