"""Orders against PostgreSQL: create from catalog and custom lines with coupon and shipping, list/read/update,
notes, and status transitions ruled by the database (422 for illegal moves, serialized when concurrent)."""

from __future__ import annotations

import threading
import uuid

import psycopg
import pytest
from bohelpers import Client, committed_editor, own_database, race_past_a_lock


@pytest.fixture
def product(editor):
    created = editor.post("/api/products", {"title": "Mug", "sku": "MUG-1", "price_cents": 1250}).json()
    stocked = {"product_id": created["id"], "delta": 100, "reason": "delivery"}
    assert editor.post("/api/inventory/adjust", stocked).status == 201
    return created


def make_order(editor, product, **fields):
    body = {"email": "buyer@shop.example", "items": [{"product_id": product["id"], "quantity": 2}], **fields}
    answer = editor.post("/api/orders", body)
    assert answer.status == 201, answer.body
    return answer.json()


def test_create_prices_lines_from_the_catalog(editor, product):
    order = make_order(
        editor,
        product,
        tax_cents=100,
        items=[
            {"product_id": product["id"], "quantity": 2},
            {"title": "Gift wrap", "quantity": 1, "unit_price_cents": 300},
        ],
    )
    assert (order["status"], order["subtotal_cents"], order["total_cents"]) == ("pending", 2800, 2900)
    assert {(i["title"], i["sku"], i["quantity"]) for i in order["items"]} == {
        ("Mug", "MUG-1", 2),
        ("Gift wrap", None, 1),
    }
    assert order["number"] >= 1001 and order["history"] == [] and order["notes"] == []


def test_coupon_and_shipping_method_apply(editor, as_role, product):
    admin = as_role("admin")
    zone = admin.post("/api/shipping/zones", {"name": "EU", "countries": ["FR", "DE"]}).json()
    method = admin.post(
        "/api/shipping/methods",
        {"zone_id": zone["id"], "name": "Standard", "price_cents": 490, "free_over_cents": 10000},
    ).json()
    editor.post("/api/coupons", {"code": "TENOFF", "kind": "percent", "value": 10, "usage_limit": 1})
    order = make_order(editor, product, shipping_method_id=method["id"], coupon_code="tenoff")
    assert (order["discount_cents"], order["shipping_cents"], order["total_cents"]) == (
        250,
        490,
        2500 - 250 + 490,
    )
    assert order["coupon_code"] == "TENOFF"
    # The single use is spent: the next order cannot redeem the coupon (422), and nothing of it is written.
    before = editor.get("/api/orders").json()["items"]
    answer = editor.post(
        "/api/orders",
        {
            "email": "b@shop.example",
            "items": [{"product_id": product["id"], "quantity": 1}],
            "coupon_code": "TENOFF",
        },
    )
    assert (answer.status, answer.json()) == (422, {"error": "Coupon TENOFF does not apply to this order."})
    assert editor.get("/api/orders").json()["items"] == before


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"email": "x@y.co", "items": []}, 400),
        ({"email": "not-an-email", "items": [{"title": "a", "quantity": 1, "unit_price_cents": 1}]}, 400),
        ({"email": "x@y.co", "items": [{"title": "a", "quantity": 0, "unit_price_cents": 1}]}, 400),
        ({"email": "x@y.co", "items": [{"title": "a", "quantity": 1, "unit_price_cents": -5}]}, 400),
        ({"email": "x@y.co", "items": [{"quantity": 1}]}, 400),
        ({"email": "x@y.co", "items": [{"product_id": str(uuid.uuid4()), "quantity": 1}]}, 404),
        (
            {
                "email": "x@y.co",
                "customer_id": str(uuid.uuid4()),
                "items": [{"title": "a", "quantity": 1, "unit_price_cents": 1}],
            },
            404,
        ),
        (
            {
                "email": "x@y.co",
                "items": [{"title": "a", "quantity": 10000, "unit_price_cents": 2_000_000_000}],
            },
            422,
        ),
        (
            {
                "email": "x@y.co",
                "items": [{"title": "a", "quantity": 1, "unit_price_cents": 1}],
                "coupon_code": "NOPE",
            },
            422,
        ),
    ],
)
def test_bad_orders_are_refused_whole(editor, body, status):
    answer = editor.post("/api/orders", body)
    assert answer.status == status, answer.body
    assert "error" in answer.json()
    assert editor.get("/api/orders").json()["items"] == []


def test_list_filters_and_read(editor, viewer, product):
    first = make_order(editor, product, email="alice@shop.example")
    make_order(editor, product, email="bob@shop.example")
    assert [o["email"] for o in viewer.get("/api/orders?q=alice").json()["items"]] == ["alice@shop.example"]
    assert [o["id"] for o in viewer.get(f"/api/orders?q=%23{first['number']}").json()["items"]] == [
        first["id"]
    ]
    # a superscript one is no order number: nothing found, no error
    assert viewer.get("/api/orders?q=%23%C2%B9").json()["items"] == []
    page = viewer.get("/api/orders?limit=1").json()
    assert (len(page["items"]), page["has_more"]) == (1, True)
    assert viewer.get("/api/orders?status=paid").json()["items"] == []
    assert viewer.get("/api/orders?status=lost").status == 400
    assert viewer.get(f"/api/orders/{first['id']}").json()["items"][0]["title"] == "Mug"
    assert viewer.get(f"/api/orders/{uuid.uuid4()}").status == 404
    assert viewer.get("/api/orders/not-a-uuid").status == 404


def test_update_changes_contact_not_status(editor, product):
    order = make_order(editor, product)
    address = {"line1": "1 Main St", "city": "Lyon", "country": "FR"}
    answer = editor.patch(
        f"/api/orders/{order['id']}", {"tracking_number": "TRK1", "shipping_address": address}
    )
    assert answer.status == 200
    assert answer.json()["shipping_address"]["city"] == "Lyon"
    assert editor.patch(f"/api/orders/{order['id']}", {"status": "paid"}).status == 400
    assert editor.patch(f"/api/orders/{uuid.uuid4()}", {"tracking_number": "x"}).status == 404


def test_transitions_follow_the_database_rules(editor, staff, product):
    order = make_order(editor, product)
    url = f"/api/orders/{order['id']}/transition"
    paid = editor.post(url, {"to": "paid", "note": "Paid by bank transfer"})
    assert paid.status == 200
    assert paid.json()["status"] == "paid"
    assert paid.json()["history"][0] | {"created_at": None, "id": None} == {
        "from_status": "pending",
        "to_status": "paid",
        "staff_id": staff["editor"]["id"],
        "created_at": None,
        "id": None,
    }
    assert paid.json()["notes"][0]["body"] == "Paid by bank transfer"
    answer = editor.post(url, {"to": "delivered"})
    assert (answer.status, answer.json()) == (422, {"error": "Illegal transition from paid to delivered"})
    assert editor.get(f"/api/orders/{order['id']}").json()["status"] == "paid"
    for to in ("processing", "shipped", "delivered", "refunded"):
        assert editor.post(url, {"to": to}).json()["status"] == to
    assert editor.post(url, {"to": "pending"}).status == 422


@pytest.mark.parametrize(
    "body", [{"to": "lost"}, {"to": ""}, {}, {"to": "paid", "extra": 1}, {"to": ["paid"]}]
)
def test_transition_to_unknown_states_is_400(editor, product, body):
    order = make_order(editor, product)
    answer = editor.post(f"/api/orders/{order['id']}/transition", body)
    assert answer.status == 400
    assert "fieldErrors" in answer.json()["error"]


def test_transition_of_a_missing_order_is_404(editor):
    answer = editor.post(f"/api/orders/{uuid.uuid4()}/transition", {"to": "paid"})
    assert (answer.status, answer.json()) == (404, {"error": "Not found"})
    assert editor.post("/api/orders/x/transition", {"to": "paid"}).status == 404
    assert editor.post(f"/api/orders/{uuid.uuid4()}/transition", raw_body="{bad").status == 400


def test_notes(editor, staff, product):
    order = make_order(editor, product)
    answer = editor.post(
        f"/api/orders/{order['id']}/notes", {"body": "Call before delivery", "internal": False}
    )
    assert answer.status == 201
    assert (answer.json()["staff_id"], answer.json()["internal"]) == (staff["editor"]["id"], False)
    assert editor.post(f"/api/orders/{order['id']}/notes", {"body": "  "}).status == 400
    assert editor.post(f"/api/orders/{order['id']}/notes", {"body": "x" * 2001}).status == 400
    assert editor.post(f"/api/orders/{order['id']}/notes", raw_body="{").status == 400
    missing = editor.post(f"/api/orders/{uuid.uuid4()}/notes", {"body": "lost"})
    assert (missing.status, missing.json()) == (404, {"error": "Not found"})


def test_concurrent_transitions_of_one_order_serialize(database_url, session_connection, staff, db):
    """Two handlers on two connections move one committed order at once: exactly one wins, the other gets 422
    from order_transition(), and the history holds one move."""
    with psycopg.connect(database_url, autocommit=True) as setup:
        editor_id = committed_editor(setup)
        order_id = setup.execute(
            "INSERT INTO orders (email) VALUES ('race@shop.example') RETURNING id::text"
        ).fetchone()[0]
    from svc_backoffice.access import sessions

    cookie = f"svc_session={sessions.mint(editor_id)}"
    results: dict[str, tuple[int, dict]] = {}
    try:
        with psycopg.connect(database_url, autocommit=True) as holder:
            # Hold the order's row lock so both requests are provably inside the database at the same time.
            holder.execute("BEGIN")
            holder.execute("SELECT 1 FROM orders WHERE id = %s FOR UPDATE", (order_id,))

            def move(name: str, to: str) -> None:
                with own_database(database_url):
                    answer = Client(cookie).post(f"/api/orders/{order_id}/transition", {"to": to})
                    results[name] = (answer.status, answer.json())

            threads = [threading.Thread(target=move, args=(n, t)) for n, t in (("a", "paid"), ("b", "paid"))]
            race_past_a_lock(database_url, holder, threads, "order_transition")
        statuses = sorted(status for status, _ in results.values())
        assert statuses == [200, 422]
        loser = next(body for status, body in results.values() if status == 422)
        assert loser == {"error": "Illegal transition from paid to paid"}
        with psycopg.connect(database_url, autocommit=True) as check:
            assert (
                check.execute("SELECT status FROM orders WHERE id = %s", (order_id,)).fetchone()[0] == "paid"
            )
            assert (
                check.execute(
                    "SELECT count(*) FROM order_status_history WHERE order_id = %s", (order_id,)
                ).fetchone()[0]
                == 1
            )
    finally:
        with psycopg.connect(database_url, autocommit=True) as cleanup:
            cleanup.execute("DELETE FROM orders WHERE id = %s", (order_id,))
            cleanup.execute("DELETE FROM staff WHERE id = %s", (editor_id,))
