"""Settings > Shipping: the zones (the countries they serve) with their methods (price, free-over amount,
delivery days, carrier) and the carriers (tracking address), each added, changed and deleted by one form
behind the roles of the API's shipping routes (an admin or owner changes them; everyone reads them)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.admin.editing import Editor, Field
from svc_backoffice.admin.pages import page, router
from svc_backoffice.data.db import Database, database
from svc_backoffice.domain import shipping

HOME = "/settings/shipping"
METHOD_KINDS = (("flat", "Flat rate"), ("free", "Free"), ("weight", "By weight"), ("pickup", "Pickup"))


@router.page("GET", HOME, api="GET /api/shipping/zones")
def shipping_settings() -> Response:
    db = database()
    carriers = shipping.list_carriers(db)
    return page(
        "shipping.html",
        nav="settings",
        tab="shipping",
        title="Shipping",
        zones=shipping.list_zones(db),
        carriers=carriers,
        carrier_names={str(c["id"]): c["name"] for c in carriers},
        kinds=dict(METHOD_KINDS),
    )


def _countries(fields: dict[str, str], data: dict[str, Any], errors: dict[str, str]) -> None:
    if "countries" in data:
        data["countries"] = [code.upper() for code in data["countries"]]


def _zones(db: Database) -> tuple[tuple[str, str], ...]:
    return tuple((str(z["id"]), z["name"]) for z in shipping.list_zones(db))


def _carriers(db: Database) -> tuple[tuple[str, str], ...]:
    return (("", "No carrier"), *((str(c["id"]), c["name"]) for c in shipping.list_carriers(db)))


ZONES = Editor(
    records=shipping.ZONES,
    path=f"{HOME}/zones",
    api="/api/shipping/zones",
    noun="shipping zone",
    back=HOME,
    sections=(
        (
            "",
            (
                Field("name", "Name", attrs='maxlength="120"', hint="Like Europe or Domestic"),
                Field(
                    "countries", "Countries", "words", hint="Two-letter codes, like FR, DE, BE; empty: all"
                ),
                Field("position", "Position", "number", hint="Lower comes first"),
            ),
        ),
    ),
    adjust=_countries,
    removal="Its shipping methods are deleted with it.",
    defaults=lambda: {"position": "0"},
    unique="name",
).declare()

METHODS = Editor(
    records=shipping.METHODS,
    path=f"{HOME}/methods",
    api="/api/shipping/methods",
    noun="shipping method",
    back=HOME,
    sections=(
        (
            "",
            (
                Field("name", "Name", attrs='maxlength="120"', hint="What customers read at checkout"),
                Field("zone_id", "Zone", "select", options=_zones),
                Field("kind", "Kind", "select", options=METHOD_KINDS),
                Field("carrier_id", "Carrier", "select", options=_carriers),
            ),
        ),
        (
            "Price and delivery",
            (
                Field("price", "Price", "money", target="price_cents", hint="Like 4.90; 0 when free"),
                Field("free_over", "Free over", "maybe_money", target="free_over_cents", hint="Empty: never"),
                Field("min_days", "Delivery from (days)", "whole"),
                Field("max_days", "Delivery up to (days)", "whole"),
                Field("position", "Position", "number", hint="Lower comes first"),
                Field("active", "Offered at checkout", "check"),
            ),
        ),
    ),
    defaults=lambda: {"kind": "flat", "active": "on", "price": "0.00", "position": "0"},
    beside={"validation.method_days": "max_days", "validation.method_free": "price"},
    removal="Checkout no longer offers it.",
    unique="name",
).declare()

CARRIERS = Editor(
    records=shipping.CARRIERS,
    path=f"{HOME}/carriers",
    api="/api/shipping/carriers",
    noun="carrier",
    back=HOME,
    sections=(
        (
            "",
            (
                Field("name", "Name", attrs='maxlength="120"', hint="Like Colissimo"),
                Field(
                    "code",
                    "Code",
                    hint="Small letters, digits, - and _; like colissimo",
                    attrs='maxlength="40"',
                ),
                Field(
                    "tracking_url",
                    "Tracking address",
                    "url",
                    target="tracking_url_template",
                    hint="https://…, the carrier's tracking page",
                    attrs='maxlength="500"',
                ),
                Field("active", "In use", "check"),
            ),
        ),
    ),
    defaults=lambda: {"active": "on"},
    removal="Its shipping methods stay, without a carrier.",
    unique="code",
).declare()
