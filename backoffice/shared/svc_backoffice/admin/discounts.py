"""Discounts: the coupons with their figures, and one form to create and edit a coupon (code, kind, value as
a percentage or an amount, minimum order, uses allowed, dates, active) beside its redemption figures."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.admin import render
from svc_backoffice.admin.editing import Editor, Field
from svc_backoffice.admin.forms import cents, whole
from svc_backoffice.admin.pages import page, router, see_other, store_row
from svc_backoffice.data.db import Row, database
from svc_backoffice.domain import commerce
from svc_backoffice.edge.requests import path_id

KINDS = (("percent", "Percentage off"), ("fixed", "Amount off"), ("free_shipping", "Free shipping"))


@router.page("GET", "/discounts")
def discount_list() -> Response:
    coupons = commerce.coupons_with_stats(database())
    return page("discounts.html", nav="discounts", title="Discounts", coupons=coupons)


@router.page("GET", "/coupons/<id>")
def coupon_link(id: str) -> Response:
    """Where the command palette's coupon results lead (the API's search names /coupons/<id>)."""
    coupon = commerce.get_coupon(database(), path_id(id))
    return see_other(f"/discounts/{coupon['id']}")


def _value(fields: dict[str, str], data: dict[str, Any], errors: dict[str, str]) -> None:
    """The value as its kind reads it: a whole percentage, an amount of money, nothing for free shipping;
    the code in capitals as the API stores it."""
    if "code" in data:
        data["code"] = data["code"].upper()
    if "value" not in fields:
        return
    kind = fields.get("kind", "")
    try:
        read = whole if kind == "percent" else cents
        data["value"] = 0 if kind == "free_shipping" else read(fields["value"]) or 0
    except ValueError as exc:
        errors["value"] = str(exc)


def _value_shown(coupon: Row, values: dict[str, str]) -> None:
    if coupon["kind"] == "fixed":
        values["value"] = render.amount(coupon["value"], store_row()["currency"])
    elif coupon["kind"] == "free_shipping":
        values["value"] = ""


COUPONS = Editor(
    records=commerce.COUPONS,
    path="/discounts",
    api="/api/coupons",
    noun="discount code",
    sections=(
        (
            "Code",
            (
                Field("code", "Code", hint="Letters, digits, - and _; like SPRING10", attrs='maxlength="32"'),
                Field("kind", "Kind", "select", options=KINDS),
                Field(
                    "value",
                    "Value",
                    hint="10 for 10 % off, or an amount like 5.00; empty for free shipping",
                    attrs='inputmode="decimal"',
                ),
                Field("active", "Active", "check"),
            ),
        ),
        (
            "Limits",
            (
                Field("min_subtotal", "Minimum order", "money", target="min_subtotal_cents"),
                Field("usage_limit", "Uses allowed", "whole", hint="Empty: no limit"),
                Field("starts_at", "Starts", "when", hint="Empty: at once"),
                Field("ends_at", "Ends", "when", hint="Empty: never"),
            ),
        ),
    ),
    title=lambda coupon: str(coupon["code"]),
    adjust=_value,
    values_of=_value_shown,
    context=lambda coupon: {
        "stats": commerce.coupon_stats(database(), str(coupon["id"])) if coupon else None
    },
    defaults=lambda: {"kind": "percent", "active": "on"},
    beside={
        "validation.coupon_dates": "ends_at",
        "validation.coupon_percent": "value",
        "validation.coupon_fixed": "value",
    },
    unique="code",
    aside="_coupon_stats.html",
    removal="Orders that used it keep their discount; customers can no longer use it.",
).declare()
