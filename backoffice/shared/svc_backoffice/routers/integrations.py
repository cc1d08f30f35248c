"""Integrations and the search-console connect flow (gsc/*: always dynamic, answered with no-store)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice import integrations as logic
from svc_backoffice.config import get_settings
from svc_backoffice.db import database
from svc_backoffice.web import ApiRouter, body, json_response, path_id, redirect

integrations = ApiRouter("/api/integrations")


@integrations.api(
    "GET",
    role="admin",
    answers="200 302 500",
    summary="Integrations (secrets are write-only)",
)
def list_integrations() -> Response:
    return json_response(200, {"items": logic.list_integrations(database())})


@integrations.api(
    "POST",
    role="admin",
    body="IntegrationCreate",
    answers="201 302 400 409 500",
    summary="Add an integration",
)
def create_integration() -> Response:
    return json_response(201, logic.create_integration(database(), body(integrations)))


@integrations.api(
    "PATCH",
    "/<id>",
    role="admin",
    body="IntegrationUpdate",
    answers="200 302 400 404 500",
    summary="Update an integration",
)
def update_integration(id: str) -> Response:
    integration_id = path_id(id)
    return json_response(200, logic.update_integration(database(), integration_id, body(integrations)))


@integrations.api(
    "DELETE",
    "/<id>",
    role="admin",
    answers="200 302 404 500",
    summary="Remove an integration",
)
def delete_integration(id: str) -> Response:
    logic.delete_integration(database(), path_id(id))
    return json_response(200, {"ok": True})


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
