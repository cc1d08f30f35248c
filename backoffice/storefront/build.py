"""Build the shop's storefront: read the shop's public storefront API (BACKOFFICE_API_URL) and write a static
site (pages, assets, product images, and the `_redirects` file whose proxy rule sends /api/storefront/* to the
shop), as the site host runs it on every push and on every catalog change (its build hook).

    python3 storefront/build.py [--out storefront/dist]

Environment: BACKOFFICE_API_URL (required: the shop's base URL), URL (the site's address, set by the site
host; its path is the base of every link), SVC_PLATFORM_URL and SVC_PROJECT_ID (the analytics beacon)."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from string import Template
from urllib.parse import urlsplit

# The storefront's own modules, beside this script (python puts the script's folder first on its path).
from blog import blog_pages
from pages import Page, Renderer, e
from shop_data import DataUnavailable, ShopData, load

HERE = Path(__file__).resolve().parent

MAX_IMAGE_BYTES = 5 * 1024 * 1024
IMAGE_TYPES = {
    "image/jpeg": ".jpg",
    "image/png": ".png",
    "image/webp": ".webp",
    "image/gif": ".gif",
    "image/avif": ".avif",
}
ACCEPT = "image/webp,image/png,image/jpeg,image/gif,image/avif,image/*;q=0.8"


class Images:
    """Product and post images copied into the site, so a page makes no request to another origin."""

    def __init__(self, out: Path, base: str) -> None:
        self.out = out / "images"
        self.base = base
        self.paths: dict[str, str] = {}
        self.failed: list[str] = []

    def fetch(self, urls: set[str]) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        ordered = sorted(urls)
        with ThreadPoolExecutor(8) as pool:
            for url, path in zip(ordered, pool.map(self._fetch, ordered), strict=True):
                if path:
                    self.paths[url] = path
                else:
                    self.failed.append(url)

    def _fetch(self, url: str) -> str | None:
        if urlsplit(url).scheme not in ("http", "https"):
            return None
        try:
            # An image type first in Accept: API Gateway then sends an image the backoffice serves (its
            # /media/ files) as bytes, not as the base64 text its function answers.
            request = urllib.request.Request(url, headers={"Accept": ACCEPT})  # noqa: S310 - http(s) only
            with urllib.request.urlopen(request, timeout=20) as answer:  # noqa: S310 - http(s) only, checked above
                kind = (answer.headers.get("Content-Type") or "").split(";")[0].strip().lower()
                data = answer.read(MAX_IMAGE_BYTES + 1)
        except (OSError, ValueError):
            return None
        suffix = IMAGE_TYPES.get(kind)
        if suffix is None or len(data) > MAX_IMAGE_BYTES:
            return None
        name = hashlib.sha256(url.encode()).hexdigest()[:20] + suffix
        (self.out / name).write_bytes(data)
        return f"{self.base}/images/{name}"

    def src(self, url: str | None) -> str:
        return self.paths.get(url or "", f"{self.base}/assets/placeholder.svg")


def image_urls(data: ShopData) -> set[str]:
    urls = {i.get("url") for p in data.products for i in (p.get("images") or [p.get("image") or {}])}
    urls |= {p.get("cover_image") for p in data.posts}
    return {u for u in urls if isinstance(u, str) and u}


def render_page(
    layout: Template, page: Page, data: ShopData, settings: dict[str, str], images: Images
) -> str:
    store = data.store
    name = str(store.get("name") or "Our shop")
    base, site_url = settings["base"], settings["site_url"]
    canonical = f"{site_url}/{page.path.removesuffix('index.html')}".replace("/404.html", "/")
    og_image = (
        f'<meta property="og:image" content="{e(site_url + images.src(page.image)[len(base) :])}">\n'
        if page.image
        else ""
    )
    contact = store.get("contact_email")
    closed = not store.get("checkout_open")
    return layout.substitute(
        lang=e(store.get("locale") or "en"),
        base=e(base),
        site=e(settings["project_id"]),
        beacon=e(settings["beacon"]),
        beacon_origin=e(settings["beacon_origin"]),
        title=e(page.title),
        description=e(page.description),
        og_type=page.og_type,
        og_image=og_image,
        canonical=e(canonical),
        version=settings["version"],
        store_name=e(name),
        blog_link=f'<a href="{e(base)}/blog/">Blog</a>' if data.posts else "",
        notice=(
            f'<div class="banner" role="note">{e(store.get("checkout_message") or "Checkout is not open yet.")}</div>'
            if closed
            else ""
        ),
        body=page.body,
        year=datetime.now(UTC).year,
        contact=f'<p><a href="mailto:{e(contact)}">{e(contact)}</a></p>' if contact else "",
    )


def settings_from(environ: dict[str, str]) -> dict[str, str]:
    api = (environ.get("BACKOFFICE_API_URL") or "").rstrip("/")
    if not api.startswith(("http://", "https://")):
        raise SystemExit(
            "BACKOFFICE_API_URL must be the shop's http(s) address; set it in the site's environment."
        )
    site_url = (environ.get("URL") or "").rstrip("/")
    platform = (environ.get("SVC_PLATFORM_URL") or "").rstrip("/")
    project_id = environ.get("SVC_PROJECT_ID") or (api.rsplit("/shops/", 1)[1] if "/shops/" in api else "")
    beacon = f"{platform}/api/analytics/collect" if platform and project_id else ""
    origin = urlsplit(platform)
    return {
        "api": api,
        "site_url": site_url,
        "base": urlsplit(site_url).path.rstrip("/"),
        "project_id": project_id if beacon else "",
        "beacon": beacon,
        "beacon_origin": f"{origin.scheme}://{origin.netloc}" if beacon else "",
        "version": hashlib.sha256(
            (HERE / "assets" / "site.css").read_bytes() + (HERE / "assets" / "store.js").read_bytes()
        ).hexdigest()[:10],
    }


def build(out: Path, environ: dict[str, str]) -> dict[str, object]:
    started = time.monotonic()
    settings = settings_from(environ)
    data = load(settings["api"])
    loaded = time.monotonic()
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(HERE / "assets", out / "assets")
    images = Images(out, settings["base"])
    images.fetch(image_urls(data))
    render = Renderer(data, settings["base"], images.src)
    pages = [render.home(), *render.catalog_pages(), *(render.product(p) for p in data.products)]
    pages += [render.cart(), render.checkout(), render.order(), *blog_pages(render), render.not_found()]
    layout = Template((HERE / "templates" / "layout.html").read_text(encoding="utf-8"))
    for page in pages:
        target = out / page.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_page(layout, page, data, settings, images), encoding="utf-8")
    # The proxy rule names the shop's address, known only from the site's environment: written at build time.
    (out / "_redirects").write_text(
        f"/api/storefront/*  {settings['api']}/api/storefront/:splat  200\n", encoding="utf-8"
    )
    report: dict[str, object] = {
        "products": len(data.products),
        "pages": len(pages),
        "api_requests": data.requests,
        "images": len(images.paths),
        "images_failed": len(images.failed),
        "seconds_reading": round(loaded - started, 2),
        "seconds_total": round(time.monotonic() - started, 2),
    }
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the shop's static storefront.")
    parser.add_argument("--out", default=str(HERE / "dist"), help="where to write the site")
    args = parser.parse_args(argv)
    try:
        report = build(Path(args.out), dict(os.environ))
    except DataUnavailable as failed:
        print(
            f"The shop's catalog could not be read, so the storefront was not built: {failed}",
            file=sys.stderr,
        )
        return 2
    print("Storefront built: " + json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
