"""Settings that connect the store to others: payments (the card provider connected through its own
authorization page; webhook secrets are write-only and never shown), shipping zones, methods and carriers,
integrations and the search console; and the search page behind the command palette."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from pydantic import ValidationError

from svc_backoffice.admin.pages import current_query, page, router
from svc_backoffice.data.db import database
from svc_backoffice.domain import integrations, payments, shipping, store
from svc_backoffice.domain.models.content import SearchQuery


@router.page("GET", "/settings/payments", api="GET /api/payments/providers")
def payment_settings() -> Response:
    providers = payments.list_providers(database())
    card = next((p for p in providers if p["kind"] == "card"), None)
    return page(
        "payments.html", nav="settings", tab="payments", title="Payments", providers=providers, card=card
    )


@router.page("GET", "/settings/shipping")
def shipping_settings() -> Response:
    db = database()
    return page(
        "shipping.html",
        nav="settings",
        tab="shipping",
        title="Shipping",
        zones=shipping.list_zones(db),
        carriers=shipping.list_carriers(db),
    )


@router.page("GET", "/settings/integrations", api="GET /api/integrations")
def integration_settings() -> Response:
    return page(
        "integrations.html",
        nav="settings",
        tab="integrations",
        title="Integrations",
        items=integrations.list_integrations(database()),
    )


@router.page("GET", "/search")
def search() -> Response:
    """The palette's results as a page (without script, the top bar's search form lands here)."""
    typed = current_query().get("q", "").strip()
    hits: list[dict[str, object]] = []
    if typed:
        try:
            hits = store.search(database(), SearchQuery.model_validate({"q": typed, "limit": "10"}))[
                "results"
            ]
        except ValidationError:
            hits = []
    return page("search.html", title="Search", typed=typed, hits=hits)
