"""Product attributes (material, size, colour...): the list, and one form to add, change and delete one (its
name, the kind of value it takes, the choices of a choice-kind attribute, its place in the list), behind the
roles of the API's /api/attributes routes. A product's form shows a field per attribute."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.admin.editing import Editor, Field
from svc_backoffice.admin.pages import router
from svc_backoffice.data.db import database
from svc_backoffice.domain import catalog

KINDS = (("text", "Text"), ("number", "Number"), ("boolean", "Yes or no"), ("select", "A choice"))


def _slug(fields: dict[str, str], data: dict[str, Any], errors: dict[str, str]) -> None:
    """An empty slug is made from the name (a new attribute) or kept as it is (an existing one)."""
    if "slug" in data and data["slug"] is None:
        del data["slug"]


ATTRIBUTES = Editor(
    records=catalog.ATTRIBUTES,
    path="/products/attributes",
    api="/api/attributes",
    noun="attribute",
    sections=(
        (
            "",
            (
                Field("name", "Name", attrs='maxlength="80"', hint="Like Material or Size"),
                Field(
                    "slug",
                    "Short name",
                    "optional",
                    hint="Small letters, digits and dashes; empty: made from the name",
                    attrs='maxlength="80"',
                ),
                Field("kind", "Kind of value", "select", options=KINDS),
                Field(
                    "options",
                    "Choices",
                    "words",
                    hint="For a choice: the values offered, separated by commas",
                ),
                Field("position", "Position", "number", hint="Lower comes first on a product's form"),
            ),
        ),
    ),
    adjust=_slug,
    defaults=lambda: {"kind": "text", "position": "0"},
    unique="slug",
    back="/products/attributes",
    removal="Every product's value of it is deleted with it.",
).declare()


@router.page("GET", "/products/attributes", api="GET /api/attributes")
def attribute_list() -> Response:
    kinds = dict(KINDS)
    return ATTRIBUTES.listed(
        catalog.list_attributes(database()),
        (
            ("Attribute", lambda a: str(a["name"])),
            ("Kind", lambda a: kinds.get(a["kind"]) or str(a["kind"])),
            ("Choices", lambda a: ", ".join(a["options"] or [])),
        ),
        title="Attributes",
        empty="An attribute is a property every product can have a value for, like Material or Size.",
    )
