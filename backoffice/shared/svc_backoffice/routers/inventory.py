"""Inventory routes: stock locations and stock adjustments."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.data.db import database
from svc_backoffice.domain import store
from svc_backoffice.edge.api_router import ApiRouter
from svc_backoffice.edge.requests import body
from svc_backoffice.edge.web import json_response

locations = ApiRouter("/api/inventory/locations", reader="viewer", writer="admin")
locations.lists(store.list_locations, summary="Stock locations")
locations.creates(store.create_location, body="LocationCreate", also="409", summary="Create a stock location")
locations.updates(store.update_location, body="LocationUpdate", also="409", summary="Update a stock location")
locations.deletes(store.delete_location, also="409", summary="Delete an empty, non-default stock location")

adjustments = ApiRouter("/api/inventory/adjust")


@adjustments.api(
    "POST",
    role="editor",
    body="InventoryAdjust",
    answers="201 302 400 404 422 500",
    summary="Write a stock delta with its reason",
)
def adjust() -> Response:
    adjustment = body(adjustments)
    return json_response(201, store.adjust_inventory(database(), adjustment, adjustments.staff()))


ROUTERS = (locations, adjustments)
