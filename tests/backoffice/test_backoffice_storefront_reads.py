"""The public storefront API's reads on a hosted shop: what a shopper may see (active products only, no cost,
no stock figure, published collections and posts), its filters and words, caching (ETag, Last-Modified,
Cache-Control, 304) and CORS for the shop's own live origin only."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from storefronthelpers import LIVE, StoreShop, fresh_database, make_shop

pytestmark = pytest.mark.usefixtures("hosted_env")


@pytest.fixture(scope="module")
def shop_url() -> Iterator[str]:
    yield from fresh_database("bo_sf_reads")


@pytest.fixture
def store(hosted_env, shop_url) -> StoreShop:
    return make_shop(hosted_env, shop_url, base="https://api.example.com", storefront_url=LIVE)


def test_drafts_and_archived_products_are_invisible(store):
    store.product("visible-bean")
    store.product("draft-bean", status="draft")
    store.product("old-bean", status="archived")
    listed = store.call("GET", "/api/storefront/products?limit=100")
    assert listed.status == 200, listed.body
    slugs = {p["slug"] for p in listed.json()["items"]}
    assert "visible-bean" in slugs and "draft-bean" not in slugs and "old-bean" not in slugs
    assert store.call("GET", "/api/storefront/products/draft-bean").status == 404
    missing = store.call("GET", "/api/storefront/products/draft-bean").json()
    assert missing == {"error": "There is no product draft-bean in this shop."}
    found = store.call("GET", "/api/storefront/search?q=draft")
    assert found.status == 200 and "draft-bean" not in found.body


def test_a_product_shows_availability_but_no_stock_figure_or_internal_fields(store):
    store.product("plenty-bean", stock=73)
    store.product("few-bean", stock=2)
    store.product("gone-bean", stock=0)
    store.product("service-bean", stock=None)
    by_slug = {p["slug"]: p for p in store.call("GET", "/api/storefront/products?limit=100").json()["items"]}
    assert by_slug["plenty-bean"]["availability"] == "in_stock"
    assert by_slug["few-bean"]["availability"] == "low_stock"
    assert by_slug["gone-bean"]["availability"] == "out_of_stock"
    assert by_slug["service-bean"]["availability"] == "in_stock"
    one = store.call("GET", "/api/storefront/products/plenty-bean").json()
    assert one["title"] == "Plenty Bean" and one["price_cents"] == 1450 and one["currency"] == "EUR"
    for hidden in ("stock_total", "sku", "status", "track_inventory", "low_stock_threshold", "weight_grams"):
        assert hidden not in one
    assert "73" not in str({k: v for k, v in one.items() if k not in ("id", "updated_at")})


def test_category_and_collection_filters_and_published_collections_only(store):
    store.sql("INSERT INTO categories (name, slug) VALUES ('Tea', 'tea') ON CONFLICT DO NOTHING")
    tea = store.product("green-tea")
    store.sql(
        "UPDATE products SET category_id = (SELECT id FROM categories WHERE slug = 'tea') WHERE id = %s",
        (tea,),
    )
    store.product("not-tea")
    store.sql(
        "INSERT INTO collections (title, slug, published) VALUES ('Gifts', 'gifts', true), "
        "('Secret', 'secret', false) ON CONFLICT DO NOTHING"
    )
    store.sql(
        "INSERT INTO collection_products (collection_id, product_id, position) "
        "SELECT id, %s, 0 FROM collections WHERE slug IN ('gifts', 'secret') ON CONFLICT DO NOTHING",
        (tea,),
    )
    in_tea = store.call("GET", "/api/storefront/products?category=tea").json()["items"]
    assert [p["slug"] for p in in_tea] == ["green-tea"] and in_tea[0]["category"] == {
        "slug": "tea",
        "name": "Tea",
    }
    assert [
        p["slug"] for p in store.call("GET", "/api/storefront/products?collection=gifts").json()["items"]
    ] == ["green-tea"]
    assert store.call("GET", "/api/storefront/products?collection=secret").json()["items"] == []
    collections = {c["slug"] for c in store.call("GET", "/api/storefront/collections").json()["items"]}
    assert "gifts" in collections and "secret" not in collections
    categories = {c["slug"]: c for c in store.call("GET", "/api/storefront/categories").json()["items"]}
    assert categories["tea"]["product_count"] >= 1
    bad = store.call("GET", "/api/storefront/products?sort=cheapest")
    assert bad.status == 400 and "sort" in bad.json()["error"]["fieldErrors"]


def test_only_published_posts_are_read(store):
    store.sql(
        "INSERT INTO blog_posts (title, slug, status, published_at, body) VALUES "
        "('Brewing', 'brewing', 'published', now(), 'Hot water.'), ('Soon', 'soon', 'draft', NULL, 'x') "
        "ON CONFLICT DO NOTHING"
    )
    posts = [p["slug"] for p in store.call("GET", "/api/storefront/blog/posts").json()["items"]]
    assert "brewing" in posts and "soon" not in posts
    assert store.call("GET", "/api/storefront/blog/posts/brewing").json()["body"] == "Hot water."
    assert store.call("GET", "/api/storefront/blog/posts/soon").status == 404


def test_shipping_methods_of_a_country(store):
    store.shipping("BE", price=700)
    methods = store.call("GET", "/api/storefront/shipping-methods?country=BE").json()
    assert methods["country"] == "BE" and [m["price_cents"] for m in methods["items"]] == [700]
    assert store.call("GET", "/api/storefront/shipping-methods?country=JP").json()["items"] == []
    assert store.call("GET", "/api/storefront/shipping-methods?country=belgium").status == 400


def test_store_says_checkout_is_not_open_until_payments_are_connected(store):
    info = store.call("GET", "/api/storefront/store").json()
    assert info["checkout_open"] is False
    assert info["checkout_message"] == "Checkout is not open yet: this shop does not take payments yet."
    assert info["currency"] == "EUR" and info["name"]


def test_catalog_reads_are_cacheable_and_answer_304_when_unchanged(store):
    store.product("cache-bean")
    fresh = store.call("GET", "/api/storefront/products/cache-bean")
    # Within the second of a change the date cannot tell copies apart: the ETag alone is the validator.
    assert fresh.status == 200 and "ETag" in fresh.headers and "Last-Modified" not in fresh.headers
    store.sql("UPDATE storefront_changes SET at = at - interval '5 seconds'")  # that second is over
    first = store.call("GET", "/api/storefront/products/cache-bean")
    assert first.status == 200 and first.headers["ETag"] == fresh.headers["ETag"]
    assert first.headers["Cache-Control"] == "public, max-age=60, s-maxage=300, stale-while-revalidate=60"
    tag, modified = first.headers["ETag"], first.headers["Last-Modified"]
    again = store.call("GET", "/api/storefront/products/cache-bean", headers={"If-None-Match": tag})
    assert (again.status, again.body, again.headers["ETag"]) == (304, "", tag)
    since = store.call("GET", "/api/storefront/products/cache-bean", headers={"If-Modified-Since": modified})
    assert since.status == 304
    # A change a shopper sees gives a new tag and a later Last-Modified: the old copy is no longer current.
    store.sql("UPDATE products SET price_cents = 1500 WHERE slug = 'cache-bean'")
    changed = store.call("GET", "/api/storefront/products/cache-bean", headers={"If-None-Match": tag})
    assert changed.status == 200 and changed.json()["price_cents"] == 1500 and changed.headers["ETag"] != tag
    assert (
        store.call(
            "GET",
            "/api/storefront/products/cache-bean",
            headers={"If-Modified-Since": "Thu, 01 Jan 2015 00:00:00 GMT"},
        ).status
        == 200
    )
    # Orders and writes are never cached.
    assert store.call("GET", "/api/storefront/orders/oc_nothing").headers["Cache-Control"] == "no-store"


def test_cors_only_for_the_shops_live_origin(store):
    ours = store.call("GET", "/api/storefront/products", headers={"Origin": LIVE})
    assert ours.headers["Access-Control-Allow-Origin"] == LIVE and "Origin" in ours.headers["Vary"]
    theirs = store.call("GET", "/api/storefront/products", headers={"Origin": "https://evil.example"})
    assert theirs.status == 200 and "Access-Control-Allow-Origin" not in theirs.headers
    preflight = store.call(
        "OPTIONS",
        "/api/storefront/checkout",
        headers={"Origin": LIVE, "Access-Control-Request-Method": "POST"},
    )
    assert preflight.status == 204 and preflight.headers["Access-Control-Allow-Origin"] == LIVE
    assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
    refused_preflight = store.call(
        "OPTIONS", "/api/storefront/checkout", headers={"Origin": "https://evil.example"}
    )
    assert "Access-Control-Allow-Origin" not in refused_preflight.headers
    # A write from another origin is refused in words; from ours it reaches the route (checkout not open).
    body = {"code": "NOPE1"}
    cross = store.call(
        "POST", "/api/storefront/coupons/check", body=body, headers={"Origin": "https://evil.example"}
    )
    assert (cross.status, cross.json()) == (
        403,
        {"error": "This request did not come from this shop's storefront, so it was refused."},
    )
    own = store.call("POST", "/api/storefront/coupons/check", body=body, headers={"Origin": LIVE})
    assert (own.status, own.json()) == (404, {"error": "There is no coupon NOPE1."})
    assert own.headers["Access-Control-Allow-Origin"] == LIVE
    form = store.call(
        "POST", "/api/storefront/coupons/check", raw_body="code=X", headers={"Content-Type": "text/plain"}
    )
    assert form.status == 415


def test_coupon_check_says_why_a_coupon_does_not_apply(store):
    store.product("coupon-bean", price=1000)
    store.sql(
        "INSERT INTO coupons (code, kind, value, ends_at, starts_at) VALUES "
        "('OLD10', 'percent', 10, now() - interval '1 day', now() - interval '2 days'), "
        "('LATER10', 'percent', 10, NULL, now() + interval '1 day'), "
        "('TEN', 'percent', 10, NULL, NULL) ON CONFLICT DO NOTHING"
    )
    store.sql(
        "INSERT INTO coupons (code, kind, value, min_subtotal_cents) VALUES ('BIG5', 'fixed', 500, 5000) "
        "ON CONFLICT DO NOTHING"
    )
    items = [{"slug": "coupon-bean", "quantity": 2}]
    expired = store.call("POST", "/api/storefront/coupons/check", body={"code": "old10", "items": items})
    assert (expired.status, expired.json()) == (422, {"error": "The coupon OLD10 has expired."})
    later = store.call("POST", "/api/storefront/coupons/check", body={"code": "LATER10"})
    assert later.json() == {"error": "The coupon LATER10 is not valid yet."}
    small = store.call("POST", "/api/storefront/coupons/check", body={"code": "BIG5", "items": items})
    assert small.json() == {"error": "The coupon BIG5 needs an order of at least 50.00 EUR."}
    ok = store.call("POST", "/api/storefront/coupons/check", body={"code": "TEN", "items": items})
    assert (
        ok.status == 200
        and ok.json()["discount_cents"] == 200
        and ok.json()["message"] == "10% off your order."
    )
    # Checking does not use the coupon up.
    assert store.sql("SELECT used_count FROM coupons WHERE code = 'TEN'") == [(0,)]


def test_a_self_hosted_backoffice_serves_the_storefront_api_from_its_own_function(db, monkeypatch):
    """The merchant's own deployment: the storefront function, its live origin from STOREFRONT_URL."""
    import importlib

    from bohelpers import LambdaContext, answer_of, build_event

    from svc_backoffice.domain import storefront_settings

    monkeypatch.setenv("STOREFRONT_URL", "https://shop.example")
    storefront_settings.reset()
    db.all(
        "INSERT INTO products (title, slug, status, price_cents, track_inventory) VALUES "
        "('Own bean', 'own-bean', 'active', 900, false), ('Hidden bean', 'hidden-bean', 'draft', 900, false)"
    )
    function = importlib.import_module("backoffice.functions.storefront.app")

    def get(path: str, **headers: str):
        return answer_of(function.handler(build_event("GET", path, headers=headers), LambdaContext()))

    listed = get("/api/storefront/products", Origin="https://shop.example")
    slugs = [p["slug"] for p in listed.json()["items"]]
    assert "own-bean" in slugs and "hidden-bean" not in slugs
    assert listed.headers["Access-Control-Allow-Origin"] == "https://shop.example"
    assert get("/api/storefront/store").json()["checkout_open"] is False
    storefront_settings.reset()
