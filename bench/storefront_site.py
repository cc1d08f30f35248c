"""A published shop for the storefront benchmark, as tests/backoffice/test_storefront_journey.py sets one up:
a hosted shop on its own migrated database of the machine's PostgreSQL, served over HTTP at /shops/<id> through
`hosting.handle` (tests/backoffice/storefronthelpers.py's front, as the platform's gateway serves it); the
provider sandbox over HTTP (repository host, static host); the template committed to a repository whose site
the static host builds with the storefront's own build against the shop's storefront API.

Counts what reaches the shop: requests (`hosting.handle` calls) and SQL statements (every
`psycopg.Cursor.execute` of this process: only the shop talks to PostgreSQL here once the seed is in)."""

from __future__ import annotations

import contextlib
import random
import sys
import threading
import time
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import psycopg

from bench.harness import ROOT

PRODUCTS = 24
IMAGE_SIDE = 64


@dataclass
class Counts:
    """Requests and SQL statements that reached the shop, with the time of each statement."""

    requests: int = 0
    statements: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self.lock:
            self.requests = 0
            self.statements.clear()


@dataclass
class Published:
    live: str  # the site's live URL on the static host sandbox
    shop_base: str  # the hosted shop's own address (the proxy's upstream)
    counts: Counts
    images_bytes: int  # the size of each product image served to the build


def photo(seed: int) -> bytes:
    """A product image stand-in: a 64 x 64 PNG of coloured noise (4 levels a channel), about 3 KB."""
    rng = random.Random(seed)
    rows = b"".join(
        b"\x00" + bytes(rng.choice((40, 90, 160, 220)) for _ in range(IMAGE_SIDE * 3))
        for _ in range(IMAGE_SIDE)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")

    header = IMAGE_SIDE.to_bytes(4, "big") * 2 + b"\x08\x02\x00\x00\x00"
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


@contextlib.contextmanager
def _images() -> Iterator[str]:
    """The merchant's image host: /img/<n>.png."""
    from localhttp import QuietHandler, serving

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            self.reply(200, "image/png", photo(int(self.path.rsplit("/", 1)[1].split(".")[0])))

    with serving(Handler) as url:
        yield url


def _seed(url: str, images: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for n in range(PRODUCTS):
            conn.execute(
                "INSERT INTO products (title, slug, status, price_cents, description, images, track_inventory) "
                "VALUES (%s, %s, 'active', %s, %s, %s::jsonb, true)",
                (
                    f"Single Origin No. {n + 1}",
                    f"single-origin-{n + 1}",
                    1200 + 50 * n,
                    "Washed, roasted this week, whole bean.",
                    f'[{{"url": "{images}/img/{n}.png", "alt": "A bag of coffee no. {n + 1}"}}]',
                ),
            )
        conn.execute(
            "INSERT INTO inventory_adjustments (product_id, location_id, delta, reason) "
            "SELECT p.id, l.id, 20, 'Received' FROM products p, stock_locations l WHERE l.is_default"
        )


def _count_statements(counts: Counts, monkeypatch: Any) -> None:
    original = psycopg.Cursor.execute

    def execute(self: psycopg.Cursor[Any], *args: Any, **kwargs: Any) -> Any:
        with counts.lock:
            counts.statements.append(time.monotonic())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", execute)


def _count_requests(counts: Counts, monkeypatch: Any) -> None:
    from svc_backoffice.hosting import shops as hosting

    original = hosting.handle

    def handle(*args: Any, **kwargs: Any) -> Any:
        with counts.lock:
            counts.requests += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(hosting, "handle", handle)


@contextlib.contextmanager
def published_shop() -> Iterator[Published]:
    """A hosted shop with PRODUCTS active products (an image each) and its storefront built and live."""
    for folder in ("tests", "tests/backoffice"):
        if str(ROOT / folder) not in sys.path:
            sys.path.insert(0, str(ROOT / folder))
    import pytest
    from bohelpers import migrated_database
    from localhttp import sandbox_hosts
    from storefronthelpers import SELF_HOSTED_VARIABLES, _Front, make_shop

    from svc_backoffice.core import config
    from svc_backoffice.data import db
    from svc_backoffice.domain import storefront_settings
    from svc_local.providers import SandboxCredentials, build_providers
    from svc_local.sandbox import Sandbox
    from svc_shared.domain.publish_template import template_files, template_root

    counts = Counts()
    with (
        pytest.MonkeyPatch.context() as mp,
        Sandbox("127.0.0.1", 0, build_providers(None, SandboxCredentials.generate()), quiet=True) as box,
        migrated_database("bench_storefront") as url,
        _images() as images,
    ):
        for name in SELF_HOSTED_VARIABLES:
            mp.delenv(name, raising=False)
        config.reset_settings()
        storefront_settings.reset()
        front = _Front()
        try:
            github, netlify = sandbox_hosts(box.url)
            name = f"bench-{uuid.uuid4().hex[:6]}"
            repo = github.create_repo(name)
            site = netlify.create_site(name=name, repo_path=repo.full_name, branch="main")
            live = (site.ssl_url or "").rstrip("/")
            store = make_shop(mp, url, base=front.url, storefront_url=live, build_hook_url=site.deploy_hook)
            front.shops[store.shop.id] = store.shop
            _seed(url, images)
            netlify.set_env(
                site.account_id,
                site.id,
                {"BACKOFFICE_API_URL": store.shop.base_url, "SVC_PROJECT_ID": store.shop.id},
            )
            owner, repo_name = repo.full_name.split("/")
            github.commit_files(owner, repo_name, "main", template_files(template_root()), "Shop template")
            deadline = time.monotonic() + 180
            while not (deploys := netlify.deploys(site.id)) or deploys[0].state not in ("ready", "error"):
                if time.monotonic() > deadline:
                    raise RuntimeError("the storefront's first deploy did not finish within 180 s")
                time.sleep(0.3)
            if deploys[0].state != "ready":
                raise RuntimeError(
                    "the storefront did not build: " + netlify.build_log(deploys[0].build_id or "")
                )
            _count_statements(counts, mp)
            _count_requests(counts, mp)
            yield Published(live, store.shop.base_url, counts, len(photo(0)))
        finally:
            front.close()
            db.POOL.close()
            config.reset_settings()
            storefront_settings.reset()
