"""The backoffice's route table: every router, by the function (template CodeUri functions/<name>/) serving
it, handed to edge.routes.RouteTable; and the OpenAPI document's router, which describes them all (itself
included). The auth function and the hosted backoffice take their routers from here; docs/routes.md and
openapi.json are written from it (`python -m svc_backoffice.routers.table`)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.core import tenancy
from svc_backoffice.edge import openapi
from svc_backoffice.edge.api_router import ApiRouter
from svc_backoffice.edge.routes import Route, RouteTable
from svc_backoffice.edge.web import json_response
from svc_backoffice.routers import (
    auth,
    blog,
    catalog,
    commerce,
    integrations,
    inventory,
    search,
    settings,
    shipping,
)

__all__ = ["AUTH_ROUTES", "FUNCTIONS", "ROUTERS", "ROUTES", "TABLE", "Route", "document"]

BACKOFFICE = Path(__file__).resolve().parents[3]

# Resources whose routers are implemented, by the function serving them.
FUNCTIONS: dict[str, tuple[str, ...]] = {
    "catalog": ("products", "categories", "attributes", "collections"),
    "inventory": ("inventory",),
    "settings": ("settings", "staff"),
    "search": ("search", "ai"),
    "commerce": ("orders", "customers", "coupons"),
    "shipping": ("shipping", "payments"),
    "blog": ("blog",),
    "integrations": ("integrations", "gsc"),
}

openapi_document = ApiRouter("/openapi.json")


@openapi_document.api(
    "GET",
    role=None,
    answers="200",
    summary="This API's OpenAPI document",
)
def serve_openapi() -> Response:
    served = document()
    shop = tenancy.current_shop()
    if shop is not None:
        # The paths are the shop's, relative to where it is served.
        served = {**served, "servers": [{"url": shop.base_url}]}
    return json_response(200, served, headers={"Cache-Control": "public, max-age=300"})


# Every function's routers, in the route table's order (the API's functions, then auth).
ROUTERS: dict[str, tuple[ApiRouter, ...]] = {
    "catalog": catalog.ROUTERS,
    "inventory": inventory.ROUTERS,
    "settings": settings.ROUTERS,
    "search": search.ROUTERS,
    "commerce": commerce.ROUTERS,
    "shipping": shipping.ROUTERS,
    "blog": blog.ROUTERS,
    "integrations": integrations.ROUTERS,
    "auth": (*auth.ROUTERS, openapi_document),
}

TABLE = RouteTable(tuple(router for group in ROUTERS.values() for router in group), FUNCTIONS)
ROUTES, AUTH_ROUTES = TABLE.routes(), TABLE.auth_routes()
route_files, routes_of, implemented = TABLE.route_files, TABLE.routes_of, TABLE.implemented
function_of, render_markdown = TABLE.function_of, TABLE.render_markdown


@functools.cache
def document() -> dict[str, Any]:
    """The OpenAPI document of the implemented routes (openapi.json)."""
    return openapi.document(TABLE)


def main() -> None:
    """Rewrite docs/routes.md and openapi.json from the routers' declarations."""
    (BACKOFFICE / "docs/routes.md").write_text(render_markdown())
    (BACKOFFICE / "openapi.json").write_text(json.dumps(document(), indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
