"""Inventory, store settings, staff management, command-palette search and AI suggestions."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from typing import Any

from svc_backoffice.access.auth import Staff
from svc_backoffice.core import tenancy
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import Conflict, Forbidden
from svc_backoffice.data.db import Database, Row
from svc_backoffice.domain.models.catalog import InventoryAdjust, LocationCreate, LocationUpdate
from svc_backoffice.domain.models.content import (
    SearchQuery,
    SettingsUpdate,
    StaffCreate,
    StaffDelete,
    StaffUpdate,
)
from svc_backoffice.domain.rows import Table, selective, tsquery, update_row

# -- inventory -----------------------------------------------------------------------------------------------
LOCATION_COLUMNS = "id, name, code, address, is_default, active, created_at"


def list_locations(db: Database) -> list[Row]:
    return db.all(f"SELECT {LOCATION_COLUMNS} FROM stock_locations ORDER BY is_default DESC, name")  # noqa: S608


class Locations(Table[LocationCreate, LocationUpdate]):
    """Stock locations: one is the default, so a location made the default takes the place of the old one."""

    def create(self, db: Database, body: LocationCreate) -> Row:
        _clear_default(db, body.is_default)
        return super().create(db, body)

    def update(self, db: Database, row_id: str, body: LocationUpdate) -> Row:
        _clear_default(db, body.is_default)
        return super().update(db, row_id, body)


def _clear_default(db: Database, becomes_default: bool | None) -> None:
    if becomes_default:
        db.all("UPDATE stock_locations SET is_default = false WHERE is_default")


LOCATIONS = Locations("stock_locations", LOCATION_COLUMNS, LocationCreate, LocationUpdate)
get_location, create_location = LOCATIONS.read, LOCATIONS.create
update_location, delete_location = LOCATIONS.update, LOCATIONS.delete


def adjust_inventory(db: Database, body: InventoryAdjust, staff: Staff) -> Row:
    """Record a delta; the database applies it to the stock level and refuses to go below zero (422)."""
    db.found("SELECT id FROM products WHERE id = %s FOR UPDATE", (body.product_id,))
    location = db.found(
        "SELECT id FROM stock_locations WHERE " + ("id = %s" if body.location_id else "is_default"),  # noqa: S608 - column lists are constants
        (body.location_id,) if body.location_id else (),
    )
    row = db.one(
        "INSERT INTO inventory_adjustments (product_id, location_id, delta, reason, staff_id) "
        "VALUES (%s, %s, %s, %s, %s) RETURNING id, product_id, location_id, delta, reason, quantity_after, "
        "staff_id, created_at",
        (body.product_id, location["id"], body.delta, body.reason, staff.id),
    )
    total = db.one("SELECT stock_total FROM products WHERE id = %s", (body.product_id,))
    assert row is not None and total is not None
    return {**row, "stock_total": total["stock_total"]}


# -- settings ------------------------------------------------------------------------------------------------
SETTINGS_COLUMNS = (
    "store_name, contact_email, currency, locale, timezone, low_stock_threshold, weight_unit, updated_at"
)


def get_settings_row(db: Database) -> Row:
    row = db.one(f"SELECT {SETTINGS_COLUMNS} FROM settings")  # noqa: S608
    assert row is not None
    return row


def update_settings(db: Database, body: SettingsUpdate) -> Row:
    changes = body.model_dump(exclude_unset=True)
    if not changes:
        return get_settings_row(db)
    sets = ", ".join(f"{name} = %({name})s" for name in changes)
    row = db.one(f"UPDATE settings SET {sets} RETURNING {SETTINGS_COLUMNS}", changes)  # noqa: S608
    assert row is not None
    return row


# -- staff ---------------------------------------------------------------------------------------------------
# `status`: invited until the person first signs in, then active.
STAFF_COLUMNS = (
    "id, email, name, role, CASE WHEN joined_at IS NULL THEN 'invited' ELSE 'active' END AS status, joined_at, "
    "created_at, updated_at"
)


def list_staff(db: Database) -> list[Row]:
    return db.all(
        f"SELECT {STAFF_COLUMNS} FROM staff WHERE removed_at IS NULL "  # noqa: S608
        "ORDER BY array_position(ARRAY['owner','admin','editor','viewer'], role), email"
    )


def add_staff(db: Database, actor: Staff, body: StaffCreate) -> Row:
    if body.role == "owner" and actor.role != "owner":
        raise Forbidden(say("staff.only_owner_grants"))
    # An invitation: the person joins by signing in through the platform's hand-off. A removed member can be
    # invited again (as a new invitation); a current member or invitation is a conflict.
    row = db.one(
        "INSERT INTO staff (email, name, role, invited) VALUES (%(email)s, %(name)s, %(role)s, true) "  # noqa: S608 - column lists are constants
        "ON CONFLICT (lower(email)) DO UPDATE SET name = EXCLUDED.name, role = EXCLUDED.role, removed_at = NULL, "
        f"joined_at = NULL, invited = true WHERE staff.removed_at IS NOT NULL RETURNING {STAFF_COLUMNS}",
        body.model_dump(),
    )
    if row is None:
        raise Conflict(say("database.duplicate.staff"))
    return row


def _active_member(db: Database, staff_id: Any) -> Row:
    return db.found("SELECT id, role FROM staff WHERE id = %s AND removed_at IS NULL FOR UPDATE", (staff_id,))


def update_staff(db: Database, actor: Staff, body: StaffUpdate) -> Row:
    changes = body.model_dump(exclude_unset=True, exclude={"id"})
    if changes.get("role") == "owner" and actor.role != "owner":
        raise Forbidden(say("staff.only_owner_grants"))
    target = _active_member(db, body.id)
    if target["role"] == "owner" and changes.get("role", "owner") != "owner" and actor.role != "owner":
        raise Forbidden(say("staff.only_owner_removes"))
    return update_row(db, "staff", str(body.id), changes, STAFF_COLUMNS)


def remove_staff(db: Database, actor: Staff, body: StaffDelete) -> None:
    target = _active_member(db, body.id)
    if target["role"] == "owner" and actor.role != "owner":
        raise Forbidden(say("staff.only_owner_removes"))
    db.all("UPDATE staff SET removed_at = now() WHERE id = %s", (body.id,))


# -- search --------------------------------------------------------------------------------------------------
def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def search(db: Database, q: SearchQuery) -> dict[str, Any]:
    """Up to `limit` hits per entity, in one statement; products by full-text prefix or exact SKU, the
    smaller entities by substring."""
    text = q.q.strip()
    params = {
        "like": _like(text),
        "tsq": tsquery(text) or "",
        "sku": text.lower(),
        "limit": q.limit,
        "number": int(text) if text.isdecimal() and len(text) < 18 else None,
    }
    products = (
        "SELECT id, title, sku, slug, updated_at FROM products "
        "WHERE (%(tsq)s <> '' AND search @@ to_tsquery('simple', %(tsq)s)) OR lower(sku) = %(sku)s"
    )
    if selective(text):  # a code: the few matches from the search index first, then sorted (catalog.py)
        products += " OFFSET 0"
    # Constant SQL and the constant fence above; values travel as parameters.
    sql = f"""
(SELECT 'product' AS type, id::text, title, coalesce(sku, slug) AS subtitle, '/products/' || id AS url
   FROM ({products}) p
  ORDER BY updated_at DESC LIMIT %(limit)s)
UNION ALL
(SELECT 'category', id::text, name, slug, '/categories/' || id FROM categories
  WHERE name ILIKE %(like)s OR slug ILIKE %(like)s ORDER BY position, name LIMIT %(limit)s)
UNION ALL
(SELECT 'collection', id::text, title, slug, '/collections/' || id FROM collections
  WHERE title ILIKE %(like)s ORDER BY title LIMIT %(limit)s)
UNION ALL
(SELECT 'order', id::text, '#' || number, email, '/orders/' || id FROM orders
  WHERE number = %(number)s OR email ILIKE %(like)s ORDER BY placed_at DESC LIMIT %(limit)s)
UNION ALL
(SELECT 'customer', id::text, trim(first_name || ' ' || last_name), email, '/customers/' || id FROM customers
  WHERE email ILIKE %(like)s OR (first_name || ' ' || last_name) ILIKE %(like)s
  ORDER BY created_at DESC LIMIT %(limit)s)
UNION ALL
(SELECT 'coupon', id::text, code, kind, '/coupons/' || id FROM coupons
  WHERE code ILIKE %(like)s ORDER BY code LIMIT %(limit)s)
UNION ALL
(SELECT 'blog_post', id::text, title, status, '/blog/posts/' || id FROM blog_posts
  WHERE title ILIKE %(like)s ORDER BY updated_at DESC LIMIT %(limit)s)
"""  # noqa: S608
    return {"q": text, "results": db.all(sql, params)}


# -- ai suggestions ------------------------------------------------------------------------------------------
class SuggestionCache:
    """In-process LRU of suggestion responses keyed by the SHA-256 of the canonical request."""

    def __init__(self, capacity: int = 512) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def get(self, key: str) -> dict[str, Any] | None:
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key]
        return None

    def put(self, key: str, value: dict[str, Any]) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def clear(self) -> None:
        self._items.clear()


SUGGESTIONS = SuggestionCache()


def request_key(request: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(request, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _words(*texts: str) -> list[str]:
    seen: dict[str, None] = {}
    for text in texts:
        for word in text.lower().replace(",", " ").split():
            word = word.strip(".!?;:'\"()[]")
            if len(word) > 2:
                seen.setdefault(word[:40], None)
    return list(seen)


def _placeholder(r: dict[str, Any]) -> list[str]:
    """Deterministic placeholder text per task (the shipped template calls no model)."""
    task = r["task"]
    if task == "rewrite_title":
        return [f"{r['title'].strip()} | {r['tone'].title()} edition", f"The {r['title'].strip()}"]
    if task == "meta_description":
        keywords = ", ".join(r["keywords"][:3])
        text = (
            f"Discover {r['title'].strip()}." + (f" {keywords}." if keywords else "") + " Order online today."
        )
        return [text[:160]]
    if task == "alt_text":
        subject = r.get("product_title") or r["image_url"].rsplit("/", 1)[-1].split(".")[0] or "product"
        return [f"Photo of {subject}"[:125]]
    if task == "product_description":
        features = "".join(f"\n- {f}" for f in r["features"])
        return [f"{r['title'].strip()}: a {r['tone']} pick for everyday use.{features}"]
    if task == "tag_suggestions":
        return _words(r["title"], r["description"])[: r["max_tags"]] or ["new"]
    if task == "translate":
        return [f"[{r['target_language']}] {r['text']}"]
    if task == "seo_keywords":
        return _words(r["title"], r["description"])[:10] or ["shop"]
    return [f"{i + 1}. {r['topic'].strip()}: part {i + 1}" for i in range(r["sections"])]  # blog_outline


def suggest(request: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The suggestion for a validated request and whether it came from the cache."""
    key = request_key(request)
    # Hosted, one instance serves many shops: each has its own entries, so x-cache never says what another
    # shop asked.
    shop = tenancy.current_shop()
    slot = f"{shop.id}:{key}" if shop is not None else key
    cached = SUGGESTIONS.get(slot)
    if cached is not None:
        return cached, True
    response = {
        "task": request["task"],
        "suggestions": _placeholder(request),
        "model": "placeholder",
        "request_sha256": key,
    }
    SUGGESTIONS.put(slot, response)
    return response, False
