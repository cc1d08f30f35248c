"""Home (today's and this week's orders and revenue, orders to fulfil, stock running out, the link to the live
storefront) and the static files of the admin screens."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.admin import render
from svc_backoffice.admin.pages import not_found_page, page, router, store_row
from svc_backoffice.data.db import Database, database
from svc_backoffice.domain.storefront_settings import storefront_url

# Orders that count as sales (paid and not refunded or cancelled).
SOLD = ("paid", "processing", "shipped", "delivered")
TO_FULFIL = ("paid", "processing")

FIGURES = """
SELECT count(*) FILTER (WHERE placed_at >= %(today)s) AS today_orders,
       coalesce(sum(total_cents) FILTER (WHERE placed_at >= %(today)s AND status = ANY(%(sold)s)
                                          AND currency = %(currency)s), 0) AS today_revenue,
       count(*) FILTER (WHERE placed_at >= %(week)s) AS week_orders,
       coalesce(sum(total_cents) FILTER (WHERE placed_at >= %(week)s AND status = ANY(%(sold)s)
                                          AND currency = %(currency)s), 0) AS week_revenue
  FROM orders WHERE placed_at >= least(%(today)s, %(week)s)
"""
STOCK = """
SELECT count(*) FILTER (WHERE stock_state = 'out') AS out_count,
       count(*) FILTER (WHERE stock_state = 'low') AS low_count
  FROM products WHERE stock_state IN ('out', 'low')
"""


def bounds(timezone: str, now: datetime | None = None) -> tuple[datetime, datetime]:
    """The start of today and of this week (Monday) in the store's time zone."""
    local = (now or datetime.now(render.zone(timezone))).astimezone(render.zone(timezone))
    today = local.replace(hour=0, minute=0, second=0, microsecond=0)
    return today, today - timedelta(days=today.weekday())


def dashboard(db: Database, settings: dict[str, Any]) -> dict[str, Any]:
    """Home's figures, in four statements (each served by an index at 100,000 products)."""
    today, week = bounds(settings["timezone"])
    figures = db.one(
        FIGURES, {"today": today, "week": week, "sold": list(SOLD), "currency": settings["currency"]}
    )
    stock = db.one(STOCK)
    fulfil = db.all(
        "SELECT id, number, email, status, total_cents, currency, placed_at, count(*) OVER () AS waiting "
        "FROM orders WHERE status = ANY(%s) ORDER BY placed_at LIMIT 5",
        (list(TO_FULFIL),),
    )
    running_out = db.all(
        "SELECT id, title, sku, stock_total, stock_state FROM products WHERE stock_state IN ('out', 'low') "
        "ORDER BY stock_state DESC, created_at DESC LIMIT 5"
    )
    return {
        **(figures or {}),
        **(stock or {}),
        "fulfil": fulfil,
        "waiting": fulfil[0]["waiting"] if fulfil else 0,
        "running_out": running_out,
    }


@router.page("GET", "/")
def home() -> Response:
    settings = store_row()
    return page(
        "home.html",
        nav="home",
        store=settings,
        figures=dashboard(database(), settings),
        storefront=storefront_url(),  # hosted: the Shop's; self-hosted: STOREFRONT_URL
    )


@router.page("GET", "/static/<name>", role=None)
def static(name: str) -> Response:
    found = render.static_file(name)
    if found is None:
        return not_found_page()
    content, kind, etag = found
    return Response(
        status_code=200,
        content_type=kind,
        body=content.decode(),
        headers={"ETag": etag, "Cache-Control": "public, max-age=31536000, immutable"},
    )
