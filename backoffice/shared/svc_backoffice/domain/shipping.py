"""Shipping logic and data access: zones, methods (per zone, optionally with a carrier) and carriers."""

from __future__ import annotations

from svc_backoffice.data.db import Database, Row
from svc_backoffice.domain.models.commerce import (
    CarrierCreate,
    CarrierUpdate,
    ShippingMethodCreate,
    ShippingMethodUpdate,
    ShippingZoneCreate,
    ShippingZoneUpdate,
)
from svc_backoffice.domain.rows import Table

ZONE_COLUMNS = "id, name, countries, position, created_at"
METHOD_COLUMNS = (
    "id, zone_id, carrier_id, name, kind, price_cents, free_over_cents, min_days, max_days, active, position, "
    "created_at"
)
CARRIER_COLUMNS = "id, name, code, tracking_url_template, active, created_at"


ZONES = Table("shipping_zones", ZONE_COLUMNS, ShippingZoneCreate, ShippingZoneUpdate)
METHODS = Table("shipping_methods", METHOD_COLUMNS, ShippingMethodCreate, ShippingMethodUpdate)
CARRIERS = Table("shipping_carriers", CARRIER_COLUMNS, CarrierCreate, CarrierUpdate)
get_zone, create_zone, update_zone, delete_zone = ZONES.read, ZONES.create, ZONES.update, ZONES.delete
get_method, create_method, update_method = METHODS.read, METHODS.create, METHODS.update
delete_method = METHODS.delete
get_carrier, create_carrier, update_carrier = CARRIERS.read, CARRIERS.create, CARRIERS.update
delete_carrier = CARRIERS.delete


def list_zones(db: Database) -> list[Row]:
    return db.all(
        f"SELECT {ZONE_COLUMNS}, coalesce((SELECT jsonb_agg(to_jsonb(m) ORDER BY m.position, m.name) "  # noqa: S608
        f"FROM (SELECT {METHOD_COLUMNS} FROM shipping_methods WHERE zone_id = z.id) m), '[]') AS methods "
        "FROM shipping_zones z ORDER BY position, name"
    )


def list_methods(db: Database) -> list[Row]:
    return db.all(f"SELECT {METHOD_COLUMNS} FROM shipping_methods ORDER BY zone_id, position, name")  # noqa: S608


def list_carriers(db: Database) -> list[Row]:
    return db.all(f"SELECT {CARRIER_COLUMNS} FROM shipping_carriers ORDER BY name")  # noqa: S608
