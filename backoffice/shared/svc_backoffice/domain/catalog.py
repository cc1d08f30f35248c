"""Catalog logic and data access: products, categories, attributes, collections."""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb

from svc_backoffice.core.catalogue import say
from svc_backoffice.data.db import Database, Row
from svc_backoffice.domain.models.catalog import (
    SORTS,
    AttributeCreate,
    AttributeUpdate,
    CategoryCreate,
    CategoryUpdate,
    CollectionCreate,
    CollectionUpdate,
    ProductCreate,
    ProductListQuery,
    ProductUpdate,
)
from svc_backoffice.domain.rows import (
    Table,
    delete_row,
    page_of,
    reorder,
    selective,
    slugify,
    tsquery,
    update_row,
    where_equal,
)

# -- products ------------------------------------------------------------------------------------------------
LIST_COLUMNS = (
    "id, title, slug, sku, status, type, category_id, price_cents, compare_at_cents, track_inventory, "
    "stock_total, stock_state, low_stock_threshold, tags, created_at, updated_at"
)
PRODUCT_COLUMNS = (
    "p.id, p.title, p.slug, p.sku, p.description, p.status, p.type, p.category_id, p.price_cents, "
    "p.compare_at_cents, p.track_inventory, p.stock_total, p.stock_state, p.low_stock_threshold, p.tags, "
    "p.images, p.seo_title, p.seo_description, p.weight_grams, p.created_at, p.updated_at"
)
# One statement for the product and every relation, so the detail route costs one query after the gate.
PRODUCT_DETAIL = f"""
SELECT {PRODUCT_COLUMNS},
  (SELECT jsonb_build_object('id', c.id, 'name', c.name, 'slug', c.slug)
     FROM categories c WHERE c.id = p.category_id) AS category,
  coalesce((SELECT jsonb_agg(jsonb_build_object('attribute_id', a.id, 'name', a.name, 'slug', a.slug,
                                                'kind', a.kind, 'value', v.value) ORDER BY a.position, a.name)
     FROM product_attribute_values v JOIN attributes a ON a.id = v.attribute_id
     WHERE v.product_id = p.id), '[]') AS attributes,
  coalesce((SELECT jsonb_agg(jsonb_build_object('id', c.id, 'title', c.title, 'slug', c.slug,
                                                'position', cp.position) ORDER BY c.title)
     FROM collection_products cp JOIN collections c ON c.id = cp.collection_id
     WHERE cp.product_id = p.id), '[]') AS collections,
  coalesce((SELECT jsonb_agg(jsonb_build_object('location_id', l.id, 'location', l.name, 'code', l.code,
                                                'quantity', s.quantity) ORDER BY l.name)
     FROM stock_levels s JOIN stock_locations l ON l.id = s.location_id
     WHERE s.product_id = p.id), '[]') AS stock,
  coalesce((SELECT jsonb_agg(to_jsonb(ia) ORDER BY ia.created_at DESC)
     FROM (SELECT id, location_id, delta, reason, quantity_after, staff_id, order_id, created_at
             FROM inventory_adjustments WHERE product_id = p.id ORDER BY created_at DESC LIMIT 20) ia),
   '[]') AS recent_adjustments
FROM products p WHERE p.id = %s
"""  # noqa: S608


def list_products(db: Database, q: ProductListQuery) -> dict[str, Any]:
    where: list[str] = []
    params: dict[str, Any] = {}
    if q.q and q.q.strip():
        query = tsquery(q.q)
        params["sku"] = q.q.strip().lower()
        if query:
            params["tsq"] = query
            where.append("(search @@ to_tsquery('simple', %(tsq)s) OR lower(sku) = %(sku)s)")
        else:
            where.append("lower(sku) = %(sku)s")
    where_equal(q, ("status", "type", "category_id"), where, params)
    if q.out_of_stock:
        where.append("stock_state = 'out'")
    if q.low_stock:
        where.append("stock_state = 'low'")
    direction = "ASC" if q.dir == "asc" else "DESC"
    order = f"{SORTS[q.sort]} {direction}, id {direction}"
    # Every fragment comes from the allow-lists above; values travel as parameters.
    condition = f" WHERE {' AND '.join(where)}" if where else ""
    filtered = f"SELECT {LIST_COLUMNS} FROM products{condition}"  # noqa: S608
    if q.q and selective(q.q):
        # A search for a code (a word with a digit) matches few rows, but PostgreSQL cannot estimate prefix
        # matches and would walk the sort's index through every row (40 ms at 100,000 products): the matches
        # are taken from the search index first, then sorted (bench/RESULTS.md, backoffice-products).
        filtered = f"WITH hits AS MATERIALIZED ({filtered}) SELECT * FROM hits"  # noqa: S608
    sql = f"{filtered} ORDER BY {order} LIMIT %(limit)s OFFSET %(offset)s"
    if q.offset and not (q.q and selective(q.q)):
        # A deep page: its ids first, the offset skipped inside the sort's index alone (index-only, migration
        # 0015), then its rows; reading every skipped row was 100-200 ms at offset 50,000 of 100,000.
        sql = (
            f"SELECT {LIST_COLUMNS} FROM products WHERE id IN (SELECT id FROM products{condition} "  # noqa: S608
            f"ORDER BY {order} LIMIT %(limit)s OFFSET %(offset)s) ORDER BY {order}"
        )
    rows = db.all(sql, {**params, "limit": q.limit + 1, "offset": q.offset})
    return {**page_of(rows, q.offset, q.limit), "sort": q.sort, "dir": q.dir}


def get_product(db: Database, product_id: str) -> Row:
    return db.found(PRODUCT_DETAIL, (product_id,))


def _product_columns(data: dict[str, Any]) -> dict[str, Any]:
    columns = {k: v for k, v in data.items() if k != "attributes"}
    if "images" in columns:
        columns["images"] = Jsonb(columns["images"])
    return columns


def _set_attributes(db: Database, product_id: str, values: list[dict[str, Any]]) -> None:
    db.all("DELETE FROM product_attribute_values WHERE product_id = %s", (product_id,))
    if values:
        db.all(
            "INSERT INTO product_attribute_values (product_id, attribute_id, value) "
            "SELECT %s, a, v FROM unnest(%s::uuid[], %s::text[]) AS t(a, v)",
            (product_id, [v["attribute_id"] for v in values], [v["value"] for v in values]),
        )


def create_product(db: Database, body: ProductCreate) -> Row:
    data = body.model_dump(mode="python")
    data["slug"] = data["slug"] or slugify(body.title, "product")
    columns = _product_columns(data)
    names = ", ".join(columns)
    values = ", ".join(f"%({n})s" for n in columns)
    row = db.one(f"INSERT INTO products ({names}) VALUES ({values}) RETURNING id", columns)  # noqa: S608
    assert row is not None
    if body.attributes:
        _set_attributes(db, row["id"], data["attributes"])
    return get_product(db, row["id"])


def update_product(db: Database, product_id: str, body: ProductUpdate) -> Row:
    data = body.model_dump(mode="python", exclude_unset=True)
    update_row(db, "products", product_id, _product_columns(data), "id")
    if "attributes" in data:
        _set_attributes(db, product_id, data["attributes"] or [])
    return get_product(db, product_id)


def products_by_sku(db: Database, skus: list[str]) -> dict[str, str]:
    """Product ids by SKU as typed (SKUs match without regard to case, as their unique index does)."""
    rows = db.all(
        "SELECT lower(sku) AS key, id::text AS id FROM products WHERE lower(sku) = ANY(%s::text[])",
        ([s.lower() for s in skus],),
    )
    found = {row["key"]: row["id"] for row in rows}
    return {sku: found[sku.lower()] for sku in skus if sku.lower() in found}


def delete_product(db: Database, product_id: str) -> None:
    delete_row(db, "products", product_id)


# -- categories ----------------------------------------------------------------------------------------------
CATEGORY_COLUMNS = "id, parent_id, name, slug, description, position, created_at, updated_at"


def list_categories(db: Database) -> list[Row]:
    return db.all(
        f"SELECT {CATEGORY_COLUMNS}, (SELECT count(*) FROM products p WHERE p.category_id = c.id) AS product_count "  # noqa: S608
        "FROM categories c ORDER BY position, name"
    )


def category_choices(db: Database) -> list[Row]:
    """Categories to choose from (a filter, a form's select): id and name in display order, no counts."""
    return db.all("SELECT id, name FROM categories ORDER BY position, name")


CATEGORIES = Table("categories", CATEGORY_COLUMNS, CategoryCreate, CategoryUpdate, "category")
create_category, update_category, delete_category = CATEGORIES.create, CATEGORIES.update, CATEGORIES.delete


def reorder_categories(db: Database, ids: list[Any]) -> None:
    reorder(db, "categories", ids, say("catalog.unknown_category"))


# -- attributes ----------------------------------------------------------------------------------------------
ATTRIBUTE_COLUMNS = "id, name, slug, kind, options, position, created_at"


def list_attributes(db: Database) -> list[Row]:
    return db.all(f"SELECT {ATTRIBUTE_COLUMNS} FROM attributes ORDER BY position, name")  # noqa: S608


ATTRIBUTES = Table("attributes", ATTRIBUTE_COLUMNS, AttributeCreate, AttributeUpdate, "attribute")
create_attribute, update_attribute, delete_attribute = ATTRIBUTES.create, ATTRIBUTES.update, ATTRIBUTES.delete


# -- collections ---------------------------------------------------------------------------------------------
COLLECTION_COLUMNS = "id, title, slug, description, published, created_at, updated_at"


def list_collections(db: Database) -> list[Row]:
    return db.all(
        f"SELECT {COLLECTION_COLUMNS}, "  # noqa: S608
        "(SELECT count(*) FROM collection_products cp WHERE cp.collection_id = c.id) AS product_count "
        "FROM collections c ORDER BY title"
    )


# A collection's products in their order, a JSON array.
COLLECTION_PRODUCTS = (
    "coalesce((SELECT jsonb_agg(jsonb_build_object('id', p.id, 'title', p.title, 'slug', p.slug, "
    "'status', p.status, 'price_cents', p.price_cents, 'position', cp.position) ORDER BY cp.position) "
    "FROM collection_products cp JOIN products p ON p.id = cp.product_id WHERE cp.collection_id = c.id), '[]')"
)


def get_collection(db: Database, collection_id: str) -> Row:
    return db.found(
        f"SELECT {COLLECTION_COLUMNS}, {COLLECTION_PRODUCTS} AS products FROM collections c WHERE c.id = %s",  # noqa: S608
        (collection_id,),
    )


def _set_collection_products(db: Database, collection_id: str, product_ids: list[Any]) -> None:
    db.all("DELETE FROM collection_products WHERE collection_id = %s", (collection_id,))
    if product_ids:
        db.all(
            "INSERT INTO collection_products (collection_id, product_id, position) "
            "SELECT %s, o.id, o.ord - 1 FROM unnest(%s::uuid[]) WITH ORDINALITY AS o(id, ord)",
            (collection_id, product_ids),
        )


def create_collection(db: Database, body: CollectionCreate) -> Row:
    data = body.model_dump(mode="python")
    data["slug"] = data["slug"] or slugify(body.title, "collection")
    row = db.one(
        "INSERT INTO collections (title, slug, description, published) "
        "VALUES (%(title)s, %(slug)s, %(description)s, %(published)s) RETURNING id",
        data,
    )
    assert row is not None
    _set_collection_products(db, row["id"], list(dict.fromkeys(body.product_ids)))
    return get_collection(db, row["id"])


def update_collection(db: Database, collection_id: str, body: CollectionUpdate) -> Row:
    update_row(db, "collections", collection_id, body.model_dump(mode="python", exclude_unset=True), "id")
    return get_collection(db, collection_id)


def delete_collection(db: Database, collection_id: str) -> None:
    delete_row(db, "collections", collection_id)


def reorder_collection_products(db: Database, collection_id: str, product_ids: list[Any]) -> Row:
    db.found("SELECT id FROM collections WHERE id = %s FOR UPDATE", (collection_id,))
    _set_collection_products(db, collection_id, product_ids)
    return get_collection(db, collection_id)


def set_product_collections(db: Database, product_id: str, collection_ids: list[Any]) -> None:
    """The collections a product is in: it leaves those not listed and joins the listed ones it was not in,
    at their end (ids that name no collection are passed over: one deleted meanwhile is simply gone)."""
    db.found("SELECT id FROM products WHERE id = %s FOR UPDATE", (product_id,))
    ids = [str(i) for i in collection_ids]
    db.all(
        "DELETE FROM collection_products WHERE product_id = %s AND collection_id <> ALL(%s::uuid[])",
        (product_id, ids),
    )
    if ids:
        db.all(
            "INSERT INTO collection_products (collection_id, product_id, position) "
            "SELECT c.id, %s, coalesce((SELECT max(position) + 1 FROM collection_products x "
            "WHERE x.collection_id = c.id), 0) FROM collections c WHERE c.id = ANY(%s::uuid[]) "
            "ON CONFLICT (collection_id, product_id) DO NOTHING",
            (product_id, ids),
        )
