"""Inventory routes: stock locations and stock adjustments."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice import store
from svc_backoffice.db import database
from svc_backoffice.models import InventoryAdjust, LocationCreate, LocationUpdate
from svc_backoffice.web import ApiRouter, body, json_response, path_id

inventory = ApiRouter("/api/inventory")


@inventory.api("GET", "/locations")
def list_locations() -> Response:
    return json_response(200, {"items": store.list_locations(database())})


@inventory.api("POST", "/locations")
def create_location() -> Response:
    return json_response(201, store.create_location(database(), body(inventory, LocationCreate)))


@inventory.api("PATCH", "/locations/<id>")
def update_location(id: str) -> Response:
    location_id = path_id(id)
    return json_response(200, store.update_location(database(), location_id, body(inventory, LocationUpdate)))


@inventory.api("DELETE", "/locations/<id>")
def delete_location(id: str) -> Response:
    store.delete_location(database(), path_id(id))
    return json_response(200, {"ok": True})


@inventory.api("POST", "/adjust")
def adjust() -> Response:
    adjustment = body(inventory, InventoryAdjust)
    return json_response(201, store.adjust_inventory(database(), adjustment, inventory.staff()))


ROUTERS = (inventory,)
