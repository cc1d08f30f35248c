"""The storefront API's routes (docs/storefront-api.md): no session, behind the CORS gate."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.data.db import database
from svc_backoffice.edge.api_router import ApiRouter, _declare
from svc_backoffice.edge.routes import Route
from svc_backoffice.edge.web import json_response
from svc_backoffice.storefront import catalog, checkout, http
from svc_backoffice.storefront.models import (
    Checkout,
    CouponCheck,
    PostsQuery,
    ProductsQuery,
    SearchQuery,
    ShippingQuery,
)


class StorefrontRouter(ApiRouter):
    """Public routes: declared like the others (no role), each behind the CORS gate, each path with its
    OPTIONS preflight."""

    def public(self, method: str, rule: str, *, answers: str, summary: str) -> Callable[..., Any]:
        path = (self.prefix + rule).replace("<", "[").replace(">", "]")
        route = Route(method, path, None, "storefront", None, None, answers, summary)
        self.declared.append(route)
        if not any(r.path == path and r.method == "OPTIONS" for r in self.declared):
            options = Route("OPTIONS", path, None, "storefront", None, None, "204", "CORS preflight")
            self.declared.append(options)
            self.route(rule, "OPTIONS")(lambda **_: http.preflight(self))
        return self.route(rule, method, middlewares=[_declare(route), http.cors_gate])


api = StorefrontRouter("/api/storefront")


def _reads(produce: Callable[[], Any], *, modified: bool = True) -> Response:
    stamp = catalog.last_change(database()) if modified else None
    return http.cached(api, produce, stamp)


@api.public("GET", "/store", answers="200 304", summary="Store name, currency, locale, checkout open or not")
def store() -> Response:
    db = database()
    return _reads(lambda: catalog.store(db, checkout.is_open(db)))


@api.public("GET", "/products", answers="200 304 400", summary="Active products, paged and filtered")
def products() -> Response:
    q = http.query(api, ProductsQuery)
    return _reads(lambda: catalog.products(database(), q))


@api.public("GET", "/products/<slug>", answers="200 304 404", summary="One active product by its slug")
def product(slug: str) -> Response:
    return _reads(lambda: catalog.product(database(), slug))


@api.public("GET", "/categories", answers="200 304", summary="Categories with active product counts")
def categories() -> Response:
    return _reads(lambda: {"items": catalog.categories(database())})


@api.public("GET", "/collections", answers="200 304", summary="Published collections")
def collections() -> Response:
    return _reads(lambda: {"items": catalog.collections(database())})


@api.public("GET", "/search", answers="200 304 400", summary="Search active products")
def search() -> Response:
    q = http.query(api, SearchQuery)
    return _reads(lambda: catalog.search(database(), q))


@api.public("GET", "/blog/posts", answers="200 304 400", summary="Published blog posts, newest first")
def posts() -> Response:
    q = http.query(api, PostsQuery)
    return _reads(lambda: catalog.posts(database(), q))


@api.public("GET", "/blog/posts/<slug>", answers="200 304 404", summary="One published blog post")
def post(slug: str) -> Response:
    return _reads(lambda: catalog.post(database(), slug))


@api.public("GET", "/shipping-methods", answers="200 304 400", summary="Shipping methods to a country")
def shipping_methods() -> Response:
    q = http.query(api, ShippingQuery)
    return _reads(lambda: catalog.shipping_methods(database(), q), modified=False)


@api.public("POST", "/coupons/check", answers="200 400 403 404 415 422", summary="What a coupon takes off")
def coupon_check() -> Response:
    return json_response(200, checkout.check_coupon(database(), http.body(api, CouponCheck)))


@api.public(
    "POST",
    "/checkout",
    answers="201 400 403 404 409 415 422 429 503",
    summary="Reserve the stock, create the pending order, answer the hosted payment page",
)
def create_checkout() -> Response:
    body = http.body(api, Checkout)
    return json_response(201, checkout.checkout(database(), body, http.client_address(api)))


@api.public("GET", "/orders/<token>", answers="200 404", summary="The order a checkout token names")
def order(token: str) -> Response:
    return json_response(200, checkout.order_by_token(database(), token))


ROUTERS = (api,)
