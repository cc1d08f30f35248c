"""Orders: the list (status tabs, search by number or email, paging on the server) and an order's page with
its lines, totals, customer, addresses, notes and history, the statuses the transition rule allows next as
actions, and its tracking number. Writes call the commerce domain behind the API routes' roles."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from pydantic import ValidationError

from svc_backoffice.admin.forms import FormInvalid, refused, written
from svc_backoffice.admin.pages import current_query, form, page, router, see_other, signed_in
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import InvalidInput, Unprocessable
from svc_backoffice.data.db import database
from svc_backoffice.domain import commerce
from svc_backoffice.domain.models.commerce import (
    OrderListQuery,
    OrderNoteCreate,
    OrderTransition,
    OrderUpdate,
)
from svc_backoffice.edge.requests import path_id

PAGE_SIZE = 25
STATUSES = ("pending", "paid", "processing", "shipped", "delivered", "cancelled", "refunded")
# What the button moving an order to a status says.
ACTIONS = {
    "paid": "Mark as paid",
    "processing": "Start processing",
    "shipped": "Mark as shipped",
    "delivered": "Mark as delivered",
    "cancelled": "Cancel order",
    "refunded": "Refund order",
}


def next_statuses(status: str) -> list[str]:
    """The statuses the transition rule (the `order_transitions` table order_transition() reads) allows
    after `status`, in the order an order moves."""
    rows = database().all("SELECT to_status FROM order_transitions WHERE from_status = %s", (status,))
    allowed = {row["to_status"] for row in rows}
    return [s for s in STATUSES if s in allowed]


@router.page("GET", "/orders")
def order_list() -> Response:
    query = current_query()
    filters = {name: query[name].strip() for name in ("q", "status") if query.get(name, "").strip()}
    problem = None
    try:
        offset = max(int(query.get("offset", "0") or 0), 0)
        found = commerce.list_orders(
            database(),
            OrderListQuery.model_validate({**filters, "offset": str(offset), "limit": str(PAGE_SIZE)}),
        )
    except (ValueError, ValidationError):
        problem, filters = say("admin.bad_filters"), {}
        found = commerce.list_orders(database(), OrderListQuery.model_validate({"limit": str(PAGE_SIZE)}))
    anything = bool(found["items"]) or bool(filters) or found["offset"] > 0
    anything = anything or database().one("SELECT 1 AS one FROM orders LIMIT 1") is not None
    return page(
        "order_list.html",
        nav="orders",
        title="Orders",
        found=found,
        filters=filters,
        problem=problem,
        anything=anything,
        statuses=STATUSES,
    )


def _order_page(order_id: str, status: int = 200, **context: Any) -> Response:
    order = commerce.get_order(database(), order_id)
    return page(
        "order.html",
        status,
        nav="orders",
        title=f"Order #{order['number']}",
        order=order,
        next_statuses=next_statuses(order["status"]),
        actions=ACTIONS,
        **context,
    )


@router.page("GET", "/orders/<id>")
def order_detail(id: str) -> Response:
    return _order_page(path_id(id))


@router.page("POST", "/orders/<id>/status", api="POST /api/orders/[id]/transition")
def move_order(id: str) -> Response:
    order_id = path_id(id)
    fields = form()
    staff = signed_in()
    try:
        written(
            OrderTransition,
            {"to": fields.get("to", ""), "note": fields.get("note") or None},
            lambda db, body: commerce.transition_order(db, order_id, body, staff),
        )
    except FormInvalid as exc:
        return _order_page(order_id, 400, problem=exc.fields.get("to") or exc.form)
    except (InvalidInput, Unprocessable) as exc:
        return _order_page(order_id, 422, problem=refused(exc).form)
    return see_other(f"/orders/{order_id}", notice="status_changed")


@router.page("POST", "/orders/<id>/tracking", api="PATCH /api/orders/[id]")
def set_tracking(id: str) -> Response:
    order_id = path_id(id)
    fields = form()
    number = fields.get("tracking_number", "").strip() or None
    try:
        written(
            OrderUpdate,
            {"tracking_number": number},
            lambda db, body: commerce.update_order(db, order_id, body),
        )
    except FormInvalid as exc:
        return _order_page(order_id, 400, errors=exc.fields, values=fields)
    return see_other(f"/orders/{order_id}", notice="tracking_saved")


@router.page("POST", "/orders/<id>/notes", api="POST /api/orders/[id]/notes")
def add_note(id: str) -> Response:
    order_id = path_id(id)
    fields = form()
    staff = signed_in()
    try:
        written(
            OrderNoteCreate,
            {"body": fields.get("body", ""), "internal": True},
            lambda db, body: commerce.add_order_note(db, order_id, body, staff),
            {"body": "note"},
        )
    except FormInvalid as exc:
        return _order_page(order_id, 400, errors=exc.fields, values=fields)
    return see_other(f"/orders/{order_id}", notice="note_added")
