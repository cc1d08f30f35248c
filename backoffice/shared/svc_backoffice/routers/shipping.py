"""Shipping and payments routes: zones, methods, carriers, payment providers and the signed webhooks."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.core.config import get_settings
from svc_backoffice.data.db import database
from svc_backoffice.domain import payments, shipping
from svc_backoffice.edge.api_router import ApiRouter
from svc_backoffice.edge.requests import lower_headers, raw_body
from svc_backoffice.edge.web import json_response
from svc_backoffice.routers import card

zones = ApiRouter("/api/shipping/zones", reader="viewer", writer="admin")
zones.lists(shipping.list_zones, summary="Shipping zones with their methods")
zones.creates(shipping.create_zone, body="ShippingZoneCreate", also="409", summary="Create a shipping zone")
zones.updates(shipping.update_zone, body="ShippingZoneUpdate", also="409", summary="Update a shipping zone")
zones.deletes(shipping.delete_zone, summary="Delete a shipping zone and its methods")

methods = ApiRouter("/api/shipping/methods", reader="viewer", writer="admin")
methods.lists(shipping.list_methods, summary="Shipping methods")
methods.creates(
    shipping.create_method,
    body="ShippingMethodCreate",
    also="409 422",
    summary="Create a shipping method in a zone",
)
methods.updates(
    shipping.update_method, body="ShippingMethodUpdate", also="409 422", summary="Update a shipping method"
)
methods.deletes(shipping.delete_method, summary="Delete a shipping method")

carriers = ApiRouter("/api/shipping/carriers", reader="viewer", writer="admin")
carriers.lists(shipping.list_carriers, summary="Shipping carriers")
carriers.creates(shipping.create_carrier, body="CarrierCreate", also="409", summary="Create a carrier")
carriers.updates(shipping.update_carrier, body="CarrierUpdate", also="409", summary="Update a carrier")
carriers.deletes(shipping.delete_carrier, summary="Delete a carrier (methods keep no carrier)")

providers = ApiRouter("/api/payments/providers", reader="admin", writer="admin")
providers.lists(payments.list_providers, summary="Payment providers (webhook_secret is write-only)")
providers.creates(
    payments.create_provider,
    body="PaymentProviderCreate",
    also="409",
    summary="Configure a payment provider; webhook_secret is stored encrypted",
)
providers.updates(
    payments.update_provider,
    body="PaymentProviderUpdate",
    summary="Update a payment provider or replace its webhook secret",
)
providers.deletes(payments.delete_provider, summary="Remove a payment provider")


# No role gate on these four (their table rows have no role): each authenticates by its signature scheme.
webhooks = ApiRouter("/api/payments/webhooks")


def _webhook(kind: str, summary: str) -> None:
    """POST /api/payments/webhooks/<kind>: the delivery verified by `kind`'s signature scheme, then applied."""

    @webhooks.api("POST", f"/{kind}", role=None, answers="200 400 500", summary=summary)
    def receive() -> Response:
        settings = get_settings()
        delivery = payments.Delivery(headers=lower_headers(webhooks), body=raw_body(webhooks))
        result = payments.receive_webhook(
            database(),
            kind,
            delivery,
            max_bytes=settings.webhook_max_bytes,
            tolerance=settings.webhook_tolerance_seconds,
        )
        return json_response(200, result)


_webhook("card", "Card provider webhook: `card-signature: t=..,v1=..` over `{t}.{raw body}`")
_webhook("wallet-a", "Wallet A webhook: `wallet-a-signature: sha256=..` over `{timestamp}:{raw body}`")
_webhook("wallet-b", "Wallet B webhook: `wallet-b-signature`, base64 HMAC-SHA256 of the raw body")
_webhook("mobile-money", "Mobile-money webhook: `mobile-money-signature`, hex HMAC-SHA512 of the raw body")


ROUTERS = (zones, methods, carriers, providers, webhooks, *card.ROUTERS)
