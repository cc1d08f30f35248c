"""Commerce routes: orders (with transitions and notes), customers, coupons."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.data.db import database
from svc_backoffice.domain import commerce
from svc_backoffice.edge.api_router import ApiRouter
from svc_backoffice.edge.requests import body, path_id
from svc_backoffice.edge.web import json_response

orders = ApiRouter("/api/orders", reader="viewer", writer="editor")
orders.lists(commerce.list_orders, query="OrderListQuery", summary="List orders with filters and paging")


@orders.api(
    "POST",
    role="editor",
    body="OrderCreate",
    answers="201 302 400 404 409 422 500",
    summary="Create an order from items (prices from the catalog), coupon and shipping",
)
def create_order() -> Response:
    return json_response(201, commerce.create_order(database(), body(orders), orders.staff()))


orders.reads(commerce.get_order, summary="An order with items, notes, status history and customer")
orders.updates(
    commerce.update_order,
    body="OrderUpdate",
    summary="Update contact, addresses or tracking (status moves by transition only)",
)


orders.acts(
    "transition",
    commerce.transition_order,
    body="OrderTransition",
    staff=True,
    also="422",
    summary="Move the order to another status (rules in order_transition())",
)
orders.acts(
    "notes",
    commerce.add_order_note,
    body="OrderNoteCreate",
    staff=True,
    status=201,
    summary="Add a note to an order",
)


customers = ApiRouter("/api/customers", reader="viewer", writer="editor")
customers.lists(
    commerce.list_customers, query="CustomerListQuery", summary="List customers with search and paging"
)
customers.creates(commerce.create_customer, body="CustomerCreate", also="409", summary="Create a customer")
customers.reads(commerce.get_customer, summary="A customer with order totals and recent orders")
customers.updates(commerce.update_customer, body="CustomerUpdate", also="409", summary="Update a customer")

coupons = ApiRouter("/api/coupons", reader="viewer", writer="editor")
coupons.lists(commerce.list_coupons, summary="Coupons")
coupons.creates(commerce.create_coupon, body="CouponCreate", also="409 422", summary="Create a coupon")
coupons.reads(commerce.get_coupon, summary="A coupon")
coupons.updates(commerce.update_coupon, body="CouponUpdate", also="409 422", summary="Update a coupon")
coupons.deletes(commerce.delete_coupon, summary="Delete a coupon")


@coupons.api(
    "GET", "/<id>/stats", role="viewer", answers="200 302 404 500", summary="Redemption figures of a coupon"
)
def coupon_stats(id: str) -> Response:
    return json_response(200, commerce.coupon_stats(database(), path_id(id)))


ROUTERS = (orders, customers, coupons)
