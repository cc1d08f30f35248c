"""Settings: the store (name, contact, currency, language, time zone, stock threshold, weight unit) and
staff (invite, change role, remove; only an owner grants or removes owner, as store.py rules)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.admin.forms import FormInvalid, converted, refused, validated, whole, written
from svc_backoffice.admin.pages import form, page, router, see_other, signed_in
from svc_backoffice.core.errors import Conflict, InvalidInput, Unprocessable
from svc_backoffice.data.db import database
from svc_backoffice.domain import store
from svc_backoffice.domain.models.content import SettingsUpdate, StaffCreate, StaffDelete, StaffUpdate
from svc_backoffice.edge.requests import path_id

ROLES = ("viewer", "editor", "admin", "owner")
STORE_FIELDS = (
    "store_name",
    "contact_email",
    "currency",
    "locale",
    "timezone",
    "low_stock_threshold",
    "weight_unit",
)


def _store_values(settings: dict[str, Any]) -> dict[str, str]:
    return {name: "" if settings[name] is None else str(settings[name]) for name in STORE_FIELDS}


@router.page("GET", "/settings")
def store_settings() -> Response:
    settings = store.get_settings_row(database())
    return page(
        "settings.html",
        nav="settings",
        tab="store",
        title="Settings",
        values=_store_values(settings),
    )


@router.page("POST", "/settings", api="PATCH /api/settings")
def save_store_settings() -> Response:
    fields = form()
    try:
        data, errors = converted(fields, {"low_stock_threshold": ("low_stock_threshold", whole)})
        data.update(
            {name: fields.get(name, "").strip() for name in STORE_FIELDS if name != "low_stock_threshold"}
        )
        data["contact_email"] = data["contact_email"] or None
        data["currency"] = data["currency"].upper()
        given = {k: v for k, v in data.items() if v is not None or k == "contact_email"}
        written(SettingsUpdate, given, store.update_settings, earlier=errors)
    except (FormInvalid, InvalidInput, Unprocessable) as exc:
        found = refused(exc)
        return page(
            "settings.html",
            400,
            nav="settings",
            tab="store",
            title="Settings",
            values=fields,
            errors=found.fields,
            form_error=found.form,
        )
    return see_other("/settings", notice="saved")


def _staff_page(status: int = 200, **context: Any) -> Response:
    return page(
        "team.html",
        status,
        nav="settings",
        tab="staff",
        title="Staff",
        members=store.list_staff(database()),
        roles=ROLES,
        **{"values": {"invite_role": "viewer"}, **context},
    )


@router.page("GET", "/settings/staff", api="GET /api/staff")
def staff_list() -> Response:
    return _staff_page()


@router.page("POST", "/settings/staff", api="POST /api/staff")
def invite() -> Response:
    fields = form()
    actor = signed_in()
    try:
        written(
            StaffCreate,
            {
                "email": fields.get("invite_email", "").strip(),
                "name": fields.get("invite_name", "").strip(),
                "role": fields.get("invite_role", ""),
            },
            lambda db, body: store.add_staff(db, actor, body),
            {"email": "invite_email", "name": "invite_name", "role": "invite_role"},
        )
    except FormInvalid as exc:
        return _staff_page(400, errors=exc.fields, values=fields, form_error=exc.form)
    except Conflict as exc:
        return _staff_page(409, errors={"invite_email": exc.message}, values=fields, form_error=exc.message)
    return see_other("/settings/staff", notice="invited")


@router.page("POST", "/settings/staff/<id>/role", api="PATCH /api/staff")
def change_role(id: str) -> Response:
    actor = signed_in()
    try:
        body = validated(StaffUpdate, {"id": path_id(id), "role": form().get("role", "")})
    except FormInvalid as exc:
        return _staff_page(400, form_error=exc.fields.get("role") or exc.form)
    store.update_staff(database(), actor, body)
    return see_other("/settings/staff", notice="role_changed")


@router.page("POST", "/settings/staff/<id>/remove", api="DELETE /api/staff")
def remove(id: str) -> Response:
    actor = signed_in()
    store.remove_staff(database(), actor, StaffDelete(id=path_id(id)))  # type: ignore[arg-type]
    return see_other("/settings/staff", notice="removed")
