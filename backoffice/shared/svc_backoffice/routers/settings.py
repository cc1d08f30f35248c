"""Store settings and staff management (owner-only rules live in store.py)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice import store
from svc_backoffice.db import database
from svc_backoffice.models import SettingsUpdate, StaffCreate, StaffDelete, StaffUpdate
from svc_backoffice.web import ApiRouter, body, json_response

settings = ApiRouter("/api/settings")


@settings.api("GET")
def get_settings() -> Response:
    return json_response(200, store.get_settings_row(database()))


@settings.api("PATCH")
def update_settings() -> Response:
    return json_response(200, store.update_settings(database(), body(settings, SettingsUpdate)))


staff = ApiRouter("/api/staff")


@staff.api("GET")
def list_staff() -> Response:
    return json_response(200, {"items": store.list_staff(database())})


@staff.api("POST")
def add_staff() -> Response:
    return json_response(201, store.add_staff(database(), staff.staff(), body(staff, StaffCreate)))


@staff.api("PATCH")
def update_staff() -> Response:
    return json_response(200, store.update_staff(database(), staff.staff(), body(staff, StaffUpdate)))


@staff.api("DELETE")
def remove_staff() -> Response:
    store.remove_staff(database(), staff.staff(), body(staff, StaffDelete))
    return json_response(200, {"ok": True})


ROUTERS = (settings, staff)
