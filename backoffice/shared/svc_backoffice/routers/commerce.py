"""Commerce routes: orders (with transitions and notes), customers, coupons."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice import commerce
from svc_backoffice.db import database
from svc_backoffice.web import ApiRouter, body, json_response, path_id, query

orders = ApiRouter("/api/orders")


@orders.api(
    "GET",
    role="viewer",
    query="OrderListQuery",
    answers="200 302 400 500",
    summary="List orders with filters and paging",
)
def list_orders() -> Response:
    return json_response(200, commerce.list_orders(database(), query(orders)))


@orders.api(
    "POST",
    role="editor",
    body="OrderCreate",
    answers="201 302 400 404 409 422 500",
    summary="Create an order from items (prices from the catalog), coupon and shipping",
)
def create_order() -> Response:
    return json_response(201, commerce.create_order(database(), body(orders), orders.staff()))


@orders.api(
    "GET",
    "/<id>",
    role="viewer",
    answers="200 302 404 500",
    summary="An order with items, notes, status history and customer",
)
def get_order(id: str) -> Response:
    return json_response(200, commerce.get_order(database(), path_id(id)))


@orders.api(
    "PATCH",
    "/<id>",
    role="editor",
    body="OrderUpdate",
    answers="200 302 400 404 500",
    summary="Update contact, addresses or tracking (status moves by transition only)",
)
def update_order(id: str) -> Response:
    order_id = path_id(id)
    return json_response(200, commerce.update_order(database(), order_id, body(orders)))


@orders.api(
    "POST",
    "/<id>/transition",
    role="editor",
    body="OrderTransition",
    answers="200 302 400 404 422 500",
    summary="Move the order to another status (rules in order_transition())",
)
def transition_order(id: str) -> Response:
    order_id = path_id(id)
    move = body(orders)
    return json_response(200, commerce.transition_order(database(), order_id, move, orders.staff()))


@orders.api(
    "POST",
    "/<id>/notes",
    role="editor",
    body="OrderNoteCreate",
    answers="201 302 400 404 500",
    summary="Add a note to an order",
)
def add_note(id: str) -> Response:
    order_id = path_id(id)
    note = body(orders)
    return json_response(201, commerce.add_order_note(database(), order_id, note, orders.staff()))


customers = ApiRouter("/api/customers")


@customers.api(
    "GET",
    role="viewer",
    query="CustomerListQuery",
    answers="200 302 400 500",
    summary="List customers with search and paging",
)
def list_customers() -> Response:
    return json_response(200, commerce.list_customers(database(), query(customers)))


@customers.api(
    "POST",
    role="editor",
    body="CustomerCreate",
    answers="201 302 400 409 500",
    summary="Create a customer",
)
def create_customer() -> Response:
    return json_response(201, commerce.create_customer(database(), body(customers)))


@customers.api(
    "GET",
    "/<id>",
    role="viewer",
    answers="200 302 404 500",
    summary="A customer with order totals and recent orders",
)
def get_customer(id: str) -> Response:
    return json_response(200, commerce.get_customer(database(), path_id(id)))


@customers.api(
    "PATCH",
    "/<id>",
    role="editor",
    body="CustomerUpdate",
    answers="200 302 400 404 409 500",
    summary="Update a customer",
)
def update_customer(id: str) -> Response:
    customer_id = path_id(id)
    return json_response(200, commerce.update_customer(database(), customer_id, body(customers)))


coupons = ApiRouter("/api/coupons")


@coupons.api(
    "GET",
    role="viewer",
    answers="200 302 500",
    summary="Coupons",
)
def list_coupons() -> Response:
    return json_response(200, {"items": commerce.list_coupons(database())})


@coupons.api(
    "POST",
    role="editor",
    body="CouponCreate",
    answers="201 302 400 409 422 500",
    summary="Create a coupon",
)
def create_coupon() -> Response:
    return json_response(201, commerce.create_coupon(database(), body(coupons)))


@coupons.api(
    "GET",
    "/<id>",
    role="viewer",
    answers="200 302 404 500",
    summary="A coupon",
)
def get_coupon(id: str) -> Response:
    return json_response(200, commerce.get_coupon(database(), path_id(id)))


@coupons.api(
    "PATCH",
    "/<id>",
    role="editor",
    body="CouponUpdate",
    answers="200 302 400 404 409 422 500",
    summary="Update a coupon",
)
def update_coupon(id: str) -> Response:
    coupon_id = path_id(id)
    return json_response(200, commerce.update_coupon(database(), coupon_id, body(coupons)))


@coupons.api(
    "DELETE",
    "/<id>",
    role="editor",
    answers="200 302 404 500",
    summary="Delete a coupon",
)
def delete_coupon(id: str) -> Response:
    commerce.delete_coupon(database(), path_id(id))
    return json_response(200, {"ok": True})


@coupons.api(
    "GET",
    "/<id>/stats",
    role="viewer",
    answers="200 302 404 500",
    summary="Redemption figures of a coupon",
)
def coupon_stats(id: str) -> Response:
    return json_response(200, commerce.coupon_stats(database(), path_id(id)))


ROUTERS = (orders, customers, coupons)
