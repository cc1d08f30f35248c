"""Integrations and the search-console connect flow (gsc/*: always dynamic, answered with no-store)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice import integrations as logic
from svc_backoffice.config import get_settings
from svc_backoffice.db import database
from svc_backoffice.models import IntegrationCreate, IntegrationUpdate
from svc_backoffice.web import ApiRouter, body, json_response, path_id, redirect

integrations = ApiRouter("/api/integrations")


@integrations.api("GET")
def list_integrations() -> Response:
    return json_response(200, {"items": logic.list_integrations(database())})


@integrations.api("POST")
def create_integration() -> Response:
    return json_response(201, logic.create_integration(database(), body(integrations, IntegrationCreate)))


@integrations.api("PATCH", "/<id>")
def update_integration(id: str) -> Response:
    integration_id = path_id(id)
    return json_response(
        200, logic.update_integration(database(), integration_id, body(integrations, IntegrationUpdate))
    )


@integrations.api("DELETE", "/<id>")
def delete_integration(id: str) -> Response:
    logic.delete_integration(database(), path_id(id))
    return json_response(200, {"ok": True})


gsc = ApiRouter("/api/gsc")


@gsc.api("POST", "/connect")
def connect() -> Response:
    return json_response(200, logic.gsc_connect(database(), get_settings(), gsc.staff()))


@gsc.api("GET", "/callback")
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


@gsc.api("GET", "/status")
def status() -> Response:
    return json_response(200, logic.gsc_status(database(), get_settings()))


@gsc.api("POST", "/disconnect")
def disconnect() -> Response:
    return json_response(200, logic.gsc_disconnect(database(), get_settings()))


ROUTERS = (integrations, gsc)
