"""The storefront API's routes (docs/storefront-api.md): no session, behind the CORS gate."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import Response
from pydantic import BaseModel

from svc_backoffice.data.db import database
from svc_backoffice.edge.api_router import ApiRouter, _declare, late
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


def _shows(
    rule: str,
    read: Callable[..., Any],
    query: type[BaseModel] | None = None,
    *,
    modified: bool = True,
    summary: str,
) -> None:
    """GET `rule`, a cacheable read of `read(db, q)` with the query string read as `query` (400 when it does not
    fit), else of `read(db, slug)` with the path's slug (404 for none); a list is answered as
    `{"items": [...]}`. Dated by the catalogue's last change unless not `modified`."""
    read = late(read)

    def show(**slug: str) -> Response:
        args = (http.query(api, query),) if query is not None else tuple(slug.values())

        def produce() -> Any:
            answer = read(database(), *args)
            return {"items": answer} if isinstance(answer, list) else answer

        return _reads(produce, modified=modified)

    answers = "200 304" + (" 400" if query else "") + (" 404" if "<slug>" in rule else "")
    api.public("GET", rule, answers=answers, summary=summary)(show)


_shows("/products", catalog.products, ProductsQuery, summary="Active products, paged and filtered")
_shows("/products/<slug>", catalog.product, summary="One active product by its slug")
_shows("/categories", catalog.categories, summary="Categories with active product counts")
_shows("/collections", catalog.collections, summary="Published collections")
_shows("/search", catalog.search, SearchQuery, summary="Search active products")
_shows("/blog/posts", catalog.posts, PostsQuery, summary="Published blog posts, newest first")
_shows("/blog/posts/<slug>", catalog.post, summary="One published blog post")
_shows(
    "/shipping-methods",
    catalog.shipping_methods,
    ShippingQuery,
    modified=False,
    summary="Shipping methods to a country",
)


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
