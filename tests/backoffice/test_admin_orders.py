"""Orders screens against the real database: the list with status tabs and search, an order's page with its
lines and totals, only the next statuses the transition rule allows as actions, the tracking number and
notes; a viewer sees the order without any control."""

from __future__ import annotations

import re

from adminhelpers import csrf_of, forms, get, post, submit, text

from svc_backoffice.access import auth
from svc_backoffice.domain import catalog, commerce
from svc_backoffice.domain.models.catalog import ProductCreate
from svc_backoffice.domain.models.commerce import OrderCreate


def _order(db, staff, email: str = "ana@example.com", quantity: int = 2):
    product = catalog.create_product(
        db,
        ProductCreate(title=f"Candle for {email}", price_cents=1950, track_inventory=False, status="active"),
    )
    owner = auth.Staff(staff["owner"]["id"], "owner@shop.example", "owner")
    body = OrderCreate(
        email=email,
        items=[{"product_id": product["id"], "quantity": quantity}],
        shipping_cents=500,
        shipping_address={"name": "Ana", "line1": "1 Rue Haute", "city": "Lyon", "country": "FR"},
    )
    return commerce.create_order(db, body, owner)


def _buttons(answer) -> list[str]:
    return re.findall(r'name="to" value="(\w+)"', answer.body)


def test_an_order_shows_its_lines_totals_address_and_only_the_allowed_next_statuses(as_role, db, staff):
    order = _order(db, staff)
    page = get(as_role("editor"), f"/orders/{order['id']}")
    words = text(page)
    assert (
        f"Order #{order['number']}" in words
        and "Candle for ana@example.com" in words
        and "1 Rue Haute" in words
    )
    assert "€39.00" in words and "€44.00" in words  # 2 x 19.50, then with 5.00 shipping
    assert _buttons(page) == ["paid", "cancelled"]  # what order_transitions allows after pending


def test_an_editor_moves_an_order_to_its_next_status(as_role, db, staff):
    order = _order(db, staff)
    editor = as_role("editor")
    path = f"/orders/{order['id']}"
    for target in ("paid", "processing", "shipped"):
        answer = submit(editor, path, f"{path}/status", {"to": target})
        assert answer.status == 303, text(answer)
    page = get(editor, f"{path}?notice=status_changed")
    assert "Order status changed." in text(page) and 'id="order-status">Shipped<' in page.body
    assert _buttons(page) == ["delivered", "refunded"]
    assert "Pending → Paid" in text(page) and "Processing → Shipped" in text(page)


def test_a_status_the_rule_does_not_allow_is_refused_in_words(as_role, db, staff):
    order = _order(db, staff)
    path = f"/orders/{order['id']}"
    answer = submit(as_role("editor"), path, f"{path}/status", {"to": "delivered"})
    assert answer.status == 422 and "pending" in text(answer).lower()
    assert commerce.get_order(db, order["id"])["status"] == "pending"
    unknown = submit(as_role("editor"), path, f"{path}/status", {"to": "teleported"})
    assert unknown.status == 400


def test_tracking_number_and_notes_are_saved(as_role, db, staff):
    order = _order(db, staff)
    editor = as_role("editor")
    path = f"/orders/{order['id']}"
    assert submit(editor, path, f"{path}/tracking", {"tracking_number": "LA123456789FR"}).status == 303
    assert submit(editor, path, f"{path}/notes", {"body": "Gift wrap please"}).status == 303
    words = text(get(editor, path))
    assert 'value="LA123456789FR"' in get(editor, path).body and "Gift wrap please" in words
    empty = submit(editor, path, f"{path}/notes", {"body": "   "})
    assert empty.status == 400 and 'id="note-error"' in empty.body


def test_the_list_filters_by_status_and_searches_by_number_or_email(as_role, db, staff):
    first = _order(db, staff, "ana@example.com")
    second = _order(db, staff, "bob@example.com")
    owner = auth.Staff(staff["owner"]["id"], "owner@shop.example", "owner")
    from svc_backoffice.domain.models.commerce import OrderTransition

    commerce.transition_order(db, str(second["id"]), OrderTransition(to="paid"), owner)
    viewer = as_role("viewer")
    paid = text(get(viewer, "/orders?status=paid"))
    assert f"#{second['number']}" in paid and f"#{first['number']}" not in paid
    assert "bob@example.com" not in text(get(viewer, "/orders?q=ana@"))
    assert f"#{first['number']}" in text(get(viewer, f"/orders?q={first['number']}"))
    assert "No order matches" in text(get(viewer, "/orders?q=nobody"))


def test_no_orders_says_what_comes_next(as_role, db):
    assert "No orders yet" in text(get(as_role("viewer"), "/orders"))


def test_a_viewer_sees_the_order_without_any_control(as_role, db, staff):
    order = _order(db, staff)
    viewer = as_role("viewer")
    path = f"/orders/{order['id']}"
    page = get(viewer, path)
    assert page.status == 200 and forms(page) == ["/auth/sign-out"] and _buttons(page) == []
    editor_token = csrf_of(get(as_role("editor"), path))
    assert post(viewer, f"{path}/status", {"to": "paid"}, csrf=editor_token).status == 403
    assert commerce.get_order(db, order["id"])["status"] == "pending"
