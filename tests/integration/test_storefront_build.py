"""The storefront's build script (backoffice/storefront/build.py) run as the site host runs it, against a
shop's storefront API over HTTP (test data in the documented shape): the pages it writes, the proxy rule,
images copied onto the site, and a clear failure when the catalog cannot be read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from storefront_double import ShopApi, serve  # noqa: E402

SCRIPT = ROOT / "backoffice" / "storefront" / "build.py"


def run(out: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["python3", str(SCRIPT), "--out", str(out)],
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_build_writes_every_page_from_the_api(tmp_path: Path):
    with serve(ShopApi(30)) as shop:
        done = run(tmp_path, BACKOFFICE_API_URL=shop.base, URL="https://northside.example")
    assert done.returncode == 0, done.stderr
    assert '"products": 30' in done.stdout
    pages = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.html")}
    assert {
        "index.html",
        "404.html",
        "products/index.html",
        "cart/index.html",
        "checkout/index.html",
    } <= pages
    assert {"order/index.html", "blog/index.html", "blog/how-we-roast/index.html"} <= pages
    assert {
        "categories/coffee/index.html",
        "categories/gear/index.html",
        "collections/new-arrivals/index.html",
    } <= pages
    assert sum(p.startswith("products/") and p != "products/index.html" for p in pages) == 30
    assert (
        tmp_path / "_redirects"
    ).read_text() == f"/api/storefront/*  {shop.base}/api/storefront/:splat  200\n"
    collection = (tmp_path / "collections/new-arrivals/index.html").read_text()
    assert collection.index("Kenya Nyeri") < collection.index("Ethiopia Guji")  # the collection's own order
    product = (tmp_path / "products/ethiopia-guji/index.html").read_text()
    assert '<link rel="canonical" href="https://northside.example/products/ethiopia-guji/">' in product
    assert 'href="/products/"' in product  # links from the site's root on the real host
    assert shop.base not in product  # images copied onto the site: no request to another origin
    assert len(list((tmp_path / "images").iterdir())) == 6
    # asked for as images (Accept), they arrive as bytes, not as API Gateway's base64 text
    assert all(f.read_bytes().startswith(b"\x89PNG") for f in (tmp_path / "images").iterdir())
    assert 'data-beacon=""' in product  # no platform named: no beacon


def test_links_carry_the_sites_base_path_and_the_beacon_names_the_shop(tmp_path: Path):
    with serve(ShopApi(3)) as shop:
        done = run(
            tmp_path,
            BACKOFFICE_API_URL=f"{shop.base}",
            URL="http://127.0.0.1:9/sites/northside",
            SVC_PLATFORM_URL="https://platform.example",
            SVC_PROJECT_ID="p_abc",
        )
    assert done.returncode == 0, done.stderr
    home = (tmp_path / "index.html").read_text()
    assert 'href="/sites/northside/products/"' in home
    assert (
        'data-beacon="https://platform.example/api/analytics/collect"' in home and 'data-site="p_abc"' in home
    )
    assert "connect-src 'self' https://platform.example;" in home


def test_an_unreachable_catalog_fails_the_build_in_words(tmp_path: Path):
    with serve(ShopApi(1)) as shop:
        base = shop.base
    done = run(tmp_path / "out", BACKOFFICE_API_URL=base)
    assert done.returncode == 2
    assert "The shop's catalog could not be read, so the storefront was not built" in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["", "ftp://shop.example"])
def test_a_missing_shop_address_is_said(tmp_path: Path, value: str):
    done = run(tmp_path, BACKOFFICE_API_URL=value)
    assert done.returncode == 1
    assert "BACKOFFICE_API_URL must be the shop's http(s) address" in done.stderr
