"""checkout adapter: hosted checkout sessions (Stripe shape) and webhook signature verification."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from svc_shared.providers.http import Provider

SIGNATURE_TOLERANCE = 300


class SignatureError(ValueError):
    """A webhook whose signature is missing, malformed, wrong or too old."""


@dataclass(frozen=True)
class CheckoutSession:
    id: str
    url: str  # the hosted page the payer opens
    expires_at: int | None


class Checkout(Provider):
    name = "checkout"

    def create_session(
        self,
        *,
        amount_cents: int,
        product_name: str,
        success_url: str,
        cancel_url: str,
        client_reference_id: str,
        metadata: dict[str, str],
        idempotency_key: str,
    ) -> CheckoutSession:
        form = {
            "mode": "payment",
            "line_items[0][price_data][currency]": "usd",
            "line_items[0][price_data][unit_amount]": str(amount_cents),
            "line_items[0][price_data][product_data][name]": product_name,
            "line_items[0][quantity]": "1",
            "success_url": success_url,
            "cancel_url": cancel_url,
            "client_reference_id": client_reference_id,
        }
        form.update({f"metadata[{k}]": v for k, v in metadata.items()})
        # The idempotency key makes a retried POST safe (Stripe replays the first answer).
        body = self.request(
            "POST",
            "/v1/checkout/sessions",
            data=form,
            retry=True,
            headers={"Idempotency-Key": idempotency_key},
        )
        return CheckoutSession(id=str(body["id"]), url=str(body["url"]), expires_at=body.get("expires_at"))


def sign_payload(payload: bytes, secret: str, timestamp: int) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def verify_signature(
    payload: bytes, header: str | None, secret: str, *, now: float, tolerance: int = SIGNATURE_TOLERANCE
) -> int:
    """Check a `t=...,v1=...` signature over the raw body; returns the signed timestamp."""
    if not header:
        raise SignatureError("missing signature")
    timestamp: int | None = None
    candidates: list[str] = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isdecimal():
            timestamp = int(value)
        elif key == "v1" and value:
            candidates.append(value)
    if timestamp is None or not candidates:
        raise SignatureError("malformed signature header")
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + payload, hashlib.sha256).hexdigest()
    if not any(hmac.compare_digest(expected, c) for c in candidates):
        raise SignatureError("signature does not match")
    if abs(now - timestamp) > tolerance:
        raise SignatureError("signature timestamp outside the tolerance")
    return timestamp
