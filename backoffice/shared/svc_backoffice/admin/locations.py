"""Settings > Stock locations: the places stock is kept (a warehouse, a shop), the default one where stock
goes when no location is named, each added, changed and deleted (when empty and not the default) by one form
behind the roles of the API's /api/inventory/locations routes (an admin or owner changes them)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.admin.editing import Editor, Field
from svc_backoffice.admin.pages import router
from svc_backoffice.data.db import database
from svc_backoffice.domain import store


def _code(fields: dict[str, str], data: dict[str, Any], errors: dict[str, str]) -> None:
    if isinstance(data.get("code"), str):
        data["code"] = data["code"].upper()


LOCATIONS = Editor(
    records=store.LOCATIONS,
    path="/settings/locations",
    api="/api/inventory/locations",
    noun="stock location",
    sections=(
        (
            "",
            (
                Field("name", "Name", attrs='maxlength="120"', hint="Like Main warehouse"),
                Field("code", "Code", attrs='maxlength="32"', hint="Capitals, digits, - and _; like WH-1"),
                Field("address", "Address", "long", attrs='maxlength="500" rows="3"'),
                Field("is_default", "Default location (stock goes here when none is named)", "check"),
                Field("active", "In use", "check"),
            ),
        ),
    ),
    adjust=_code,
    defaults=lambda: {"active": "on"},
    unique="code",
    removal="Only an empty location that is not the default can be deleted.",
).declare()


@router.page("GET", "/settings/locations", api="GET /api/inventory/locations")
def location_list() -> Response:
    return LOCATIONS.listed(
        store.list_locations(database()),
        (
            ("Location", lambda loc: str(loc["name"])),
            ("Code", lambda loc: str(loc["code"])),
            (
                "State",
                lambda loc: (
                    ("Default · " if loc["is_default"] else "")
                    + ("In use" if loc["active"] else "Not in use")
                ),
            ),
        ),
        title="Stock locations",
        empty="Stock is kept at the default location until you add others, like a second warehouse or a shop.",
    )
