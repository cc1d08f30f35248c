"""Orders > Create order: an order taken by hand (on the phone, at a market stall) as POST /api/orders takes
it: the customer's email (an existing customer with that email is linked), lines of catalog products named
by SKU with their quantity (priced from the catalog, their stock taken), a shipping method, a discount code
and a delivery address. Each error is shown beside its field; stock too short or a code that does not apply
is said above the form, and nothing is written."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.admin.forms import FormInvalid, converted, refused, validated, whole
from svc_backoffice.admin.pages import current_query, current_staff, form, page, router, see_other, store_row
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import Conflict, InvalidInput, NotFound, Unprocessable
from svc_backoffice.data.db import database
from svc_backoffice.domain import catalog, commerce, shipping
from svc_backoffice.domain.models.commerce import OrderCreate

LINES = 5  # line rows on the form; an empty row is left out
ADDRESS = (
    ("name", "Name"),
    ("line1", "Address"),
    ("postal_code", "Postal code"),
    ("city", "City"),
    ("country", "Country code"),
)
UNKNOWN_SKU = "No product has this SKU."
NO_LINE = "Name at least one product by its SKU."
COUPON_REFUSED = "orders.coupon_not_applicable"


def _form(values: dict[str, str], status: int = 200, **context: Any) -> Response:
    db = database()
    methods = [
        ("", "No shipping"),
        *((str(m["id"]), m["name"]) for m in shipping.list_methods(db) if m["active"]),
    ]
    return page(
        "order_new.html",
        status,
        nav="orders",
        title="Create order",
        lines=LINES,
        address=ADDRESS,
        methods=methods,
        values=values,
        **context,
    )


@router.page("GET", "/orders/new", api="POST /api/orders")
def new_order() -> Response:
    """The empty form; `?email=` fills the customer's email (a customer's page links here)."""
    return _form({"email": current_query().get("email", ""), "qty0": "1"})


def _body(fields: dict[str, str]) -> OrderCreate:
    """The form as an order: lines by SKU, each error under the form field it concerns."""
    rows = [r for r in range(LINES) if fields.get(f"sku{r}", "").strip() or fields.get(f"qty{r}", "").strip()]
    skus = [fields.get(f"sku{r}", "").strip() for r in rows]
    found = catalog.products_by_sku(database(), [s for s in skus if s])
    quantities, errors = converted(fields, {f"qty{r}": (f"qty{r}", whole) for r in rows})
    items: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for row, sku in zip(rows, skus, strict=True):
        if sku not in found:
            errors.setdefault(f"sku{row}", UNKNOWN_SKU if sku else NO_LINE)
            continue
        names[f"items.{len(items)}.quantity"] = f"qty{row}"
        names[f"items.{len(items)}"] = f"sku{row}"
        items.append({"product_id": found[sku], "quantity": quantities.get(f"qty{row}")})
    if not rows:
        errors["sku0"] = NO_LINE
    names["items"] = "sku0"  # no line at all: said beside the first
    typed = {key: fields.get(f"ship_{key}", "").strip() for key, _ in ADDRESS}
    address = {**typed, "country": typed["country"].upper()} if any(typed.values()) else None
    names.update({f"shipping_address.{key}": f"ship_{key}" for key, _ in ADDRESS})
    email = fields.get("email", "").strip()
    data = {
        "email": email,
        "customer_id": commerce.customer_id_by_email(database(), email) if email else None,
        "currency": store_row()["currency"],
        "items": items,
        "shipping_method_id": fields.get("shipping_method_id") or None,
        "coupon_code": fields.get("coupon_code", "").strip() or None,
        "shipping_address": address,
    }
    body: OrderCreate = validated(OrderCreate, data, names, errors)
    return body


@router.page("POST", "/orders/new", api="POST /api/orders")
def create_order() -> Response:
    fields = form()
    staff = current_staff()
    try:
        body = _body(fields)
        with database().transaction():
            order = commerce.create_order(database(), body, staff)
    except (FormInvalid, InvalidInput) as exc:
        found = refused(exc)
        return _form(fields, 400, errors=found.fields, form_error=found.form)
    except (Conflict, Unprocessable, NotFound) as exc:
        # Stock too short, a method gone meanwhile, or a code that does not apply: nothing was written.
        code = fields.get("coupon_code", "").strip().upper()
        beside = (
            {"coupon_code": exc.message} if code and exc.message == say(COUPON_REFUSED, code=code) else {}
        )
        status = 409 if isinstance(exc, Conflict) else 422
        return _form(fields, status, errors=beside, form_error=exc.message)
    return see_other(f"/orders/{order['id']}", notice="created")
