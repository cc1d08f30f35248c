"""Payment providers (webhook secrets sealed at rest, write-only) and the four signed webhooks. A webhook is
authenticated over its raw body before anything is parsed or written; only authenticated events are recorded,
once per (provider, event id). The signature schemes are documented in docs/webhooks.md."""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import secrets
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb

from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import WebhookRejected
from svc_backoffice.data import sealing
from svc_backoffice.data.db import Database, Row
from svc_backoffice.domain.models.base import INT32, _storable
from svc_backoffice.domain.models.commerce import PaymentProviderCreate, PaymentProviderUpdate
from svc_backoffice.domain.rows import Table, insert_row, update_row

PROVIDER_COLUMNS = (
    "id, kind, display_name, enabled, public_config, webhook_secret_encrypted IS NOT NULL AS webhook_secret_set, "
    "created_at, updated_at"
)


def _purpose(kind: str) -> str:
    return sealing.purpose_of("payment_providers", "webhook_secret", kind)


# -- providers -----------------------------------------------------------------------------------------------
class Providers(Table[PaymentProviderCreate, PaymentProviderUpdate]):
    """Payment providers: the webhook secret sealed at rest and write-only, the public settings kept as JSON."""

    def create(self, db: Database, body: PaymentProviderCreate) -> Row:
        fields = sealing.stored_fields(
            self.name, body.model_dump(), body.kind, write_only="webhook_secret", json_field="public_config"
        )
        return insert_row(db, self.name, fields, self.columns)

    def update(self, db: Database, row_id: str, body: PaymentProviderUpdate) -> Row:
        changes = sealing.sealed_changes(
            db, self.name, row_id, body, write_only="webhook_secret", json_field="public_config"
        )
        return update_row(db, self.name, row_id, changes, self.columns)


PROVIDERS = Providers(
    "payment_providers", PROVIDER_COLUMNS, PaymentProviderCreate, PaymentProviderUpdate, order="kind"
)
list_providers, get_provider, create_provider = PROVIDERS.all, PROVIDERS.read, PROVIDERS.create
update_provider, delete_provider = PROVIDERS.update, PROVIDERS.delete


# -- webhook signatures --------------------------------------------------------------------------------------

Headers = Mapping[str, str]


def _hmac(secret: str, message: bytes, digest: str = "sha256") -> bytes:
    return hmac.new(secret.encode(), message, digest).digest()


def _fresh(timestamp: str, tolerance: int, now: float) -> bool:
    try:
        t = int(timestamp)
    except ValueError:
        return False
    return abs(now - t) <= tolerance


def _verify_card(headers: Headers, body: bytes, secret: str, tolerance: int, now: float) -> None:
    """`card-signature: t=<unix>,v1=<hex>[,v1=...]`, HMAC-SHA256 over `{t}.{raw body}` (Stripe's scheme;
    Stripe itself names the header `Stripe-Signature`, which receive_webhook reads as this one)."""
    header = headers.get("card-signature")
    if not header:
        raise WebhookRejected(say("webhook.missing_signature"))
    pairs = [part.split("=", 1) for part in header.split(",") if "=" in part]
    stamps = [v.strip() for k, v in pairs if k.strip() == "t"]
    candidates = [v.strip() for k, v in pairs if k.strip() == "v1"]
    if len(stamps) != 1 or not candidates or not _fresh(stamps[0], tolerance, now):
        raise WebhookRejected(say("webhook.signature_failed"))
    expected = _hmac(secret, stamps[0].encode() + b"." + body).hex()
    if not any(hmac.compare_digest(expected, c) for c in candidates):
        raise WebhookRejected(say("webhook.signature_failed"))


def _verify_wallet_a(headers: Headers, body: bytes, secret: str, tolerance: int, now: float) -> None:
    """`wallet-a-timestamp: <unix>` and `wallet-a-signature: sha256=<hex>` over `{timestamp}:{raw body}`."""
    signature, stamp = headers.get("wallet-a-signature"), headers.get("wallet-a-timestamp")
    if not signature or not stamp:
        raise WebhookRejected(say("webhook.missing_signature"))
    if not signature.startswith("sha256=") or not _fresh(stamp, tolerance, now):
        raise WebhookRejected(say("webhook.signature_failed"))
    expected = _hmac(secret, stamp.encode() + b":" + body).hex()
    if not hmac.compare_digest(expected, signature.removeprefix("sha256=")):
        raise WebhookRejected(say("webhook.signature_failed"))


def _verify_wallet_b(headers: Headers, body: bytes, secret: str, tolerance: int, now: float) -> None:
    """`wallet-b-signature: <base64 HMAC-SHA256 of the raw body>`; replays are absorbed by the event id."""
    signature = headers.get("wallet-b-signature")
    if not signature:
        raise WebhookRejected(say("webhook.missing_signature"))
    try:
        given = base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        raise WebhookRejected(say("webhook.signature_failed")) from None
    if not hmac.compare_digest(_hmac(secret, body), given):
        raise WebhookRejected(say("webhook.signature_failed"))


def _verify_mobile_money(headers: Headers, body: bytes, secret: str, tolerance: int, now: float) -> None:
    """`mobile-money-signature: <hex HMAC-SHA512 of the raw body>` (Paystack's shape)."""
    signature = headers.get("mobile-money-signature")
    if not signature:
        raise WebhookRejected(say("webhook.missing_signature"))
    if not hmac.compare_digest(_hmac(secret, body, "sha512").hex(), signature.strip().lower()):
        raise WebhookRejected(say("webhook.signature_failed"))


# -- webhook payloads ----------------------------------------------------------------------------------------
def _dig(payload: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(payload, dict):
            return None
        payload = payload.get(key)
    return payload


@dataclass(frozen=True)
class Scheme:
    verify: Callable[[Headers, bytes, str, int, float], None]
    headers: tuple[str, ...]  # signature headers that must be present
    external_id: tuple[str, ...]
    kind: tuple[str, ...]
    amount: tuple[str, ...]
    order_id: tuple[str, ...]
    paid_kinds: frozenset[str]
    # Events saying a checkout was abandoned: its still-pending order is cancelled (its stock released).
    abandoned_kinds: frozenset[str] = frozenset()
    amount_alt: tuple[str, ...] = ()  # where the amount is when `amount` has none (a Checkout Session)


SCHEMES: dict[str, Scheme] = {
    "card": Scheme(
        _verify_card,
        ("card-signature",),
        ("id",),
        ("type",),
        ("data", "object", "amount"),
        ("data", "object", "metadata", "order_id"),
        frozenset({"payment_intent.succeeded", "checkout.session.completed", "charge.succeeded"}),
        frozenset({"checkout.session.expired"}),
        ("data", "object", "amount_total"),
    ),
    "wallet-a": Scheme(
        _verify_wallet_a,
        ("wallet-a-signature", "wallet-a-timestamp"),
        ("event_id",),
        ("event_type",),
        ("resource", "amount_cents"),
        ("resource", "order_id"),
        frozenset({"PAYMENT.CAPTURE.COMPLETED"}),
    ),
    "wallet-b": Scheme(
        _verify_wallet_b,
        ("wallet-b-signature",),
        ("id",),
        ("type",),
        ("amount_cents",),
        ("order_id",),
        frozenset({"payment.completed"}),
    ),
    "mobile-money": Scheme(
        _verify_mobile_money,
        ("mobile-money-signature",),
        ("data", "reference"),
        ("event",),
        ("data", "amount"),
        ("data", "metadata", "order_id"),
        frozenset({"charge.success"}),
    ),
}


@dataclass(frozen=True)
class Delivery:
    """A webhook call as received: lower-cased headers and the exact bytes of the body."""

    headers: dict[str, str]
    body: bytes


def _webhook_secret(db: Database, kind: str) -> tuple[str | None, str]:
    """The enabled provider of `kind` and its webhook secret; (None, a random secret no signature can match)
    when there is none or its stored secret no longer opens (key rotated without re-entering it). The caller
    runs every check as for a configured provider, so the answer never tells whether payments are set up."""
    row = db.one(
        "SELECT id, webhook_secret_encrypted FROM payment_providers WHERE kind = %s AND enabled "
        "AND webhook_secret_encrypted IS NOT NULL",
        (kind,),
    )
    if row is not None:
        try:
            return str(row["id"]), sealing.unseal(row["webhook_secret_encrypted"], _purpose(kind))
        except sealing.SealError:
            pass
    return None, secrets.token_hex(32)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _event_fields(scheme: Scheme, payload: Any) -> dict[str, Any]:
    external_id, kind = _dig(payload, *scheme.external_id), _dig(payload, *scheme.kind)
    if not isinstance(external_id, str) or not 1 <= len(external_id) <= 200:
        raise WebhookRejected(say("webhook.invalid_payload"))
    if not isinstance(kind, str) or not 1 <= len(kind) <= 120:
        raise WebhookRejected(say("webhook.invalid_payload"))
    amount = _dig(payload, *scheme.amount)
    if amount is None and scheme.amount_alt:
        amount = _dig(payload, *scheme.amount_alt)
    if isinstance(amount, bool) or not isinstance(amount, int) or not -INT32 <= amount <= INT32:
        amount = None
    order_id = _dig(payload, *scheme.order_id)
    try:
        order_id = str(uuid.UUID(order_id)) if isinstance(order_id, str) else None
    except ValueError:
        order_id = None
    return {"external_id": external_id, "kind": kind, "amount": amount, "order_id": order_id}


def receive_webhook(
    db: Database,
    provider_kind: str,
    delivery: Delivery,
    *,
    max_bytes: int,
    tolerance: int,
    now: float | None = None,
) -> dict[str, Any]:
    """Authenticate and record one webhook event. Raises WebhookRejected (400) before anything is written,
    with the same answer whether or not a provider of that kind is configured (unconfigured, the signature
    never holds); a redelivered event is acknowledged and not recorded again."""
    scheme = SCHEMES[provider_kind]
    if provider_kind == "card" and "stripe-signature" in delivery.headers:
        delivery = Delivery(
            {"card-signature": delivery.headers["stripe-signature"], **delivery.headers}, delivery.body
        )
    provider_id, secret = _webhook_secret(db, provider_kind)
    if not all(delivery.headers.get(name) for name in scheme.headers):
        raise WebhookRejected(say("webhook.missing_signature"))
    if len(delivery.body) > max_bytes:
        raise WebhookRejected(say("webhook.payload_too_large"))
    content_type = delivery.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise WebhookRejected(say("webhook.unsupported_media_type"))
    signed_at = time.time() if now is None else now
    scheme.verify(delivery.headers, delivery.body, secret, tolerance, signed_at)
    if provider_id is None:  # a random secret matched: it cannot, but nothing unconfigured gets further
        raise WebhookRejected(say("webhook.signature_failed"))
    try:
        payload = _storable(json.loads(delivery.body, parse_constant=_no_constant))
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise WebhookRejected(say("webhook.invalid_payload")) from None
    fields = _event_fields(scheme, payload)
    recorded = db.one(
        "INSERT INTO payment_events (provider_id, external_id, kind, order_id, amount_cents, payload) "
        "VALUES (%s, %s, %s, (SELECT id FROM orders WHERE id = %s::uuid), %s, %s) "
        "ON CONFLICT (provider_id, external_id) DO NOTHING RETURNING id, order_id",
        (
            provider_id,
            fields["external_id"],
            fields["kind"],
            fields["order_id"],
            fields["amount"],
            Jsonb(payload),
        ),
    )
    if recorded is None:
        return {"ok": True, "duplicate": True, "event": fields["external_id"]}
    if recorded["order_id"] and fields["kind"] in scheme.paid_kinds:
        # A successful payment of the order's total moves a pending order to paid; any other status (or an
        # amount that is not the order's) is left to staff.
        db.all(
            "SELECT order_transition(id, 'paid') FROM orders WHERE id = %s AND status = 'pending' "
            "AND (%s::integer IS NULL OR total_cents = %s::integer)",
            (recorded["order_id"], fields["amount"], fields["amount"]),
        )
    elif recorded["order_id"] and fields["kind"] in scheme.abandoned_kinds:
        db.all(
            "SELECT order_transition(id, 'cancelled') FROM orders WHERE id = %s AND status = 'pending'",
            (recorded["order_id"],),
        )
    return {"ok": True, "duplicate": False, "event": fields["external_id"], "id": recorded["id"]}
