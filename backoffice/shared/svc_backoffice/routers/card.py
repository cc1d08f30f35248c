"""The card provider's connect routes of the payments screen (admin): the authorization URL, and the
provider's redirect back that stores the connected account (domain/card_connect.py)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.data.db import database
from svc_backoffice.domain import card_connect as connect
from svc_backoffice.edge.api_router import ApiRouter
from svc_backoffice.edge.web import json_response, redirect

card = ApiRouter("/api/payments/providers/card")


@card.api(
    "POST",
    "/connect",
    role="admin",
    answers="200 302 422 500",
    summary="Start connecting the card provider (Stripe Connect OAuth): the authorization URL",
)
def card_connect() -> Response:
    return json_response(200, connect.start(database(), card.staff()))


@card.api(
    "GET",
    "/callback",
    role="admin",
    answers="302 400 500",
    summary="The card provider's redirect back: store the connected account and its webhook secret",
)
def card_callback() -> Response:
    event = card.current_event
    target = connect.finish(
        database(),
        card.staff(),
        code=event.get_query_string_value("code"),
        state=event.get_query_string_value("state"),
        error=event.get_query_string_value("error"),
    )
    return redirect(target)


ROUTERS = (card,)
