"""Commerce routes: orders (with transitions and notes), customers, coupons."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice import commerce
from svc_backoffice.db import database
from svc_backoffice.models import (
    CouponCreate,
    CouponUpdate,
    CustomerCreate,
    CustomerListQuery,
    CustomerUpdate,
    OrderCreate,
    OrderListQuery,
    OrderNoteCreate,
    OrderTransition,
    OrderUpdate,
)
from svc_backoffice.web import ApiRouter, body, json_response, path_id, query

orders = ApiRouter("/api/orders")


@orders.api("GET")
def list_orders() -> Response:
    return json_response(200, commerce.list_orders(database(), query(orders, OrderListQuery)))


@orders.api("POST")
def create_order() -> Response:
    return json_response(201, commerce.create_order(database(), body(orders, OrderCreate), orders.staff()))


@orders.api("GET", "/<id>")
def get_order(id: str) -> Response:
    return json_response(200, commerce.get_order(database(), path_id(id)))


@orders.api("PATCH", "/<id>")
def update_order(id: str) -> Response:
    order_id = path_id(id)
    return json_response(200, commerce.update_order(database(), order_id, body(orders, OrderUpdate)))


@orders.api("POST", "/<id>/transition")
def transition_order(id: str) -> Response:
    order_id = path_id(id)
    move = body(orders, OrderTransition)
    return json_response(200, commerce.transition_order(database(), order_id, move, orders.staff()))


@orders.api("POST", "/<id>/notes")
def add_note(id: str) -> Response:
    order_id = path_id(id)
    note = body(orders, OrderNoteCreate)
    return json_response(201, commerce.add_order_note(database(), order_id, note, orders.staff()))


customers = ApiRouter("/api/customers")


@customers.api("GET")
def list_customers() -> Response:
    return json_response(200, commerce.list_customers(database(), query(customers, CustomerListQuery)))


@customers.api("POST")
def create_customer() -> Response:
    return json_response(201, commerce.create_customer(database(), body(customers, CustomerCreate)))


@customers.api("GET", "/<id>")
def get_customer(id: str) -> Response:
    return json_response(200, commerce.get_customer(database(), path_id(id)))


@customers.api("PATCH", "/<id>")
def update_customer(id: str) -> Response:
    customer_id = path_id(id)
    return json_response(
        200, commerce.update_customer(database(), customer_id, body(customers, CustomerUpdate))
    )


coupons = ApiRouter("/api/coupons")


@coupons.api("GET")
def list_coupons() -> Response:
    return json_response(200, {"items": commerce.list_coupons(database())})


@coupons.api("POST")
def create_coupon() -> Response:
    return json_response(201, commerce.create_coupon(database(), body(coupons, CouponCreate)))


@coupons.api("GET", "/<id>")
def get_coupon(id: str) -> Response:
    return json_response(200, commerce.get_coupon(database(), path_id(id)))


@coupons.api("PATCH", "/<id>")
def update_coupon(id: str) -> Response:
    coupon_id = path_id(id)
    return json_response(200, commerce.update_coupon(database(), coupon_id, body(coupons, CouponUpdate)))


@coupons.api("DELETE", "/<id>")
def delete_coupon(id: str) -> Response:
    commerce.delete_coupon(database(), path_id(id))
    return json_response(200, {"ok": True})


@coupons.api("GET", "/<id>/stats")
def coupon_stats(id: str) -> Response:
    return json_response(200, commerce.coupon_stats(database(), path_id(id)))


ROUTERS = (orders, customers, coupons)
