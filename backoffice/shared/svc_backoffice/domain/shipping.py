"""Shipping logic and data access: zones, methods (per zone, optionally with a carrier) and carriers."""

from __future__ import annotations

from typing import Any

from svc_backoffice.data.db import Database, Row
from svc_backoffice.domain.catalog import _delete, _insert, _update
from svc_backoffice.domain.models.commerce import (
    CarrierCreate,
    CarrierUpdate,
    ShippingMethodCreate,
    ShippingMethodUpdate,
    ShippingZoneCreate,
    ShippingZoneUpdate,
)

ZONE_COLUMNS = "id, name, countries, position, created_at"
METHOD_COLUMNS = (
    "id, zone_id, carrier_id, name, kind, price_cents, free_over_cents, min_days, max_days, active, position, "
    "created_at"
)
CARRIER_COLUMNS = "id, name, code, tracking_url_template, active, created_at"


def _write(db: Database, table: str, row_id: str | None, data: dict[str, Any], columns: str) -> Row:
    if row_id is None:
        return _insert(db, table, data, columns)
    return _update(db, table, row_id, data, columns)


def list_zones(db: Database) -> list[Row]:
    return db.all(
        f"SELECT {ZONE_COLUMNS}, coalesce((SELECT jsonb_agg(to_jsonb(m) ORDER BY m.position, m.name) "  # noqa: S608
        f"FROM (SELECT {METHOD_COLUMNS} FROM shipping_methods WHERE zone_id = z.id) m), '[]') AS methods "
        "FROM shipping_zones z ORDER BY position, name"
    )


def create_zone(db: Database, body: ShippingZoneCreate) -> Row:
    return _write(db, "shipping_zones", None, body.model_dump(), ZONE_COLUMNS)


def update_zone(db: Database, zone_id: str, body: ShippingZoneUpdate) -> Row:
    return _write(db, "shipping_zones", zone_id, body.model_dump(exclude_unset=True), ZONE_COLUMNS)


def delete_zone(db: Database, zone_id: str) -> None:
    _delete(db, "shipping_zones", zone_id)


def list_methods(db: Database) -> list[Row]:
    return db.all(f"SELECT {METHOD_COLUMNS} FROM shipping_methods ORDER BY zone_id, position, name")  # noqa: S608


def create_method(db: Database, body: ShippingMethodCreate) -> Row:
    return _write(db, "shipping_methods", None, body.model_dump(), METHOD_COLUMNS)


def update_method(db: Database, method_id: str, body: ShippingMethodUpdate) -> Row:
    return _write(db, "shipping_methods", method_id, body.model_dump(exclude_unset=True), METHOD_COLUMNS)


def delete_method(db: Database, method_id: str) -> None:
    _delete(db, "shipping_methods", method_id)


def list_carriers(db: Database) -> list[Row]:
    return db.all(f"SELECT {CARRIER_COLUMNS} FROM shipping_carriers ORDER BY name")  # noqa: S608


def create_carrier(db: Database, body: CarrierCreate) -> Row:
    return _write(db, "shipping_carriers", None, body.model_dump(), CARRIER_COLUMNS)


def update_carrier(db: Database, carrier_id: str, body: CarrierUpdate) -> Row:
    return _write(db, "shipping_carriers", carrier_id, body.model_dump(exclude_unset=True), CARRIER_COLUMNS)


def delete_carrier(db: Database, carrier_id: str) -> None:
    _delete(db, "shipping_carriers", carrier_id)
