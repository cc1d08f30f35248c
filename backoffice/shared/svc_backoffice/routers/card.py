"""The card provider's connect routes of the payments screen (admin): the authorization URL, and the
provider's redirect back that stores the connected account (domain/card_connect.py)."""

from __future__ import annotations

from svc_backoffice.domain import card_connect as connect
from svc_backoffice.edge.api_router import ApiRouter

card = ApiRouter("/api/payments/providers/card")
card.connects(
    connect.start,
    connect.finish,
    start_summary="Start connecting the card provider (Stripe Connect OAuth): the authorization URL",
    callback_summary="The card provider's redirect back: store the connected account and its webhook secret",
)

ROUTERS = (card,)
