"""Shipping and payments routes: zones, methods, carriers, payment providers and the signed webhooks."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice import payments, shipping
from svc_backoffice.config import get_settings
from svc_backoffice.db import database
from svc_backoffice.models import (
    CarrierCreate,
    CarrierUpdate,
    PaymentProviderCreate,
    PaymentProviderUpdate,
    ShippingMethodCreate,
    ShippingMethodUpdate,
    ShippingZoneCreate,
    ShippingZoneUpdate,
)
from svc_backoffice.web import ApiRouter, body, json_response, lower_headers, path_id, raw_body

OK = {"ok": True}

zones = ApiRouter("/api/shipping/zones")


@zones.api("GET")
def list_zones() -> Response:
    return json_response(200, {"items": shipping.list_zones(database())})


@zones.api("POST")
def create_zone() -> Response:
    return json_response(201, shipping.create_zone(database(), body(zones, ShippingZoneCreate)))


@zones.api("PATCH", "/<id>")
def update_zone(id: str) -> Response:
    zone_id = path_id(id)
    return json_response(200, shipping.update_zone(database(), zone_id, body(zones, ShippingZoneUpdate)))


@zones.api("DELETE", "/<id>")
def delete_zone(id: str) -> Response:
    shipping.delete_zone(database(), path_id(id))
    return json_response(200, OK)


methods = ApiRouter("/api/shipping/methods")


@methods.api("GET")
def list_methods() -> Response:
    return json_response(200, {"items": shipping.list_methods(database())})


@methods.api("POST")
def create_method() -> Response:
    return json_response(201, shipping.create_method(database(), body(methods, ShippingMethodCreate)))


@methods.api("PATCH", "/<id>")
def update_method(id: str) -> Response:
    method_id = path_id(id)
    return json_response(
        200, shipping.update_method(database(), method_id, body(methods, ShippingMethodUpdate))
    )


@methods.api("DELETE", "/<id>")
def delete_method(id: str) -> Response:
    shipping.delete_method(database(), path_id(id))
    return json_response(200, OK)


carriers = ApiRouter("/api/shipping/carriers")


@carriers.api("GET")
def list_carriers() -> Response:
    return json_response(200, {"items": shipping.list_carriers(database())})


@carriers.api("POST")
def create_carrier() -> Response:
    return json_response(201, shipping.create_carrier(database(), body(carriers, CarrierCreate)))


@carriers.api("PATCH", "/<id>")
def update_carrier(id: str) -> Response:
    carrier_id = path_id(id)
    return json_response(200, shipping.update_carrier(database(), carrier_id, body(carriers, CarrierUpdate)))


@carriers.api("DELETE", "/<id>")
def delete_carrier(id: str) -> Response:
    shipping.delete_carrier(database(), path_id(id))
    return json_response(200, OK)


providers = ApiRouter("/api/payments/providers")


@providers.api("GET")
def list_providers() -> Response:
    return json_response(200, {"items": payments.list_providers(database())})


@providers.api("POST")
def create_provider() -> Response:
    return json_response(201, payments.create_provider(database(), body(providers, PaymentProviderCreate)))


@providers.api("PATCH", "/<id>")
def update_provider(id: str) -> Response:
    provider_id = path_id(id)
    return json_response(
        200, payments.update_provider(database(), provider_id, body(providers, PaymentProviderUpdate))
    )


@providers.api("DELETE", "/<id>")
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


@webhooks.api("POST", "/card")
def card_webhook() -> Response:
    return _receive("card")


@webhooks.api("POST", "/wallet-a")
def wallet_a_webhook() -> Response:
    return _receive("wallet-a")


@webhooks.api("POST", "/wallet-b")
def wallet_b_webhook() -> Response:
    return _receive("wallet-b")


@webhooks.api("POST", "/mobile-money")
def mobile_money_webhook() -> Response:
    return _receive("mobile-money")


ROUTERS = (zones, methods, carriers, providers, webhooks)
