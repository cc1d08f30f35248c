"""Store settings and staff management (owner-only rules live in store.py)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.data.db import database
from svc_backoffice.domain import store
from svc_backoffice.edge.api_router import ApiRouter
from svc_backoffice.edge.requests import body
from svc_backoffice.edge.web import OK, json_response

settings = ApiRouter("/api/settings")
settings.serves(
    "GET", "/", store.get_settings_row, role="viewer", answers="200 302 500", summary="Store settings"
)


@settings.api(
    "PATCH",
    role="admin",
    body="SettingsUpdate",
    answers="200 302 400 422 500",
    summary="Update store settings",
)
def update_settings() -> Response:
    return json_response(200, store.update_settings(database(), body(settings)))


staff = ApiRouter("/api/staff", reader="admin")
staff.lists(
    store.list_staff, summary="Staff members and invitations, with their roles and status (invited or active)"
)


@staff.api(
    "POST",
    role="admin",
    body="StaffCreate",
    answers="201 302 400 403 409 500",
    summary="Invite a person by email with a role; they join through the platform's sign-in link (only an owner grants owner)",
)
def add_staff() -> Response:
    return json_response(201, store.add_staff(database(), staff.staff(), body(staff)))


@staff.api(
    "PATCH",
    role="admin",
    body="StaffUpdate",
    answers="200 302 400 403 404 409 500",
    summary="Change a staff member's role or name (only an owner grants owner)",
)
def update_staff() -> Response:
    return json_response(200, store.update_staff(database(), staff.staff(), body(staff)))


@staff.api(
    "DELETE",
    role="admin",
    body="StaffDelete",
    answers="200 302 400 403 404 409 500",
    summary="Remove a staff member or withdraw an invitation (only an owner removes an owner; the last owner stays)",
)
def remove_staff() -> Response:
    store.remove_staff(database(), staff.staff(), body(staff))
    return json_response(200, OK)


ROUTERS = (settings, staff)
