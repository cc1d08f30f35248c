"""Customers (the list with search and paging, a customer with their orders) and Discounts (coupons with
their figures; create and delete behind the API's roles)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from pydantic import ValidationError

from svc_backoffice.admin.forms import FormInvalid, cents, converted, refused, validated, whole
from svc_backoffice.admin.pages import current_query, form, page, router, see_other
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import Conflict, InvalidInput, Unprocessable
from svc_backoffice.data.db import database
from svc_backoffice.domain import commerce
from svc_backoffice.domain.models.commerce import CouponCreate, CustomerListQuery
from svc_backoffice.edge.requests import path_id

PAGE_SIZE = 25


@router.page("GET", "/customers")
def customer_list() -> Response:
    query = current_query()
    filters = {"q": query["q"].strip()} if query.get("q", "").strip() else {}
    problem = None
    try:
        offset = max(int(query.get("offset", "0") or 0), 0)
        params = {**filters, "offset": str(offset), "limit": str(PAGE_SIZE)}
        found = commerce.list_customers(database(), CustomerListQuery.model_validate(params))
    except (ValueError, ValidationError):
        problem, filters = say("admin.bad_filters"), {}
        found = commerce.list_customers(
            database(), CustomerListQuery.model_validate({"limit": str(PAGE_SIZE)})
        )
    return page(
        "customers.html", nav="customers", title="Customers", found=found, filters=filters, problem=problem
    )


@router.page("GET", "/customers/<id>")
def customer_detail(id: str) -> Response:
    customer = commerce.get_customer(database(), path_id(id))
    name = f"{customer['first_name']} {customer['last_name']}".strip() or customer["email"]
    return page("customer.html", nav="customers", title=name, customer=customer)


def _discounts(status: int = 200, **context: object) -> Response:
    db = database()
    coupons = [{**c, "stats": commerce.coupon_stats(db, str(c["id"]))} for c in commerce.list_coupons(db)]
    return page(
        "discounts.html",
        status,
        nav="discounts",
        title="Discounts",
        coupons=coupons,
        **{"values": {"kind": "percent"}, "errors": {}, "form_error": None, **context},
    )


@router.page("GET", "/discounts")
def discount_list() -> Response:
    return _discounts()


@router.page("GET", "/coupons/<id>")
def coupon_link(id: str) -> Response:
    """Where the command palette's coupon results lead (the API's search names /coupons/<id>)."""
    commerce.get_coupon(database(), path_id(id))
    return see_other("/discounts")


@router.page("POST", "/discounts", api="POST /api/coupons")
def create_discount() -> Response:
    fields = form()
    kind = fields.get("kind", "")
    value_of = whole if kind == "percent" else (lambda v: cents(v) or 0)
    data, errors = converted(
        fields,
        {
            "value": ("value", lambda v: (value_of(v) or 0) if kind != "free_shipping" else 0),
            "min_subtotal_cents": ("min_subtotal", lambda v: cents(v) or 0),
            "usage_limit": ("usage_limit", whole),
        },
    )
    data.update(code=fields.get("code", "").strip().upper(), kind=kind, active=fields.get("active") == "on")
    try:
        body = validated(CouponCreate, data, {"min_subtotal_cents": "min_subtotal"}, errors)
        with database().transaction():
            commerce.create_coupon(database(), body)
    except (FormInvalid, InvalidInput, Conflict, Unprocessable) as exc:
        found = refused(exc, "code")
        return _discounts(400, values=fields, errors=found.fields, form_error=found.form)
    return see_other("/discounts", notice="created")


@router.page("POST", "/discounts/<id>/delete", api="DELETE /api/coupons/[id]")
def delete_discount(id: str) -> Response:
    commerce.delete_coupon(database(), path_id(id))
    return see_other("/discounts", notice="removed")
