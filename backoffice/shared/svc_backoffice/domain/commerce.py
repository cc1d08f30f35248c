"""Commerce logic and data access: orders (status moves by the database's order_transition()), order notes,
customers, coupons and their redemption figures."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from psycopg.types.json import Jsonb

from svc_backoffice.access.auth import Staff
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import NotFound, Unprocessable
from svc_backoffice.data.db import Database, Row
from svc_backoffice.domain.models.base import INT32
from svc_backoffice.domain.models.commerce import (
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
from svc_backoffice.domain.rows import Table, insert_row, page_of, update_row, where_equal
from svc_backoffice.domain.store import _like


def _jsonb(data: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: (Jsonb(v) if k in names and v is not None else v) for k, v in data.items()}


# -- orders --------------------------------------------------------------------------------------------------
ORDER_COLUMNS = (
    "o.id, o.number, o.customer_id, o.email, o.status, o.currency, o.subtotal_cents, o.discount_cents, "
    "o.shipping_cents, o.tax_cents, o.total_cents, o.coupon_id, o.shipping_method_id, o.tracking_number, "
    "o.placed_at, o.updated_at"
)
ORDER_DETAIL = f"""
SELECT {ORDER_COLUMNS}, o.shipping_address, o.billing_address,
  coalesce((SELECT jsonb_agg(to_jsonb(i) - 'order_id' ORDER BY i.title) FROM order_items i
             WHERE i.order_id = o.id), '[]') AS items,
  coalesce((SELECT jsonb_agg(to_jsonb(n) - 'order_id' ORDER BY n.created_at) FROM order_notes n
             WHERE n.order_id = o.id), '[]') AS notes,
  coalesce((SELECT jsonb_agg(to_jsonb(h) - 'order_id' ORDER BY h.id) FROM order_status_history h
             WHERE h.order_id = o.id), '[]') AS history,
  (SELECT jsonb_build_object('id', c.id, 'email', c.email, 'first_name', c.first_name,
                             'last_name', c.last_name) FROM customers c WHERE c.id = o.customer_id) AS customer,
  (SELECT c.code FROM coupons c WHERE c.id = o.coupon_id) AS coupon_code
FROM orders o WHERE o.id = %s
"""  # noqa: S608


def list_orders(db: Database, q: OrderListQuery) -> dict[str, Any]:
    where: list[str] = []
    params: dict[str, Any] = {"limit": q.limit + 1, "offset": q.offset}
    if q.q and (text := q.q.strip()):
        params["like"] = _like(text)
        params["number"] = int(text.lstrip("#")) if text.lstrip("#").isdecimal() and len(text) < 18 else None
        where.append("(o.number = %(number)s OR o.email ILIKE %(like)s)")
    where_equal(q, ("status", "customer_id"), where, params, alias="o.")
    sql = (
        f"SELECT {ORDER_COLUMNS}, (SELECT count(*) FROM order_items i WHERE i.order_id = o.id) AS item_count "  # noqa: S608
        "FROM orders o"
        + (f" WHERE {' AND '.join(where)}" if where else "")
        + " ORDER BY o.placed_at DESC, o.id DESC LIMIT %(limit)s OFFSET %(offset)s"
    )
    return page_of(db.all(sql, params), q.offset, q.limit)


def get_order(db: Database, order_id: Any) -> Row:
    return db.found(ORDER_DETAIL, (order_id,))


def _coupon_discount(db: Database, code: str, subtotal: int, shipping: int) -> tuple[Row, int, int]:
    """(coupon, discount, shipping) for a code valid now; the use is counted under the coupon's row lock."""
    coupon = db.one(
        "UPDATE coupons SET used_count = used_count + 1 WHERE code = %s AND active "
        "AND (starts_at IS NULL OR starts_at <= now()) AND (ends_at IS NULL OR ends_at > now()) "
        "AND (usage_limit IS NULL OR used_count < usage_limit) AND min_subtotal_cents <= %s "
        "RETURNING id, code, kind, value",
        (code.upper(), subtotal),
    )
    if coupon is None:
        raise Unprocessable(say("orders.coupon_not_applicable", code=code.upper()))
    if coupon["kind"] == "percent":
        return coupon, subtotal * coupon["value"] // 100, shipping
    if coupon["kind"] == "fixed":
        return coupon, min(coupon["value"], subtotal), shipping
    return coupon, 0, 0  # free_shipping


def customer_id_by_email(db: Database, email: str) -> str | None:
    """The customer with this email (emails match without regard to case, as their unique index does)."""
    row = db.one("SELECT id::text AS id FROM customers WHERE lower(email) = lower(%s)", (email,))
    return str(row["id"]) if row else None


def create_order(db: Database, body: OrderCreate, staff: Staff | None = None) -> Row:
    """The order, its lines priced from the catalog, its coupon and shipping; its tracked products' stock is
    taken by order_take_stock() in the same transaction (409 when there is not enough)."""
    product_ids = list({str(i.product_id) for i in body.items if i.product_id})
    products = {
        str(p["id"]): p
        for p in db.all(
            "SELECT id, title, sku, price_cents FROM products WHERE id = ANY(%s::uuid[])", (product_ids,)
        )
    }
    if missing := sorted(set(product_ids) - set(products)):
        raise NotFound(say("orders.no_product", id=missing[0]))
    if body.customer_id and db.one("SELECT 1 FROM customers WHERE id = %s", (body.customer_id,)) is None:
        raise NotFound(say("orders.no_customer", id=body.customer_id))
    lines: list[dict[str, Any]] = []
    for item in body.items:
        product = products.get(str(item.product_id)) if item.product_id else None
        lines.append(
            {
                "product_id": item.product_id,
                "title": item.title or (product["title"] if product else ""),
                "sku": item.sku if item.sku is not None else (product["sku"] if product else None),
                "quantity": item.quantity,
                "unit_price_cents": item.unit_price_cents
                if item.unit_price_cents is not None
                else (product["price_cents"] if product else 0),
            }
        )
    subtotal = sum(line["quantity"] * line["unit_price_cents"] for line in lines)
    shipping = body.shipping_cents or 0
    if body.shipping_method_id:
        method = db.one(
            "SELECT price_cents, free_over_cents FROM shipping_methods WHERE id = %s AND active",
            (body.shipping_method_id,),
        )
        if method is None:
            raise NotFound(say("orders.no_shipping_method", id=body.shipping_method_id))
        if body.shipping_cents is None:
            free = method["free_over_cents"] is not None and subtotal >= method["free_over_cents"]
            shipping = 0 if free else method["price_cents"]
    coupon, discount = None, 0
    if body.coupon_code:
        coupon, discount, shipping = _coupon_discount(db, body.coupon_code, subtotal, shipping)
    if subtotal + shipping + body.tax_cents > INT32:
        raise Unprocessable(say("orders.total_too_large"))
    order = insert_row(
        db,
        "orders",
        {
            "customer_id": body.customer_id,
            "email": body.email,
            "currency": body.currency,
            "subtotal_cents": subtotal,
            "discount_cents": discount,
            "shipping_cents": shipping,
            "tax_cents": body.tax_cents,
            "coupon_id": coupon["id"] if coupon else None,
            "shipping_method_id": body.shipping_method_id,
            "shipping_address": Jsonb(body.shipping_address.model_dump()) if body.shipping_address else None,
            "billing_address": Jsonb(body.billing_address.model_dump()) if body.billing_address else None,
        },
        "id",
    )
    db.all(
        "INSERT INTO order_items (order_id, product_id, title, sku, quantity, unit_price_cents) "
        "SELECT %s, * FROM unnest(%s::uuid[], %s::text[], %s::text[], %s::int[], %s::int[])",
        (
            order["id"],
            [line["product_id"] for line in lines],
            [line["title"] for line in lines],
            [line["sku"] for line in lines],
            [line["quantity"] for line in lines],
            [line["unit_price_cents"] for line in lines],
        ),
    )
    if coupon:
        db.all(
            "INSERT INTO coupon_redemptions (coupon_id, order_id, discount_cents) VALUES (%s, %s, %s)",
            (coupon["id"], order["id"], discount),
        )
    db.one("SELECT order_take_stock(%s, %s) AS taken", (order["id"], staff.id if staff else None))
    return get_order(db, order["id"])


def update_order(db: Database, order_id: str, body: OrderUpdate) -> Row:
    changes = _jsonb(body.model_dump(mode="json", exclude_unset=True), "shipping_address", "billing_address")
    update_row(db, "orders", order_id, changes, "id")
    return get_order(db, order_id)


def transition_order(db: Database, order_id: str, body: OrderTransition, staff: Staff) -> Row:
    """The move is the database's: order_transition() locks the order row, so concurrent moves of one order
    serialize and the later one sees the new status (an illegal move raises `Illegal transition ...`, 422)."""
    db.all("SELECT id FROM order_transition(%s, %s, %s)", (order_id, body.to, staff.id))
    if body.note:
        db.all(
            "INSERT INTO order_notes (order_id, staff_id, body) VALUES (%s, %s, %s)",
            (order_id, staff.id, body.note),
        )
    return get_order(db, order_id)


def add_order_note(db: Database, order_id: str, body: OrderNoteCreate, staff: Staff) -> Row:
    return db.found(
        "INSERT INTO order_notes (order_id, staff_id, body, internal) "
        "SELECT id, %s, %s, %s FROM orders WHERE id = %s "
        "RETURNING id, order_id, staff_id, body, internal, created_at",
        (staff.id, body.body, body.internal, order_id),
    )


# -- customers -----------------------------------------------------------------------------------------------
CUSTOMER_COLUMNS = (
    "c.id, c.email, c.first_name, c.last_name, c.phone, c.accepts_marketing, c.addresses, c.note, "
    "c.created_at, c.updated_at"
)
CUSTOMER_TOTALS = (
    "(SELECT count(*) FROM orders o WHERE o.customer_id = c.id) AS orders_count, "
    "(SELECT coalesce(sum(o.total_cents), 0) FROM orders o WHERE o.customer_id = c.id "
    "AND o.status NOT IN ('cancelled', 'refunded', 'pending')) AS total_spent_cents"
)
# A customer's ten latest orders, newest first, a JSON array.
RECENT_ORDERS = (
    "coalesce((SELECT jsonb_agg(r ORDER BY r.placed_at DESC) FROM (SELECT o.id, o.number, o.status, "
    "o.total_cents, o.currency, o.placed_at FROM orders o WHERE o.customer_id = c.id "
    "ORDER BY o.placed_at DESC LIMIT 10) r), '[]')"
)


def list_customers(db: Database, q: CustomerListQuery) -> dict[str, Any]:
    params: dict[str, Any] = {"limit": q.limit + 1, "offset": q.offset}
    where = ""
    if q.q and (text := q.q.strip()):
        params["like"] = _like(text)
        where = " WHERE c.email ILIKE %(like)s OR (c.first_name || ' ' || c.last_name) ILIKE %(like)s"
    rows = db.all(
        f"SELECT {CUSTOMER_COLUMNS}, {CUSTOMER_TOTALS} FROM customers c{where} "  # noqa: S608
        "ORDER BY c.created_at DESC, c.id DESC LIMIT %(limit)s OFFSET %(offset)s",
        params,
    )
    return page_of(rows, q.offset, q.limit)


def get_customer(db: Database, customer_id: Any) -> Row:
    return db.found(
        f"SELECT {CUSTOMER_COLUMNS}, {CUSTOMER_TOTALS}, {RECENT_ORDERS} AS recent_orders "  # noqa: S608
        "FROM customers c WHERE c.id = %s",
        (customer_id,),
    )


def create_customer(db: Database, body: CustomerCreate) -> Row:
    row = insert_row(db, "customers", _jsonb(body.model_dump(mode="json"), "addresses"), "id")
    return get_customer(db, row["id"])


def update_customer(db: Database, customer_id: str, body: CustomerUpdate) -> Row:
    changes = _jsonb(body.model_dump(mode="json", exclude_unset=True), "addresses")
    update_row(db, "customers", customer_id, changes, "id")
    return get_customer(db, customer_id)


# -- coupons -------------------------------------------------------------------------------------------------
COUPON_COLUMNS = (
    "id, code, kind, value, min_subtotal_cents, usage_limit, used_count, starts_at, ends_at, active, "
    "created_at, updated_at"
)


def list_coupons(db: Database) -> list[Row]:
    return db.all(f"SELECT {COUPON_COLUMNS} FROM coupons ORDER BY code")  # noqa: S608


COUPONS = Table("coupons", COUPON_COLUMNS, CouponCreate, CouponUpdate)
get_coupon, create_coupon = COUPONS.read, COUPONS.create
update_coupon, delete_coupon = COUPONS.update, COUPONS.delete


COUPON_STATS = (
    "SELECT c.id AS coupon_id, c.code, c.kind, c.value, c.active, c.used_count, c.usage_limit, "
    "CASE WHEN c.usage_limit IS NULL THEN NULL ELSE c.usage_limit - c.used_count END AS remaining, "
    "count(r.order_id) AS redemptions, coalesce(sum(r.discount_cents), 0) AS discount_total_cents, "
    "coalesce(sum(o.total_cents), 0) AS revenue_cents, "
    "count(o.id) FILTER (WHERE o.status IN ('cancelled', 'refunded')) AS cancelled_or_refunded, "
    "min(r.created_at) AS first_used_at, max(r.created_at) AS last_used_at, "
    "c.starts_at, c.ends_at "
    "FROM coupons c LEFT JOIN coupon_redemptions r ON r.coupon_id = c.id "
    "LEFT JOIN orders o ON o.id = r.order_id"
)


def _with_live(row: Row, now: datetime) -> Row:
    """The figures as the API answers them, with `live`: active, within its dates and uses left."""
    starts_at, ends_at = row.pop("starts_at"), row.pop("ends_at")
    row["live"] = bool(
        row["active"]
        and (starts_at is None or starts_at <= now)
        and (ends_at is None or ends_at > now)
        and (row["remaining"] is None or row["remaining"] > 0)
    )
    return row


def coupon_stats(db: Database, coupon_id: str) -> Row:
    row = db.found(f"{COUPON_STATS} WHERE c.id = %s GROUP BY c.id", (coupon_id,))
    return _with_live(row, datetime.now(UTC))


def coupons_with_stats(db: Database) -> list[Row]:
    """Every coupon with its figures (`stats`, as coupon_stats answers them), in one statement."""
    now = datetime.now(UTC)
    figures = {row["coupon_id"]: _with_live(row, now) for row in db.all(f"{COUPON_STATS} GROUP BY c.id")}
    return [{**coupon, "stats": figures[coupon["id"]]} for coupon in list_coupons(db)]
