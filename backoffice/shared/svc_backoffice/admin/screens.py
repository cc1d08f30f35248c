"""Every admin screen on the one page router: importing a screen's module declares its pages."""

from __future__ import annotations

from collections.abc import Iterable

from aws_lambda_powertools.event_handler.router import Router

from svc_backoffice.admin import (  # noqa: F401 - each screen's module declares its pages
    attributes,
    categories,
    collections,
    content,
    discounts,
    home,
    images,
    locations,
    order_entry,
    orders,
    people,
    products,
    settings,
    setup,
    shipping,
)
from svc_backoffice.admin.pages import not_found_page, router
from svc_backoffice.edge.routes import Route

__all__ = ["not_found_page", "routers"]


def routers(api_routes: Iterable[Route]) -> tuple[Router, ...]:
    """The screens' routers, each write gated by the role its API twin has in `api_routes` (the route table,
    handed in by whoever serves both: the screens never import the API's routers)."""
    router.api_roles = {f"{r.method} {r.path}": r.role for r in api_routes if r.role is not None}
    missing = sorted({p.api for p in router.declared if p.api and p.api not in router.api_roles})
    if missing:
        raise LookupError(f"admin pages name API routes the table lacks: {missing}")
    return (router,)
