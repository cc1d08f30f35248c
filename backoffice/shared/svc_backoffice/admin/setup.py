"""Settings that connect the store to others: payments (the card provider connected through its own
authorization page; each provider's webhook signing secret set or replaced, never shown back), integrations
(their write-only secrets and settings) with the Google Search Console connection, and the search page
behind the command palette."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from aws_lambda_powertools.event_handler import Response
from pydantic import ValidationError

from svc_backoffice.admin import render
from svc_backoffice.admin.editing import Editor, Field
from svc_backoffice.admin.pages import current_query, page, router, see_other, signed_in
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.config import get_settings
from svc_backoffice.data.db import database
from svc_backoffice.domain import integrations, payments, store
from svc_backoffice.domain.models.content import SearchQuery

PAYMENTS, INTEGRATIONS = "/settings/payments", "/settings/integrations"
PROVIDER_KINDS = (
    ("card", "Card (Stripe)"),
    ("wallet-a", "Wallet A"),
    ("wallet-b", "Wallet B"),
    ("mobile-money", "Mobile money"),
)
STATUSES = (
    ("disconnected", "Disconnected"),
    ("pending", "Pending"),
    ("connected", "Connected"),
    ("error", "Error"),
)


@router.page("GET", PAYMENTS, api="GET /api/payments/providers")
def payment_settings() -> Response:
    providers = payments.list_providers(database())
    card = next((p for p in providers if p["kind"] == "card"), None)
    returned = _returned("card")
    return page(
        "payments.html",
        nav="settings",
        tab="payments",
        title="Payments",
        providers=providers,
        card=card,
        said=returned["said"],
        failed=returned["failed"],
    )


def _returned(name: str) -> dict[str, Any]:
    """What a provider's return to this page says (`?card=connected`, `?gsc=error&reason=...`), in words."""
    query = current_query()
    result = query.get(name, "")
    connected, failed = RETURNS[name]
    said = None
    if result == "connected":
        said = say(connected)
    elif result == "error":
        said = say(failed, reason=query.get("reason", "")[:100] or "no reason given")
    return {"said": said, "failed": result == "error"}


# What each provider's return says: connected, or failed with its reason.
RETURNS = {
    "card": ("admin.card_connected", "admin.card_failed"),
    "gsc": ("admin.gsc_connected", "admin.gsc_failed"),
}


PROVIDERS = Editor(
    records=payments.PROVIDERS,
    path=f"{PAYMENTS}/providers",
    api="/api/payments/providers",
    noun="payment provider",
    back=PAYMENTS,
    sections=(
        (
            "",
            (
                Field("kind", "Kind", "select", options=PROVIDER_KINDS, fixed=True),
                Field("display_name", "Name shown to customers", attrs='maxlength="120"'),
                Field("enabled", "Take payments with it", "check"),
            ),
        ),
        (
            "Webhook",
            (
                Field(
                    "webhook_secret",
                    "Webhook signing secret",
                    "secret",
                    hint="From the provider's dashboard; at least 16 characters",
                    attrs='maxlength="500"',
                ),
            ),
        ),
        ("Public settings", (Field("public_config", "One a line, like name = value", "lines"),)),
    ),
    title=lambda provider: str(provider["display_name"]),
    defaults=lambda: {"kind": "wallet-a"},
    removal="Customers can no longer pay with it, and its webhook secret is forgotten.",
    unique="kind",
).declare()


def _gsc() -> dict[str, Any]:
    """The search-console card: whether this backoffice can connect one, its state, and what the provider's
    return (`?gsc=connected` or `?gsc=error&reason=...`) says."""
    configured = bool(get_settings().gsc_client_id)
    state = integrations.gsc_status(database()) if configured else None
    return {"configured": configured, "state": state, **_returned("gsc")}


def _integrations(status: int = 200, **context: Any) -> Response:
    answer = page(
        "integrations.html",
        status,
        nav="settings",
        tab="integrations",
        title="Integrations",
        items=[i for i in integrations.list_integrations(database()) if i["kind"] != integrations.GSC],
        gsc={**_gsc(), **context},
    )
    # The Connect form posts here and is sent on to the provider's consent page: a browser holds that
    # redirect to the page's form-action, so the provider's origin is named there (and nowhere else).
    consent = urlsplit(integrations.GscEndpoints.of(get_settings()).authorize)
    policy = render.CSP.replace(
        "form-action 'self'", f"form-action 'self' {consent.scheme}://{consent.netloc}"
    )
    answer.headers["Content-Security-Policy"] = policy
    return answer


@router.page("GET", INTEGRATIONS, api="GET /api/integrations")
def integration_settings() -> Response:
    return _integrations()


@router.page("POST", f"{INTEGRATIONS}/gsc/connect", api="POST /api/gsc/connect")
def connect_search_console() -> Response:
    """To the provider's consent page; it sends the browser back to /api/gsc/callback, then here."""
    staff = signed_in()
    try:
        started = integrations.gsc_connect(database(), staff)
    except integrations.GscNotConfigured as exc:
        return _integrations(422, said=exc.message, failed=True)
    return Response(
        status_code=303, headers={"Location": started["authorize_url"], "Cache-Control": "no-store"}
    )


@router.page("POST", f"{INTEGRATIONS}/gsc/disconnect", api="POST /api/gsc/disconnect")
def disconnect_search_console() -> Response:
    integrations.gsc_disconnect(database())
    return see_other(INTEGRATIONS, notice="disconnected")


INTEGRATION_FORM = Editor(
    records=integrations.INTEGRATIONS,
    path=INTEGRATIONS,
    api="/api/integrations",
    noun="integration",
    sections=(
        (
            "",
            (
                Field(
                    "kind",
                    "Service",
                    hint="Its short name: small letters, digits, - and _; like mailer",
                    attrs='maxlength="40"',
                    fixed=True,
                ),
                Field("status", "State", "select", options=STATUSES),
                Field("secret", "Secret (API key or token)", "secret", attrs='maxlength="4000"'),
            ),
        ),
        ("Settings", (Field("config", "One a line, like name = value", "lines"),)),
    ),
    title=lambda item: str(item["kind"]),
    defaults=lambda: {"status": "disconnected"},
    removal="Its secret and settings are forgotten.",
    unique="kind",
).declare()


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
