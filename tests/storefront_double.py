"""A shop's public storefront API in its documented shape (backoffice/docs/storefront-api.md), served from
test data over real HTTP, for storefront builds where no backoffice runs: products (one on sale, one sold out,
one without image), categories, collections, blog posts, PNG images, and a counter of requests."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from imagefiles import png
from localhttp import QuietHandler, serving

COLOURS = [(120, 72, 40), (196, 160, 110), (60, 90, 70), (170, 60, 50), (40, 60, 110), (210, 190, 150)]


def product(n: int, **extra: Any) -> dict[str, Any]:
    slug = extra.pop("slug", f"coffee-{n}")
    item: dict[str, Any] = {
        "id": f"00000000-0000-0000-0000-{n:012d}",
        "slug": slug,
        "title": extra.pop("title", f"Single origin no. {n}"),
        "price_cents": 1200 + 50 * n,
        "compare_at_cents": None,
        "currency": "EUR",
        "image": {"url": f"/img/{n % len(COLOURS)}.png", "alt": f"A bag of coffee no. {n}"},
        "availability": "in_stock",
        "category": {"slug": "coffee", "name": "Coffee"},
        "tags": ["washed"],
        "description": f"Bright and sweet, roasted every week.\n\nCup number {n}: notes of cherry and cocoa.",
        "seo_title": None,
        "seo_description": None,
        "attributes": [{"name": "Origin", "value": "Ethiopia"}, {"name": "Weight", "value": "250 g"}],
        "collections": [],
        "updated_at": "2026-11-27T18:00:00+00:00",
    }
    item.update(extra)
    item["images"] = [item["image"]] if item["image"] else []
    return item


class ShopApi:
    """The test data and its server; `base` is what BACKOFFICE_API_URL would be."""

    def __init__(self, products: int = 6) -> None:
        self.store = {
            "name": "Northside Roasters",
            "currency": "EUR",
            "locale": "en",
            "contact_email": "hello@northside.example",
            "checkout_open": False,
            "checkout_message": "Checkout is not open yet: this shop does not take payments yet.",
        }
        self.products = [product(n) for n in range(1, products + 1)]
        if products >= 3:
            self.products[0].update(
                title="Ethiopia Guji", slug="ethiopia-guji", price_cents=1450, compare_at_cents=1800
            )
            self.products[1].update(title="Kenya Nyeri <AA>", slug="kenya-nyeri", availability="out_of_stock")
            self.products[2].update(
                image=None,
                images=[],
                category={"slug": "gear", "name": "Gear"},
                title="Pour-over kettle",
                slug="kettle",
            )
        self.categories = [
            {
                "slug": "coffee",
                "name": "Coffee",
                "description": "Whole beans.",
                "parent": None,
                "product_count": products - 1,
            },
            {
                "slug": "gear",
                "name": "Gear",
                "description": "Brew at home.",
                "parent": None,
                "product_count": 1,
            },
        ]
        self.collections = [
            {
                "slug": "new-arrivals",
                "title": "New arrivals",
                "description": "Just roasted.",
                "product_count": 2,
            }
        ]
        self.collection_items = {"new-arrivals": ["kenya-nyeri", "ethiopia-guji"]}
        self.posts = [
            {
                "slug": "how-we-roast",
                "title": "How we roast",
                "excerpt": "Small batches, every Tuesday.",
                "cover_image": "/img/1.png",
                "published_at": "2026-11-20T10:00:00+00:00",
                "category": None,
                "tags": [],
                "body": "## Small batches\n\nWe roast **twelve kilos** at a time.\n\n- Light\n- Medium\n\n<script>alert(1)</script>",
                "seo_title": None,
                "seo_description": None,
            }
        ]
        self.requests: list[str] = []
        self.base = ""

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        arg = lambda name, default="": (query.get(name) or [default])[-1]  # noqa: E731
        if path == "/store":
            return 200, self.store
        if path == "/categories":
            return 200, {"items": self.categories}
        if path == "/collections":
            return 200, {"items": self.collections}
        if path == "/products":
            cards = [{k: v for k, v in p.items() if k in CARD} for p in self.products]
            if arg("collection"):
                slugs = self.collection_items.get(arg("collection"), [])
                cards = [next(c for c in cards if c["slug"] == s) for s in slugs]
            offset, limit = int(arg("offset", "0")), int(arg("limit", "24"))
            return 200, {
                "items": cards[offset : offset + limit],
                "offset": offset,
                "limit": limit,
                "has_more": offset + limit < len(cards),
            }
        if path.startswith("/products/"):
            found = [p for p in self.products if p["slug"] == path.split("/", 2)[2]]
            return (
                (200, found[0])
                if found
                else (404, {"error": "There is no product of that name in this shop."})
            )
        if path == "/blog/posts":
            items = [{k: v for k, v in p.items() if k != "body"} for p in self.posts]
            return 200, {"items": items, "offset": 0, "limit": 100, "has_more": False}
        if path.startswith("/blog/posts/"):
            found = [p for p in self.posts if p["slug"] == path.split("/", 3)[3]]
            return (200, found[0]) if found else (404, {"error": "There is no such post."})
        return 404, {"error": "Not found."}


CARD = {
    "id",
    "slug",
    "title",
    "price_cents",
    "compare_at_cents",
    "currency",
    "image",
    "availability",
    "category",
    "tags",
}


@contextmanager
def serve(shop: ShopApi) -> Iterator[ShopApi]:
    class Handler(QuietHandler):
        def do_GET(self) -> None:
            split = urlsplit(self.path)
            shop.requests.append(self.path)
            if split.path.startswith("/img/"):
                body, kind, status = (
                    png(64, 64, COLOURS[int(split.path[5:-4]) % len(COLOURS)]),
                    "image/png",
                    200,
                )
                first = (self.headers.get("Accept") or "").split(",")[0].split(";")[0].strip()
                if not first.startswith("image/"):
                    # as API Gateway answers an image the backoffice serves (image/* being a binary media
                    # type) to a client whose first Accept type is not one: the function's base64 text
                    body = base64.b64encode(body)
            elif split.path.startswith("/api/storefront"):
                status, data = shop.answer(
                    unquote(split.path[len("/api/storefront") :]), parse_qs(split.query)
                )
                body, kind = json.dumps(data).encode(), "application/json"
            else:
                body, kind, status = b"{}", "application/json", 404
            self.reply(status, kind, body, [("Cache-Control", "public, max-age=60, s-maxage=300")])

    with serving(Handler) as base:
        shop.base = base
        for item in [*shop.products, *shop.posts]:
            for key in ("image", "cover_image"):
                value = item.get(key)
                if isinstance(value, dict) and value.get("url", "").startswith("/"):
                    value["url"] = shop.base + value["url"]
                elif isinstance(value, str) and value.startswith("/"):
                    item[key] = shop.base + value
            item["images"] = [item["image"]] if item.get("image") else []
        yield shop
