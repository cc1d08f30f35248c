"""Customers: the list with search and paging, a customer with their orders, and one form to add and edit a
customer (contact, marketing consent, note and addresses) behind the roles of the API's customer routes."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from pydantic import ValidationError

from svc_backoffice.admin.editing import Editor, Field, Records
from svc_backoffice.admin.pages import current_query, page, router
from svc_backoffice.core.catalogue import say
from svc_backoffice.data.db import Row, database
from svc_backoffice.domain import commerce
from svc_backoffice.domain.models.commerce import CustomerCreate, CustomerListQuery, CustomerUpdate
from svc_backoffice.edge.requests import path_id

PAGE_SIZE = 25
ADDRESS_FIELDS = ("name", "line1", "line2", "postal_code", "city", "region", "country", "phone")
MAX_ADDRESSES = 20  # CustomerCreate's limit


@router.page("GET", "/customers")
def customer_list() -> Response:
    query = current_query()
    filters = {"q": query["q"].strip()} if query.get("q", "").strip() else {}
    problem = None
    try:
        offset = max(int(query.get("offset", "0") or 0), 0)
        params = {**filters, "offset": str(offset), "limit": str(PAGE_SIZE)}
        found = commerce.list_customers(database(), CustomerListQuery.model_validate(params))
    except (ValueError, ValidationError):
        problem, filters = say("admin.bad_filters"), {}
        found = commerce.list_customers(
            database(), CustomerListQuery.model_validate({"limit": str(PAGE_SIZE)})
        )
    return page(
        "customers.html", nav="customers", title="Customers", found=found, filters=filters, problem=problem
    )


def _name(customer: Row) -> str:
    return f"{customer['first_name']} {customer['last_name']}".strip() or str(customer["email"])


@router.page("GET", "/customers/<id>")
def customer_detail(id: str) -> Response:
    customer = commerce.get_customer(database(), path_id(id))
    return page("customer.html", nav="customers", title=_name(customer), customer=customer)


def _addresses(fields: dict[str, str], data: dict[str, Any], errors: dict[str, str]) -> dict[str, str]:
    """The address rows the form filled (an empty row is left out) as `addresses`, with the form field of
    each model path (addresses.<n>.city -> addr<row>_city). A post without address rows leaves them as
    they are."""
    if not any(name.startswith("addr") for name in fields):
        return {}
    addresses: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for row in range(MAX_ADDRESSES):
        typed = {key: fields.get(f"addr{row}_{key}", "").strip() for key in ADDRESS_FIELDS}
        if not any(typed.values()):
            continue
        for key in ADDRESS_FIELDS:
            names[f"addresses.{len(addresses)}.{key}"] = f"addr{row}_{key}"
        typed["country"] = typed["country"].upper()
        addresses.append({**typed, "phone": typed["phone"] or None})
    data["addresses"] = addresses
    return names


def _address_values(customer: Row, values: dict[str, str]) -> None:
    for row, address in enumerate(customer.get("addresses") or []):
        for key in ADDRESS_FIELDS:
            values[f"addr{row}_{key}"] = str(address.get(key) or "")


CUSTOMERS = Editor(
    records=Records(
        CustomerCreate,
        CustomerUpdate,
        read=commerce.get_customer,
        update=commerce.update_customer,
        create=commerce.create_customer,
    ),
    path="/customers",
    suffix="/edit",
    api="/api/customers",
    noun="customer",
    sections=(
        (
            "Contact",
            (
                # (not "email": the top bar's signed-in address has that id)
                Field("customer_email", "Email", "email", target="email", attrs='maxlength="254"'),
                Field("phone", "Phone", "optional", hint="Like +33 6 12 34 56 78", attrs='maxlength="32"'),
                Field("first_name", "First name", attrs='maxlength="120"'),
                Field("last_name", "Last name", attrs='maxlength="120"'),
                Field("accepts_marketing", "Agreed to receive marketing email", "check"),
            ),
        ),
        ("Note", (Field("note", "Note (only staff see it)", "long", attrs='maxlength="5000"'),)),
    ),
    title=lambda customer: f"Edit {_name(customer)}",
    adjust=_addresses,
    values_of=_address_values,
    context=lambda customer: {
        "address_rows": min(len((customer or {}).get("addresses") or []) + 1, MAX_ADDRESSES)
    },
    unique="customer_email",
    inside="_addresses.html",
).declare()
