"""Registers the admin screens' page benchmark: the Products page (and Home, a product's page) of the backoffice
at 100,000 products, server time per page through the admin function's handler, each page's rows checked
against the seed (bench_backoffice.seeded_shop, the seed and its row-by-row model)."""

from __future__ import annotations

import re
import statistics
import time
from typing import Any

from bench.harness import Context, Result, Target, benchmark

TARGET_MS = 50  # a page's server time: the database's part and the HTML's
REPEATS = 15
PAGE_SIZE = 25  # admin/products.py PAGE_SIZE

# The Products page's query (as its filters and pager write it) -> the API's filters it stands for.
CASES = {
    "first page": "",
    "search a word": "q=walnut",
    "search a code": "q=4242",
    "filter: status": "status=draft",
    "filter: category": "category={category}",
    "filter: low stock": "stock=low",
    "filters + sort by price": "status=active&type=physical&category={category}&sort=price-low",
    "deep page (offset 50,000)": "offset=50000",
    "last page (offset 99,975)": "offset=99975",
    "deep filtered page (offset 20,000)": "status=active&sort=title&offset=20000",
}
ROW = re.compile(r'<td data-label="Product"><a href="/products/[0-9a-f-]{36}">')


def _api_query(query: str) -> str:
    """The page's filters as GET /api/products names them (for the seed's model of what matches)."""
    names = {"category": "category_id"}
    parts = []
    for pair in (p for p in query.split("&") if p):
        name, value = pair.split("=", 1)
        if name == "stock":
            parts.append(f"{value}_stock=true")
        elif name not in ("sort", "offset"):
            parts.append(f"{names.get(name, name)}={value}")
    return "&".join(parts)


def _problems(body: str, matching: int, offset: int) -> list[str]:
    rows = len(ROW.findall(body))
    wanted = max(0, min(PAGE_SIZE, matching - offset))
    problems = [] if rows == wanted else [f"{rows} rows, expected {wanted}"]
    if ('rel="next"' in body) != (matching > offset + PAGE_SIZE):
        problems.append(f"next link wrong with {matching} matching")
    return problems


def _time(handler: Any, event: dict[str, Any], context: Any, db: Any) -> tuple[float, float, str]:
    first = handler(event, context)
    assert first["statusCode"] == 200, first["statusCode"]
    timings = []
    before = db.queries
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        result = handler(event, context)
        timings.append((time.perf_counter() - t0) * 1000)
        assert result["statusCode"] == 200
    return round(statistics.median(timings), 2), (db.queries - before) / REPEATS, first["body"]


@benchmark(
    "backoffice-admin-pages",
    "Backoffice admin screens at 100,000 products: the Products page, per filter and page",
    on_import_error="the backoffice is not importable",
)
def admin_pages(ctx: Context) -> Result:
    from bench.bench_backoffice import PRODUCTS, _Context, _event, expected_rows, seeded_row, seeded_shop

    rows: list[list[str]] = []
    medians: dict[str, float] = {}
    wrong: list[str] = []
    with seeded_shop() as shop:
        from backoffice.functions.admin.app import handler

        seeded = [seeded_row(i) for i in range(1, PRODUCTS + 1)]
        page = {"Accept": "text/html"}
        for case, query in CASES.items():
            filled = query.format(category=shop["category"])
            matching = len(expected_rows(_api_query(query), seeded))
            offset = int(dict(p.split("=", 1) for p in query.split("&") if p).get("offset", 0))
            event = _event("/products", filled, shop["cookie"])
            event["headers"].update(page)
            median, queries, body = _time(handler, event, _Context(), shop["db"])
            problems = _problems(body, matching, offset)
            wrong += [case] if problems else []
            medians[case] = median
            rows.append(
                [
                    f"Products: {case}",
                    f"{median:.2f}",
                    f"{queries:.0f}",
                    f"{matching:,}",
                    "; ".join(problems) or "as seeded",
                ]
            )
        for case, path in (("Home", "/"), ("a product's page", f"/products/{shop['product']}")):
            event = _event(path, "", shop["cookie"])
            event["headers"].update(page)
            median, queries, _ = _time(handler, event, _Context(), shop["db"])
            medians[case] = median
            rows.append([case, f"{median:.2f}", f"{queries:.0f}", "", "200"])
        seed_seconds = shop["seed_seconds"]
    worst = max(medians, key=lambda case: medians[case])
    return Result(
        status="failed" if wrong else "ok",
        columns=["page", "median ms", "queries", "matching products", "page checked"],
        rows=rows,
        targets=[
            Target(
                f"admin page server time at {PRODUCTS:,} products, every case (worst)",
                f"< {TARGET_MS} ms",
                f"{medians[worst]:.2f} ms ({worst})",
                medians[worst] < TARGET_MS,
            ),
            Target(
                "each Products page shows the seed's rows (row count, next link)",
                f"{len(CASES)} of {len(CASES)}",
                f"{len(CASES) - len(wrong)} of {len(CASES)}"
                + (f" (wrong: {', '.join(wrong)})" if wrong else ""),
                not wrong,
            ),
        ],
        notes=[
            f"{PRODUCTS:,} products seeded in {seed_seconds} s (bench_backoffice.SEED: 50 categories, five statuses, "
            "six types, stock from -20 to 179), then VACUUM (ANALYZE); a viewer's session. Median of "
            f"{REPEATS} requests per page through the admin function's handler (backoffice/functions/admin/app.py:"
            " session and role gate, the page's queries, the Jinja2 HTML), PostgreSQL 15 at 127.0.0.1; `queries` "
            "counts the statements of one request, the gate's included.",
            "Each Products page is checked outside the timing against the seed's model (bench_backoffice."
            f"expected_rows): {PAGE_SIZE} rows a page, or what is left at the offset, and the Next link exactly when "
            "more rows match.",
            "Found by the first run of this benchmark (same machine, load about 15): the first page took 105 ms, a "
            "deep page 162 ms, the last page 212 ms and a deep filtered page 262 ms. Two causes, both fixed: every "
            "Products page and product page counted each category's products for its category select (a pass over "
            "all 100,000 rows, 50 ms; now catalog.category_choices, no counts), and a deep page read every row it "
            "skipped. list_products now takes a deep page's ids from the sort's index alone (an index-only scan: "
            "migration 0015 adds the status tabs' indexes per sort and the title to the title sort's index) and "
            "reads only that page's rows. An offset still costs a walk through the index up to it: the last page "
            "is the slowest case.",
        ],
    )
