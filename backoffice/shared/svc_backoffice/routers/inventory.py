"""Inventory routes: stock locations and stock adjustments."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice import store
from svc_backoffice.db import database
from svc_backoffice.web import ApiRouter, body, json_response, path_id

inventory = ApiRouter("/api/inventory")


@inventory.api(
    "GET",
    "/locations",
    role="viewer",
    answers="200 302 500",
    summary="Stock locations",
)
def list_locations() -> Response:
    return json_response(200, {"items": store.list_locations(database())})


@inventory.api(
    "POST",
    "/locations",
    role="admin",
    body="LocationCreate",
    answers="201 302 400 409 500",
    summary="Create a stock location",
)
def create_location() -> Response:
    return json_response(201, store.create_location(database(), body(inventory)))


@inventory.api(
    "PATCH",
    "/locations/<id>",
    role="admin",
    body="LocationUpdate",
    answers="200 302 400 404 409 500",
    summary="Update a stock location",
)
def update_location(id: str) -> Response:
    location_id = path_id(id)
    return json_response(200, store.update_location(database(), location_id, body(inventory)))


@inventory.api(
    "DELETE",
    "/locations/<id>",
    role="admin",
    answers="200 302 404 409 500",
    summary="Delete an empty, non-default stock location",
)
def delete_location(id: str) -> Response:
    store.delete_location(database(), path_id(id))
    return json_response(200, {"ok": True})


@inventory.api(
    "POST",
    "/adjust",
    role="editor",
    body="InventoryAdjust",
    answers="201 302 400 404 422 500",
    summary="Write a stock delta with its reason",
)
def adjust() -> Response:
    adjustment = body(inventory)
    return json_response(201, store.adjust_inventory(database(), adjustment, inventory.staff()))


ROUTERS = (inventory,)
