"""What a shopper may read of the shop: active products (no cost, no stock figure: only in stock, low or out),
categories, published collections and blog posts, the store's name and currency, and shipping methods."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import NotFound
from svc_backoffice.data.db import Database, Row
from svc_backoffice.domain.rows import page_of, tsquery
from svc_backoffice.storefront.models import PostsQuery, ProductsQuery, SearchQuery, ShippingQuery

CARD = """
  p.id, p.slug, p.title, p.price_cents, p.compare_at_cents, (SELECT currency FROM settings) AS currency,
  CASE WHEN jsonb_array_length(p.images) > 0
       THEN jsonb_build_object('url', p.images->0->>'url', 'alt', coalesce(p.images->0->>'alt', '')) END AS image,
  CASE p.stock_state WHEN 'out' THEN 'out_of_stock' WHEN 'low' THEN 'low_stock' ELSE 'in_stock' END
    AS availability,
  (SELECT jsonb_build_object('slug', c.slug, 'name', c.name) FROM categories c WHERE c.id = p.category_id)
    AS category,
  p.tags"""

SORTS = {
    "newest": "p.created_at DESC, p.id DESC",
    "price_asc": "p.price_cents, p.id",
    "price_desc": "p.price_cents DESC, p.id",
    "title": "lower(p.title), p.id",
}


def last_change(db: Database) -> datetime | None:
    """When anything a shopper sees last changed, to the second (the reads' Last-Modified); None while that
    second is not over (a change later in the same second would carry the same stamp, so a client's copy
    could not be told from the new one by its date: the ETag alone then decides)."""
    row = db.one(
        "SELECT date_trunc('second', c.at) AS at, c.at <= clock_timestamp() - interval '1 second' AS settled "
        "FROM (SELECT coalesce((SELECT at FROM storefront_changes ORDER BY id DESC LIMIT 1), "
        "(SELECT updated_at FROM settings)) AS at) c"
    )
    assert row is not None
    return row["at"] if row["settled"] else None


def store(db: Database, checkout_open: bool) -> Row:
    row = db.one("SELECT store_name AS name, currency, locale, contact_email FROM settings")
    assert row is not None
    row["checkout_open"] = checkout_open
    row["checkout_message"] = None if checkout_open else say("storefront.checkout_not_open")
    return row


def products(db: Database, q: ProductsQuery) -> dict[str, Any]:
    where = ["p.status = 'active'"]
    params: dict[str, Any] = {"limit": q.limit + 1, "offset": q.offset}
    if q.category:
        where.append("p.category_id = (SELECT id FROM categories WHERE slug = %(category)s)")
        params["category"] = q.category
    order = SORTS[q.sort]
    if q.collection:
        where.append(
            "cp.collection_id = (SELECT id FROM collections WHERE slug = %(collection)s AND published)"
        )
        params["collection"] = q.collection
        order = "cp.position, p.id" if q.sort == "newest" else order
    join = " JOIN collection_products cp ON cp.product_id = p.id" if q.collection else ""
    sql = (
        f"SELECT {CARD} FROM products p{join} WHERE {' AND '.join(where)} "  # noqa: S608
        f"ORDER BY {order} LIMIT %(limit)s OFFSET %(offset)s"
    )
    return page_of(db.all(sql, params), q.offset, q.limit)


def product(db: Database, slug: str) -> Row:
    row = db.one(
        f"SELECT {CARD}, p.description, "  # noqa: S608
        "(SELECT coalesce(jsonb_agg(jsonb_build_object('url', i->>'url', 'alt', coalesce(i->>'alt', ''))), "
        "'[]') FROM jsonb_array_elements(p.images) i) AS images, p.seo_title, p.seo_description, "
        "coalesce((SELECT jsonb_agg(jsonb_build_object('name', a.name, 'value', v.value) ORDER BY a.position, "
        "a.name) FROM product_attribute_values v JOIN attributes a ON a.id = v.attribute_id "
        "WHERE v.product_id = p.id), '[]') AS attributes, "
        "coalesce((SELECT jsonb_agg(jsonb_build_object('slug', c.slug, 'title', c.title) ORDER BY c.title) "
        "FROM collection_products cp JOIN collections c ON c.id = cp.collection_id "
        "WHERE cp.product_id = p.id AND c.published), '[]') AS collections, p.updated_at "
        "FROM products p WHERE p.slug = %s AND p.status = 'active'",
        (slug,),
    )
    if row is None:
        raise NotFound(say("storefront.no_product", slug=slug))
    return row


def categories(db: Database) -> list[Row]:
    return db.all(
        "SELECT c.slug, c.name, c.description, (SELECT slug FROM categories x WHERE x.id = c.parent_id) "
        "AS parent, (SELECT count(*) FROM products p WHERE p.category_id = c.id AND p.status = 'active') "
        "AS product_count FROM categories c ORDER BY c.position, c.name"
    )


def collections(db: Database) -> list[Row]:
    return db.all(
        "SELECT c.slug, c.title, c.description, (SELECT count(*) FROM collection_products cp "
        "JOIN products p ON p.id = cp.product_id WHERE cp.collection_id = c.id AND p.status = 'active') "
        "AS product_count FROM collections c WHERE c.published ORDER BY c.title"
    )


def search(db: Database, q: SearchQuery) -> dict[str, Any]:
    text = q.q.strip()
    params: dict[str, Any] = {
        "tsq": tsquery(text) or "",
        "tag": text.lower(),
        "limit": q.limit + 1,
        "offset": q.offset,
    }
    rows = db.all(
        f"SELECT {CARD} FROM products p WHERE p.status = 'active' AND ("  # noqa: S608
        "(%(tsq)s <> '' AND p.search @@ to_tsquery('simple', %(tsq)s)) OR %(tag)s = ANY(p.tags)) "
        "ORDER BY CASE WHEN %(tsq)s <> '' THEN ts_rank(p.search, to_tsquery('simple', %(tsq)s)) ELSE 0 END "
        "DESC, lower(p.title), p.id LIMIT %(limit)s OFFSET %(offset)s",
        params,
    )
    return page_of(rows, q.offset, q.limit)


POST = """
  b.slug, b.title, b.excerpt, b.cover_image, b.published_at, b.tags,
  (SELECT jsonb_build_object('slug', c.slug, 'name', c.name) FROM blog_categories c WHERE c.id = b.category_id)
    AS category"""


def posts(db: Database, q: PostsQuery) -> dict[str, Any]:
    rows = db.all(
        f"SELECT {POST} FROM blog_posts b WHERE b.status = 'published' "  # noqa: S608
        "ORDER BY b.published_at DESC, b.id LIMIT %s OFFSET %s",
        (q.limit + 1, q.offset),
    )
    return page_of(rows, q.offset, q.limit)


def post(db: Database, slug: str) -> Row:
    row = db.one(
        f"SELECT {POST}, b.body, b.seo_title, b.seo_description FROM blog_posts b "  # noqa: S608
        "WHERE b.slug = %s AND b.status = 'published'",
        (slug,),
    )
    if row is None:
        raise NotFound(say("storefront.no_post", slug=slug))
    return row


def shipping_methods(db: Database, q: ShippingQuery) -> dict[str, Any]:
    rows = db.all(
        "SELECT m.id, m.name, c.name AS carrier, m.price_cents, m.free_over_cents, m.min_days, m.max_days "
        "FROM shipping_methods m JOIN shipping_zones z ON z.id = m.zone_id "
        "LEFT JOIN shipping_carriers c ON c.id = m.carrier_id AND c.active "
        "WHERE m.active AND %s = ANY(z.countries) ORDER BY m.price_cents, z.position, m.position, m.name",
        (q.country,),
    )
    return {"country": q.country, "items": rows}
