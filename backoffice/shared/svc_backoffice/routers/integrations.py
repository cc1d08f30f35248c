"""Integrations and the search-console connect flow (gsc/*: always dynamic, answered with no-store)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.core.config import get_settings
from svc_backoffice.data.db import database
from svc_backoffice.domain import integrations as logic
from svc_backoffice.edge.api_router import ApiRouter
from svc_backoffice.edge.web import json_response, redirect

integrations = ApiRouter("/api/integrations", reader="admin", writer="admin")
integrations.lists(logic.list_integrations, summary="Integrations (secrets are write-only)")
integrations.creates(
    logic.create_integration, body="IntegrationCreate", also="409", summary="Add an integration"
)
integrations.updates(logic.update_integration, body="IntegrationUpdate", summary="Update an integration")
integrations.deletes(logic.delete_integration, summary="Remove an integration")

gsc = ApiRouter("/api/gsc")


@gsc.api(
    "POST",
    "/connect",
    role="admin",
    answers="200 302 422 500",
    summary="Start the search-console OAuth flow (authorize URL with state and PKCE)",
)
def connect() -> Response:
    return json_response(200, logic.gsc_connect(database(), get_settings(), gsc.staff()))


@gsc.api(
    "GET",
    "/callback",
    role="admin",
    answers="302 400 500",
    summary="Search-console OAuth callback: exchange the code, store tokens encrypted",
)
def callback() -> Response:
    event = gsc.current_event
    target = logic.gsc_callback(
        database(),
        get_settings(),
        gsc.staff(),
        code=event.get_query_string_value("code"),
        state=event.get_query_string_value("state"),
        error=event.get_query_string_value("error"),
    )
    return redirect(target)


@gsc.api(
    "GET",
    "/status",
    role="admin",
    answers="200 302 500",
    summary="Search-console connection and verified sites",
)
def status() -> Response:
    return json_response(200, logic.gsc_status(database(), get_settings()))


@gsc.api(
    "POST",
    "/disconnect",
    role="admin",
    answers="200 302 500",
    summary="Revoke and forget the search-console tokens",
)
def disconnect() -> Response:
    return json_response(200, logic.gsc_disconnect(database(), get_settings()))


ROUTERS = (integrations, gsc)
