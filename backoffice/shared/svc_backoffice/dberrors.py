"""The database's refusals in the product's words: one mapping, by SQLSTATE and constraint name, from what
PostgreSQL refused to the domain error a client sees (404, 409 or 422 with a message naming the field or the
rule). No PostgreSQL text reaches a client except the messages this application's own functions raise (class
SV, migration 0007), which are written as product text. Unknown refusals are left to the caller (a 500 whose
detail stays in the log).
"""

from __future__ import annotations

import psycopg

from svc_backoffice.errors import Conflict, DomainError, NotFound, Unprocessable

# SQLSTATEs the migrations' functions raise; their message is shown as it is.
RAISED: dict[str, type[DomainError]] = {
    "SV001": Unprocessable,  # Illegal transition from <status> to <status>
    "SV002": Conflict,  # Not enough stock for <product>: <n> available, <m> ordered.
    "SV003": Conflict,  # The store must keep at least one owner.
    "SV004": Conflict,  # The default stock location cannot be deleted.
}

# Unique violations (23505), by table.
DUPLICATES = {
    "products": "A product with that slug or SKU already exists.",
    "categories": "A category with that slug already exists.",
    "attributes": "An attribute with that slug already exists.",
    "collections": "A collection with that slug already exists.",
    "stock_locations": "A stock location with that name or code already exists.",
    "customers": "A customer with that email already exists.",
    "coupons": "A coupon with that code already exists.",
    "orders": "An order with that number already exists.",
    "shipping_zones": "A shipping zone with that name already exists.",
    "shipping_methods": "The zone already has a method with that name.",
    "shipping_carriers": "A carrier with that name or code already exists.",
    "payment_providers": "That payment provider is already configured.",
    "payment_events": "That payment event was already recorded.",
    "blog_posts": "A blog post with that slug already exists.",
    "blog_categories": "A blog category with that slug already exists.",
    "integrations": "That integration already exists.",
    "staff": "A staff member with that email already exists.",
}

# What a reference names, by column (and by table.column where the same column means another thing).
NOUNS = {
    "category_id": "category",
    "parent_id": "category",
    "product_id": "product",
    "attribute_id": "attribute",
    "collection_id": "collection",
    "location_id": "stock location",
    "order_id": "order",
    "staff_id": "staff member",
    "author_id": "staff member",
    "customer_id": "customer",
    "coupon_id": "coupon",
    "shipping_method_id": "shipping method",
    "zone_id": "shipping zone",
    "carrier_id": "shipping carrier",
    "provider_id": "payment provider",
    "post_id": "blog post",
    "blog_posts.category_id": "blog category",
}
FOREIGN_KEY_COLUMNS = {"orders_shipping_method_fkey": "shipping_method_id"}

# Deleting a row that others still reference (ON DELETE RESTRICT).
IN_USE = {
    "stock_levels_location_id_fkey": "This stock location holds stock: move it or deactivate the location instead.",
    "inventory_adjustments_location_id_fkey": (
        "This stock location has stock history: deactivate the location instead of deleting it."
    ),
}

# Check constraints whose rule spans several columns, or whose words matter to a merchant.
RULES = {
    "stock_levels_quantity_check": "Not enough stock: the quantity at a location cannot go below zero.",
    "inventory_adjustments_delta_check": "delta: an adjustment must change the quantity.",
    "categories_check": "parent_id: a category cannot be its own parent.",
    "stock_locations_check": "active: the default stock location must stay active.",
    "attributes_check": "options: only select attributes have options.",
    "coupons_check": "value: a percent coupon takes 1 to 100.",
    "coupons_check1": "value: a fixed coupon must be worth more than 0.",
    "coupons_check2": "usage_limit: cannot be below the number of times the coupon was used.",
    "coupons_check3": "ends_at: must be after starts_at.",
    "orders_check": "discount_cents: cannot be more than the subtotal.",
    "shipping_methods_check": "max_days: must be at least min_days.",
    "shipping_methods_check1": "price_cents: a free method costs 0.",
    "blog_posts_check": "scheduled_for: a scheduled post needs a date.",
    "blog_posts_check1": "published_at: a published post needs a date.",
    "integrations_check": "connected_at: a connected integration needs the time it connected.",
}

OUT_OF_RANGE = {"22003", "22008", "22007"}  # numeric value out of range, datetime field overflow, bad format


def _column(table: str, constraint: str, suffix: str) -> str:
    """`<table>_<column>_<suffix>`, PostgreSQL's default constraint name, read back."""
    if constraint.startswith(table + "_") and constraint.endswith(suffix):
        return constraint[len(table) + 1 : -len(suffix)]
    return ""


def translate(exc: psycopg.Error) -> DomainError | None:
    """The domain error for a refusal the schema or its functions made on purpose, else None."""
    state = exc.sqlstate or ""
    diag = exc.diag
    table, constraint = diag.table_name or "", diag.constraint_name or ""
    if state in RAISED:
        return RAISED[state](diag.message_primary or "The change was refused.")
    if state == "23505":
        return Conflict(DUPLICATES.get(table, "A record with that value already exists."))
    if state == "23503":
        if (diag.message_primary or "").startswith("update or delete"):
            return Conflict(
                IN_USE.get(constraint, "It is still used by other records and cannot be deleted.")
            )
        column = FOREIGN_KEY_COLUMNS.get(constraint) or _column(table, constraint, "_fkey") or "reference"
        noun = NOUNS.get(f"{table}.{column}") or NOUNS.get(column, "record")
        return Unprocessable(f"{column}: no such {noun}.")
    if state == "23514":
        if constraint in RULES:
            return Unprocessable(RULES[constraint])
        column = _column(table, constraint, "_check")
        return Unprocessable(
            f"{column}: this value is not allowed." if column else "The change breaks a rule."
        )
    if state == "23502":
        return Unprocessable(f"{diag.column_name or 'a field'}: is required.")
    if state == "P0002":  # no_data_found, raised by the functions for a missing row
        return NotFound()
    if state in OUT_OF_RANGE:
        return Unprocessable("A number or date is out of the range the store can keep.")
    return None
