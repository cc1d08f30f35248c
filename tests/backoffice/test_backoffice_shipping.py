"""Shipping zones, methods and carriers against PostgreSQL."""

from __future__ import annotations

import uuid

import pytest


@pytest.fixture
def admin(as_role):
    return as_role("admin")


def test_zones_methods_carriers(admin, viewer):
    zone = admin.post("/api/shipping/zones", {"name": "Europe", "countries": ["FR", "DE"]})
    assert zone.status == 201
    zone_id = zone.json()["id"]
    assert admin.post("/api/shipping/zones", {"name": "Europe"}).status == 409
    carrier = admin.post(
        "/api/shipping/carriers",
        {"name": "Post", "code": "post", "tracking_url_template": "https://track.example/{number}"},
    )
    assert carrier.status == 201
    assert admin.post("/api/shipping/carriers", {"name": "Other", "code": "post"}).status == 409
    method = admin.post(
        "/api/shipping/methods",
        {
            "zone_id": zone_id,
            "carrier_id": carrier.json()["id"],
            "name": "Standard",
            "price_cents": 500,
            "min_days": 2,
            "max_days": 4,
        },
    )
    assert method.status == 201
    method_id = method.json()["id"]
    assert admin.post("/api/shipping/methods", {"zone_id": zone_id, "name": "Standard"}).status == 409
    unknown_zone = admin.post("/api/shipping/methods", {"zone_id": str(uuid.uuid4()), "name": "X"})
    assert unknown_zone.status == 422
    for path, refused in (
        ("zones", {"name": "Bad", "countries": ["fr"]}),
        ("zones", {"name": "Dup", "countries": ["FR", "FR"]}),
        ("carriers", {"name": "Plain", "code": "plain", "tracking_url_template": "http://x"}),
        ("methods", {"zone_id": zone_id, "name": "Y", "min_days": 5, "max_days": 1}),
        ("methods", {"zone_id": zone_id, "name": "Z", "kind": "free", "price_cents": 1}),
    ):
        assert admin.post(f"/api/shipping/{path}", refused).status == 400, (path, refused)
    assert admin.patch(f"/api/shipping/methods/{method_id}", {"max_days": 1}).status == 422
    assert (
        admin.patch(f"/api/shipping/methods/{method_id}", {"price_cents": 700}).json()["price_cents"] == 700
    )
    zones = viewer.get("/api/shipping/zones").json()["items"]
    assert [m["name"] for m in zones[0]["methods"]] == ["Standard"]
    assert [m["id"] for m in viewer.get("/api/shipping/methods").json()["items"]] == [method_id]
    assert admin.patch(f"/api/shipping/zones/{zone_id}", {"countries": ["FR"]}).json()["countries"] == ["FR"]
    carrier_id = carrier.json()["id"]
    assert admin.patch(f"/api/shipping/carriers/{carrier_id}", {"active": False}).json()["active"] is False
    assert viewer.get("/api/shipping/carriers").json()["items"][0]["code"] == "post"
    # Deleting the carrier leaves the method without one; deleting the zone removes its methods.
    assert admin.delete(f"/api/shipping/carriers/{carrier_id}").json() == {"ok": True}
    assert viewer.get("/api/shipping/methods").json()["items"][0]["carrier_id"] is None
    assert admin.delete(f"/api/shipping/zones/{zone_id}").json() == {"ok": True}
    assert viewer.get("/api/shipping/methods").json()["items"] == []
    for path in ("zones", "methods", "carriers"):
        assert admin.delete(f"/api/shipping/{path}/{uuid.uuid4()}").status == 404
        assert admin.patch(f"/api/shipping/{path}/{uuid.uuid4()}", {"name": "n"}).status == 404
