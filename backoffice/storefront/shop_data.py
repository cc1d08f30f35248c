"""The shop's data for a storefront build, read over HTTP from its public storefront API
(docs/storefront-api.md): the store, categories, collections, every active product and published post.
Standard library only: the site host's build image has Python 3 and no package installer."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

PAGE = 100  # the API's largest page
MAX_ITEMS = 10_000  # the API's largest offset
WORKERS = 8
TIMEOUT = 20.0
ATTEMPTS = 5  # a shop's backoffice just starting (or cold) gets about ten seconds


class DataUnavailable(Exception):
    """The API could not be read: the build stops and the live site stays as it was."""


@dataclass
class ShopData:
    store: dict[str, Any]
    categories: list[dict[str, Any]]
    collections: list[dict[str, Any]]
    products: list[dict[str, Any]]  # full products, newest first
    collection_products: dict[str, list[str]]  # collection slug -> product slugs in the collection's order
    posts: list[dict[str, Any]] = field(default_factory=list)  # full posts, newest first
    requests: int = 0


class Api:
    def __init__(self, base_url: str) -> None:
        self.base = base_url.rstrip("/") + "/api/storefront"
        self.requests = 0

    def get(self, path: str, **query: Any) -> Any:
        url = self.base + path + (f"?{urlencode(query)}" if query else "")
        for attempt in range(ATTEMPTS):
            self.requests += 1
            request = urllib.request.Request(url, headers={"Accept": "application/json"})  # noqa: S310 - http(s)
            try:
                with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:  # noqa: S310 - the shop's URL
                    return json.loads(answer.read().decode("utf-8"))
            except urllib.error.HTTPError as failed:
                if failed.code < 500 or attempt == ATTEMPTS - 1:
                    raise DataUnavailable(f"GET {url} answered {failed.code}: {_words(failed)}") from None
            except (urllib.error.URLError, OSError, ValueError) as failed:
                if attempt == ATTEMPTS - 1:
                    raise DataUnavailable(f"GET {url} failed: {failed}") from None
            time.sleep(attempt + 1)
        raise DataUnavailable(f"GET {url} failed")

    def pages(self, path: str, **query: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        while len(items) < MAX_ITEMS:
            page = self.get(path, limit=PAGE, offset=len(items), **query)
            items.extend(page.get("items") or [])
            if not page.get("has_more") or not page.get("items"):
                break
        return items


def _words(failed: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(failed.read().decode("utf-8"))
    except (ValueError, OSError):
        return failed.reason if isinstance(failed.reason, str) else "error"
    message = body.get("error") if isinstance(body, dict) else None
    return message if isinstance(message, str) else json.dumps(message)


def load(base_url: str) -> ShopData:
    """Everything a build renders, read with a few requests in parallel."""
    api = Api(base_url)
    store = api.get("/store")
    categories = api.get("/categories").get("items") or []
    collections = api.get("/collections").get("items") or []
    cards = api.pages("/products", sort="newest")
    post_cards = api.pages("/blog/posts")
    with ThreadPoolExecutor(WORKERS) as pool:
        products = list(pool.map(lambda c: api.get(f"/products/{quote(c['slug'])}"), cards))
        posts = list(pool.map(lambda p: api.get(f"/blog/posts/{quote(p['slug'])}"), post_cards))
        in_collection = list(
            pool.map(lambda c: [p["slug"] for p in api.pages("/products", collection=c["slug"])], collections)
        )
    return ShopData(
        store=store,
        categories=categories,
        collections=collections,
        products=products,
        collection_products={c["slug"]: slugs for c, slugs in zip(collections, in_collection, strict=True)},
        posts=posts,
        requests=api.requests,
    )
