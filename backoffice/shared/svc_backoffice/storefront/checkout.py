"""A shopper's checkout. Prices, discount, shipping and tax come from the catalog on the server; the order is
created pending with its stock taken (commerce.create_order, order_take_stock: the reservation), and the card
provider's Checkout Session for the shop's connected account is where the shopper pays. The payment webhook
(payments.receive_webhook) marks it paid once; an expired session, or the sweep of reservations past their
end, cancels it and so puts its stock back (order_release_stock)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import NotFound, RateLimited, Unavailable, Unprocessable
from svc_backoffice.core.logs import logger
from svc_backoffice.data.db import Database, Row
from svc_backoffice.domain import card_provider as stripe
from svc_backoffice.domain import commerce, storefront_settings
from svc_backoffice.domain.models.commerce import OrderCreate, OrderItemIn
from svc_backoffice.storefront.models import CartLine, Checkout, CouponCheck

TOKEN_PREFIX = "oc_"  # noqa: S105 - the prefix of a token, not a secret
TOKEN_LENGTH = len(TOKEN_PREFIX) + 43
SWEEP_BATCH = 50


class CheckoutClosed(Unavailable):
    def __init__(self) -> None:
        super().__init__(say("storefront.checkout_not_open"), reason="checkout not open")


def money(cents: int, currency: str) -> str:
    return f"{cents / 100:.2f} {currency}"


def connected_account(db: Database) -> str | None:
    """The card provider's connected account, when checkout can use it (enabled, with its webhook secret)."""
    row = db.one(
        "SELECT public_config->>'account_id' AS account FROM payment_providers WHERE kind = 'card' AND enabled "
        "AND webhook_secret_encrypted IS NOT NULL AND public_config->>'account_id' LIKE 'acct\\_%%'"
    )
    return row["account"] if row else None


def is_open(db: Database) -> bool:
    return bool(
        stripe.configured() and storefront_settings.storefront_url() and connected_account(db) is not None
    )


# -- lines and coupons ---------------------------------------------------------------------------------------
def price_lines(db: Database, lines: list[CartLine]) -> list[Row]:
    """The cart's products (active only; lines of one product added up) with their catalog prices."""
    slugs = [line.slug for line in lines if line.slug]
    ids = [str(line.product_id) for line in lines if line.product_id]
    found = db.all(
        "SELECT id::text, slug, title, price_cents FROM products WHERE status = 'active' "
        "AND (slug = ANY(%s::text[]) OR id = ANY(%s::uuid[]))",
        (slugs, ids),
    )
    by_slug, by_id = {p["slug"]: p for p in found}, {p["id"]: p for p in found}
    merged: dict[str, Row] = {}
    for line in lines:
        product = by_slug.get(line.slug or "") if line.slug else by_id.get(str(line.product_id))
        if product is None:
            if line.slug:
                raise NotFound(say("storefront.no_product", slug=line.slug))
            raise NotFound(say("storefront.no_product_id", id=line.product_id))
        entry = merged.setdefault(product["id"], {**product, "quantity": 0})
        entry["quantity"] += line.quantity
    return list(merged.values())


def _coupon(db: Database, code: str, subtotal: int | None, currency: str) -> Row:
    """The coupon of `code` if it applies now (to `subtotal`, when given); 404 / 422 in words otherwise."""
    code = code.upper()
    row = db.found(
        "SELECT code, kind, value, min_subtotal_cents, active, usage_limit IS NOT NULL AND used_count >= "
        "usage_limit AS used_up, starts_at > now() AS not_yet, ends_at <= now() AS expired "
        "FROM coupons WHERE code = %s",
        (code,),
        missing=say("storefront.no_coupon", code=code),
    )
    for flag, key in (
        (not row["active"], "storefront.coupon_inactive"),
        (row["not_yet"], "storefront.coupon_not_yet"),
        (row["expired"], "storefront.coupon_expired"),
        (row["used_up"], "storefront.coupon_used_up"),
    ):
        if flag:
            raise Unprocessable(say(key, code=code))
    if subtotal is not None and subtotal < row["min_subtotal_cents"]:
        amount = money(row["min_subtotal_cents"], currency)
        raise Unprocessable(say("storefront.coupon_minimum", code=code, amount=amount))
    return row


def check_coupon(db: Database, body: CouponCheck) -> dict[str, Any]:
    currency = _currency(db)
    subtotal = None
    if body.items:
        subtotal = sum(p["quantity"] * p["price_cents"] for p in price_lines(db, body.items))
    coupon = _coupon(db, body.code, subtotal, currency)
    kind, value = coupon["kind"], coupon["value"]
    discount = 0
    if subtotal is not None and kind == "percent":
        discount = subtotal * value // 100
    elif subtotal is not None and kind == "fixed":
        discount = min(value, subtotal)
    message = {
        "percent": say("storefront.coupon_percent", value=value),
        "fixed": say("storefront.coupon_fixed", amount=money(value, currency)),
        "free_shipping": say("storefront.coupon_free_shipping"),
    }[kind]
    return {
        "code": coupon["code"],
        "kind": kind,
        "value": value,
        "discount_cents": discount,
        "free_shipping": kind == "free_shipping",
        "min_subtotal_cents": coupon["min_subtotal_cents"],
        "message": message,
    }


def _currency(db: Database) -> str:
    row = db.one("SELECT currency FROM settings")
    assert row is not None
    return str(row["currency"])


# -- checkout ------------------------------------------------------------------------------------------------
def _shipping_method(db: Database, body: Checkout) -> Row:
    method = db.one(
        "SELECT m.id, m.name, %s = ANY(z.countries) AS serves FROM shipping_methods m "
        "JOIN shipping_zones z ON z.id = m.zone_id WHERE m.id = %s AND m.active",
        (body.shipping_address.country, body.shipping_method_id),
    )
    if method is None:
        raise NotFound(say("storefront.no_shipping_method", id=body.shipping_method_id))
    if not method["serves"]:
        raise Unprocessable(
            say(
                "storefront.method_not_to_country",
                method=method["name"],
                country=body.shipping_address.country,
            )
        )
    return method


def _count_checkout(db: Database, address: str) -> None:
    """One more checkout of `address` in the current window; RateLimited once it has had its limit."""
    own = storefront_settings.settings()
    window = own.storefront_checkout_window_seconds
    row = db.one(
        "INSERT INTO storefront_checkout_counts (client_address, window_start, checkouts) "
        "VALUES (%(address)s, to_timestamp(floor(extract(epoch FROM now()) / %(window)s) * %(window)s), 1) "
        "ON CONFLICT (client_address, window_start) DO UPDATE "
        "SET checkouts = storefront_checkout_counts.checkouts + 1 "
        "RETURNING checkouts, ceil(extract(epoch FROM window_start + make_interval(secs => %(window)s) - now()))"
        "::integer AS retry_after",
        {"address": address, "window": window},
    )
    assert row is not None
    if row["checkouts"] > own.storefront_checkout_limit:
        raise RateLimited(say("storefront.rate_limited"), retry_after=max(int(row["retry_after"]), 1))


def sweep(db: Database) -> int:
    """Cancel the pending checkouts whose reservation ended more than the grace ago (their stock goes back);
    returns how many. Orders another request holds (being paid now) are skipped, not waited for."""
    grace = storefront_settings.settings().storefront_sweep_grace_minutes
    stale = db.all(
        "SELECT o.id FROM storefront_checkouts k JOIN orders o ON o.id = k.order_id "
        "WHERE o.status = 'pending' AND k.expires_at < now() - make_interval(mins => %s) "
        "ORDER BY k.expires_at LIMIT %s FOR UPDATE OF o SKIP LOCKED",
        (grace, SWEEP_BATCH),
    )
    for row in stale:
        db.all("SELECT id FROM order_transition(%s, 'cancelled')", (row["id"],))
    return len(stale)


def _session_params(
    order: Row, lines: list[Row], method: Row, token: str, expires: datetime
) -> dict[str, Any]:
    site = storefront_settings.storefront_url()
    currency = str(order["currency"]).lower()
    if order["discount_cents"]:
        title = say("storefront.discounted_order", number=order["number"])
        items = [{"name": title, "amount": order["total_cents"], "quantity": 1}]
    else:
        items = [{"name": p["title"], "amount": p["price_cents"], "quantity": p["quantity"]} for p in lines]
        if order["shipping_cents"]:
            name = say("storefront.shipping_line", method=method["name"])
            items.append({"name": name, "amount": order["shipping_cents"], "quantity": 1})
    return {
        "mode": "payment",
        "line_items": [
            {
                "price_data": {
                    "currency": currency,
                    "unit_amount": item["amount"],
                    "product_data": {"name": item["name"]},
                },
                "quantity": item["quantity"],
            }
            for item in items
        ],
        "customer_email": order["email"],
        "client_reference_id": str(order["id"]),
        "metadata": {"order_id": str(order["id"]), "order_number": order["number"]},
        "success_url": f"{site}/order/?token={token}",
        "cancel_url": f"{site}/cart/",
        # A minute past the reservation: the provider wants at least 30 minutes from the moment it receives
        # the call, and the sweep's grace covers a payment made in that minute.
        "expires_at": int(expires.timestamp()) + 60,
    }


def checkout(db: Database, body: Checkout, client_address: str) -> dict[str, Any]:
    account = connected_account(db)
    if account is None or not stripe.configured() or not storefront_settings.storefront_url():
        raise CheckoutClosed()
    sweep(db)
    lines = price_lines(db, body.items)
    method = _shipping_method(db, body)
    currency = _currency(db)
    if body.coupon_code:
        subtotal = sum(p["quantity"] * p["price_cents"] for p in lines)
        _coupon(db, body.coupon_code, subtotal, currency)
    order = commerce.create_order(
        db,
        OrderCreate(
            email=body.email,
            currency=currency,
            items=[OrderItemIn(product_id=p["id"], quantity=p["quantity"]) for p in lines],
            shipping_method_id=body.shipping_method_id,
            coupon_code=body.coupon_code,
            shipping_address=body.shipping_address,
        ),
    )
    _count_checkout(db, client_address)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    minutes = storefront_settings.settings().storefront_reservation_minutes
    expires = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=minutes)
    db.all(
        "INSERT INTO storefront_checkouts (order_id, token_sha256, client_address, expires_at) "
        "VALUES (%s, %s, %s, %s)",
        (order["id"], _digest(token), client_address, expires),
    )
    try:
        session = stripe.create_checkout_session(
            account, _session_params(order, lines, method, token, expires), f"order-{order['id']}"
        )
    except (stripe.ProviderError, stripe.NotConfigured) as exc:
        raise Unavailable(say("storefront.provider_unreachable"), reason=str(exc)) from None
    db.all(
        "UPDATE storefront_checkouts SET session_id = %s WHERE order_id = %s", (session["id"], order["id"])
    )
    logger.info("storefront checkout", extra={"order": order["number"], "session": session["id"]})
    return {
        "order": {
            key: order[key]
            for key in (
                "number",
                "status",
                "currency",
                "subtotal_cents",
                "discount_cents",
                "shipping_cents",
                "tax_cents",
                "total_cents",
            )
        },
        "token": token,
        "payment_url": session["url"],
        "expires_at": expires.isoformat(),
    }


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _masked(email: str) -> str:
    local, _, domain = email.partition("@")
    return f"{local[:1]}***@{domain}"


def order_by_token(db: Database, token: str) -> Row:
    """The order a checkout token names (only that one); 404 for anything else."""
    if not token.startswith(TOKEN_PREFIX) or len(token) != TOKEN_LENGTH:
        raise NotFound(say("storefront.no_order"))
    row = db.one(
        "SELECT o.number, o.status, o.placed_at, o.currency, o.email, o.subtotal_cents, o.discount_cents, "
        "o.shipping_cents, o.tax_cents, o.total_cents, "
        "(SELECT name FROM shipping_methods m WHERE m.id = o.shipping_method_id) AS shipping_method, "
        "coalesce((SELECT jsonb_agg(jsonb_build_object('title', i.title, 'slug', p.slug, 'quantity', "
        "i.quantity, 'unit_price_cents', i.unit_price_cents, 'total_cents', i.quantity * i.unit_price_cents) "
        "ORDER BY i.title) FROM order_items i LEFT JOIN products p ON p.id = i.product_id "
        "WHERE i.order_id = o.id), '[]') AS items "
        "FROM storefront_checkouts k JOIN orders o ON o.id = k.order_id WHERE k.token_sha256 = %s",
        (_digest(token),),
    )
    if row is None:
        raise NotFound(say("storefront.no_order"))
    row["email"] = _masked(row["email"])
    return row
