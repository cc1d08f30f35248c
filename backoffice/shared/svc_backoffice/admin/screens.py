"""Every admin screen on the one page router: importing a screen's module declares its pages."""

from __future__ import annotations

from svc_backoffice.admin import content, home, orders, people, products, settings, setup  # noqa: F401 - each screen's module declares its pages
from svc_backoffice.admin.pages import not_found_page, router

ROUTERS = (router,)

__all__ = ["ROUTERS", "not_found_page"]
