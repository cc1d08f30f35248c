"""Orders hold stock: creating one takes its tracked products' quantities (default location first), too little
stock refuses it whole with 409, cancelling puts back exactly what it took, a refund does not."""

from __future__ import annotations

import threading
import uuid

import psycopg
import pytest
from bohelpers import Client, committed_editor, own_database, race_past_a_lock


def stock(editor, product, delta, location=None):
    body = {"product_id": product["id"], "delta": delta, "reason": "delivery"}
    if location:
        body["location_id"] = location["id"]
    answer = editor.post("/api/inventory/adjust", body)
    assert answer.status == 201, answer.body
    return answer.json()


def level(viewer, product, code):
    levels = viewer.get(f"/api/products/{product['id']}").json()["stock"]
    return next((lv["quantity"] for lv in levels if lv["code"] == code), 0)


def order(editor, *lines):
    body = {
        "email": "buyer@shop.example",
        "items": [{"product_id": p["id"], "quantity": q} for p, q in lines],
    }
    return editor.post("/api/orders", body)


@pytest.fixture
def mug(editor):
    return editor.post("/api/products", {"title": "Mug", "sku": "MUG-1", "price_cents": 1250}).json()


@pytest.fixture
def annex(as_role):
    return as_role("admin").post("/api/inventory/locations", {"name": "Annex", "code": "ANNEX"}).json()


def test_an_order_takes_its_quantities_out_of_stock(editor, viewer, mug):
    stock(editor, mug, 5)
    answer = order(editor, (mug, 2), (mug, 1))
    assert answer.status == 201
    product = viewer.get(f"/api/products/{mug['id']}").json()
    assert (product["stock_total"], level(viewer, mug, "MAIN")) == (2, 2)
    latest = product["recent_adjustments"][0]
    assert (latest["delta"], latest["quantity_after"]) == (-3, 2)
    assert (latest["reason"], latest["order_id"]) == (f"Order {answer.json()['id'][:8]}", answer.json()["id"])


def test_exactly_the_stock_left_can_be_ordered_and_one_more_is_409(editor, viewer, mug):
    stock(editor, mug, 3)
    refused = order(editor, (mug, 4))
    assert refused.status == 409
    assert refused.json() == {"error": "Not enough stock for Mug: 3 available, 4 ordered."}
    assert viewer.get("/api/orders").json()["items"] == []  # nothing of the refused order remains
    assert viewer.get(f"/api/products/{mug['id']}").json()["stock_total"] == 3
    assert order(editor, (mug, 3)).status == 201
    assert viewer.get(f"/api/products/{mug['id']}").json()["stock_state"] == "out"
    assert order(editor, (mug, 1)).status == 409


def test_a_refused_line_refuses_the_whole_order(editor, viewer, mug):
    plate = editor.post("/api/products", {"title": "Plate", "price_cents": 900}).json()
    stock(editor, mug, 10)
    answer = order(editor, (mug, 2), (plate, 1))
    assert answer.status == 409 and "Plate: 0 available, 1 ordered" in answer.json()["error"]
    assert viewer.get(f"/api/products/{mug['id']}").json()["stock_total"] == 10


def test_the_default_location_goes_first_then_the_fullest(editor, viewer, mug, annex, as_role):
    spare = as_role("admin").post("/api/inventory/locations", {"name": "Spare", "code": "SPARE"}).json()
    stock(editor, mug, 2)
    stock(editor, mug, 3, annex)
    stock(editor, mug, 4, spare)
    assert order(editor, (mug, 7)).status == 201
    assert [level(viewer, mug, code) for code in ("MAIN", "SPARE", "ANNEX")] == [0, 0, 2]


def test_cancelling_puts_back_what_was_taken_where_it_was_taken(editor, viewer, mug, annex):
    stock(editor, mug, 1)
    stock(editor, mug, 5, annex)
    created = order(editor, (mug, 4)).json()
    assert [level(viewer, mug, code) for code in ("MAIN", "ANNEX")] == [0, 2]
    moved = editor.post(f"/api/orders/{created['id']}/transition", {"to": "cancelled"})
    assert moved.status == 200 and moved.json()["status"] == "cancelled"
    assert [level(viewer, mug, code) for code in ("MAIN", "ANNEX")] == [1, 5]
    adjustments = viewer.get(f"/api/products/{mug['id']}").json()["recent_adjustments"]
    put_back = [a for a in adjustments if a["reason"] == f"Order {created['id'][:8]} cancelled"]
    assert sorted(a["delta"] for a in put_back) == [1, 3]
    assert {a["order_id"] for a in put_back} == {created["id"]}
    assert all(a["staff_id"] for a in put_back)  # the staff member who cancelled


def test_a_refund_keeps_the_stock_out(editor, viewer, mug):
    stock(editor, mug, 2)
    created = order(editor, (mug, 2)).json()
    for status in ("paid", "refunded"):
        assert editor.post(f"/api/orders/{created['id']}/transition", {"to": status}).status == 200
    assert viewer.get(f"/api/products/{mug['id']}").json()["stock_total"] == 0


def test_untracked_products_and_custom_lines_need_no_stock(editor, viewer):
    ebook = editor.post(
        "/api/products", {"title": "E-book", "price_cents": 500, "track_inventory": False}
    ).json()
    body = {
        "email": "buyer@shop.example",
        "items": [
            {"product_id": ebook["id"], "quantity": 3},
            {"title": "Gift wrap", "quantity": 1, "unit_price_cents": 300},
        ],
    }
    answer = editor.post("/api/orders", body)
    assert answer.status == 201
    assert viewer.get(f"/api/products/{ebook['id']}").json()["recent_adjustments"] == []


def test_two_orders_for_the_last_unit_one_wins(database_url, session_connection, staff, db):
    """Two handlers on two connections order the last unit of a committed product at once: one gets 201, the
    other 409, and the stock ends at zero, never below."""
    with psycopg.connect(database_url, autocommit=True) as setup:
        editor_id = committed_editor(setup)
        product_id = setup.execute(
            "INSERT INTO products (title, slug, price_cents) VALUES ('Last mug', %s, 900) RETURNING id::text",
            (f"last-mug-{uuid.uuid4().hex[:8]}",),
        ).fetchone()[0]
        setup.execute(
            "INSERT INTO inventory_adjustments (product_id, location_id, delta, reason) "
            "SELECT %s, id, 1, 'delivery' FROM stock_locations WHERE is_default",
            (product_id,),
        )
    from svc_backoffice.access import sessions

    cookie = f"svc_session={sessions.mint(editor_id)}"
    results: dict[str, int] = {}
    try:
        with psycopg.connect(database_url, autocommit=True) as holder:
            # Hold the product's stock row so both requests are provably inside order_take_stock() at once.
            holder.execute("BEGIN")
            holder.execute("SELECT 1 FROM stock_levels WHERE product_id = %s FOR UPDATE", (product_id,))

            def buy(name: str) -> None:
                with own_database(database_url):
                    body = {
                        "email": f"{name}@shop.example",
                        "items": [{"product_id": product_id, "quantity": 1}],
                    }
                    results[name] = Client(cookie).post("/api/orders", body).status

            threads = [threading.Thread(target=buy, args=(n,)) for n in ("a", "b")]
            race_past_a_lock(database_url, holder, threads, "order_take_stock")
        assert sorted(results.values()) == [201, 409]
        with psycopg.connect(database_url, autocommit=True) as check:
            total = check.execute("SELECT stock_total FROM products WHERE id = %s", (product_id,)).fetchone()
            assert total[0] == 0
    finally:
        with psycopg.connect(database_url, autocommit=True) as cleanup:
            cleanup.execute(
                "DELETE FROM orders WHERE id IN (SELECT order_id FROM order_items WHERE product_id = %s)",
                (product_id,),
            )
            cleanup.execute("DELETE FROM products WHERE id = %s", (product_id,))
            cleanup.execute("DELETE FROM staff WHERE id = %s", (editor_id,))
