"""Shipping and payments routes: zones, methods, carriers, payment providers and the signed webhooks."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice import payments, shipping
from svc_backoffice.config import get_settings
from svc_backoffice.db import database
from svc_backoffice.web import ApiRouter, body, json_response, lower_headers, path_id, raw_body

OK = {"ok": True}

zones = ApiRouter("/api/shipping/zones")


@zones.api(
    "GET",
    role="viewer",
    answers="200 302 500",
    summary="Shipping zones with their methods",
)
def list_zones() -> Response:
    return json_response(200, {"items": shipping.list_zones(database())})


@zones.api(
    "POST",
    role="admin",
    body="ShippingZoneCreate",
    answers="201 302 400 409 500",
    summary="Create a shipping zone",
)
def create_zone() -> Response:
    return json_response(201, shipping.create_zone(database(), body(zones)))


@zones.api(
    "PATCH",
    "/<id>",
    role="admin",
    body="ShippingZoneUpdate",
    answers="200 302 400 404 409 500",
    summary="Update a shipping zone",
)
def update_zone(id: str) -> Response:
    zone_id = path_id(id)
    return json_response(200, shipping.update_zone(database(), zone_id, body(zones)))


@zones.api(
    "DELETE",
    "/<id>",
    role="admin",
    answers="200 302 404 500",
    summary="Delete a shipping zone and its methods",
)
def delete_zone(id: str) -> Response:
    shipping.delete_zone(database(), path_id(id))
    return json_response(200, OK)


methods = ApiRouter("/api/shipping/methods")


@methods.api(
    "GET",
    role="viewer",
    answers="200 302 500",
    summary="Shipping methods",
)
def list_methods() -> Response:
    return json_response(200, {"items": shipping.list_methods(database())})


@methods.api(
    "POST",
    role="admin",
    body="ShippingMethodCreate",
    answers="201 302 400 409 422 500",
    summary="Create a shipping method in a zone",
)
def create_method() -> Response:
    return json_response(201, shipping.create_method(database(), body(methods)))


@methods.api(
    "PATCH",
    "/<id>",
    role="admin",
    body="ShippingMethodUpdate",
    answers="200 302 400 404 409 422 500",
    summary="Update a shipping method",
)
def update_method(id: str) -> Response:
    method_id = path_id(id)
    return json_response(200, shipping.update_method(database(), method_id, body(methods)))


@methods.api(
    "DELETE",
    "/<id>",
    role="admin",
    answers="200 302 404 500",
    summary="Delete a shipping method",
)
def delete_method(id: str) -> Response:
    shipping.delete_method(database(), path_id(id))
    return json_response(200, OK)


carriers = ApiRouter("/api/shipping/carriers")


@carriers.api(
    "GET",
    role="viewer",
    answers="200 302 500",
    summary="Shipping carriers",
)
def list_carriers() -> Response:
    return json_response(200, {"items": shipping.list_carriers(database())})


@carriers.api(
    "POST",
    role="admin",
    body="CarrierCreate",
    answers="201 302 400 409 500",
    summary="Create a carrier",
)
def create_carrier() -> Response:
    return json_response(201, shipping.create_carrier(database(), body(carriers)))


@carriers.api(
    "PATCH",
    "/<id>",
    role="admin",
    body="CarrierUpdate",
    answers="200 302 400 404 409 500",
    summary="Update a carrier",
)
def update_carrier(id: str) -> Response:
    carrier_id = path_id(id)
    return json_response(200, shipping.update_carrier(database(), carrier_id, body(carriers)))


@carriers.api(
    "DELETE",
    "/<id>",
    role="admin",
    answers="200 302 404 500",
    summary="Delete a carrier (methods keep no carrier)",
)
def delete_carrier(id: str) -> Response:
    shipping.delete_carrier(database(), path_id(id))
    return json_response(200, OK)


providers = ApiRouter("/api/payments/providers")


@providers.api(
    "GET",
    role="admin",
    answers="200 302 500",
    summary="Payment providers (webhook_secret is write-only)",
)
def list_providers() -> Response:
    return json_response(200, {"items": payments.list_providers(database())})


@providers.api(
    "POST",
    role="admin",
    body="PaymentProviderCreate",
    answers="201 302 400 409 500",
    summary="Configure a payment provider; webhook_secret is stored encrypted",
)
def create_provider() -> Response:
    return json_response(201, payments.create_provider(database(), body(providers)))


@providers.api(
    "PATCH",
    "/<id>",
    role="admin",
    body="PaymentProviderUpdate",
    answers="200 302 400 404 500",
    summary="Update a payment provider or replace its webhook secret",
)
def update_provider(id: str) -> Response:
    provider_id = path_id(id)
    return json_response(200, payments.update_provider(database(), provider_id, body(providers)))


@providers.api(
    "DELETE",
    "/<id>",
    role="admin",
    answers="200 302 404 500",
    summary="Remove a payment provider",
)
def delete_provider(id: str) -> Response:
    payments.delete_provider(database(), path_id(id))
    return json_response(200, OK)


# No role gate on these four (their table rows have no role): each authenticates by its signature scheme.
webhooks = ApiRouter("/api/payments/webhooks")


def _receive(kind: str) -> Response:
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


@webhooks.api(
    "POST",
    "/card",
    role=None,
    answers="200 400 401 500",
    summary="Card provider webhook: `card-signature: t=..,v1=..` over `{t}.{raw body}`",
)
def card_webhook() -> Response:
    return _receive("card")


@webhooks.api(
    "POST",
    "/wallet-a",
    role=None,
    answers="200 400 401 500",
    summary="Wallet A webhook: `wallet-a-signature: sha256=..` over `{timestamp}:{raw body}`",
)
def wallet_a_webhook() -> Response:
    return _receive("wallet-a")


@webhooks.api(
    "POST",
    "/wallet-b",
    role=None,
    answers="200 400 401 500",
    summary="Wallet B webhook: `wallet-b-signature`, base64 HMAC-SHA256 of the raw body",
)
def wallet_b_webhook() -> Response:
    return _receive("wallet-b")


@webhooks.api(
    "POST",
    "/mobile-money",
    role=None,
    answers="200 400 401 500",
    summary="Mobile-money webhook: `mobile-money-signature`, hex HMAC-SHA512 of the raw body",
)
def mobile_money_webhook() -> Response:
    return _receive("mobile-money")


ROUTERS = (zones, methods, carriers, providers, webhooks)
