"""The static_host sandbox's edge, as a shopper's browser and the shop's backend see it: a proxied answer kept
for its s-maxage is the origin's answer (body and validators), a conditional read is answered 304 by the edge,
a new deploy or a restored one invalidates what the edge kept, and a deploy's own files are the ones served."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator

import httpx
import pytest
from localhttp import QuietHandler, sandbox_hosts, serving

from svc_local.providers import SandboxCredentials, build_providers
from svc_local.sandbox import Sandbox

BUILD = b"""
import os, pathlib
out = pathlib.Path("public")
out.mkdir(exist_ok=True)
(out / "index.html").write_text("<h1>Shop</h1>" + pathlib.Path("VERSION").read_text())
(out / "_redirects").write_text("/api/* " + os.environ["ORIGIN"] + "/api/:splat 200\\n")
"""
TOML = b'[build]\ncommand = "python3 build.py"\npublish = "public"\n'


class Catalog(QuietHandler):
    """The shop's backend: /api/products is its catalog (ETag from the body, kept 60 s by shared caches)."""

    body = b'{"items": ["mug"]}'
    requests: list[str] = []

    def do_GET(self) -> None:
        Catalog.requests.append(self.path)
        tag = '"' + hashlib.sha256(Catalog.body).hexdigest()[:16] + '"'
        headers = [
            ("Cache-Control", "public, max-age=0, s-maxage=60"),
            ("ETag", tag),
            ("Last-Modified", "Fri, 27 Nov 2026 12:00:00 GMT"),
        ]
        if self.headers.get("If-None-Match") == tag:
            self.reply(304, "application/json", b"", headers)
        else:
            self.reply(200, "application/json", Catalog.body, headers)


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    with serving(Catalog) as url:
        yield url


@pytest.fixture(scope="module")
def site(creds: SandboxCredentials, origin: str) -> Iterator[dict]:
    with Sandbox("127.0.0.1", 0, build_providers(None, creds, build_delay=0.05), quiet=True) as box:
        github, netlify = sandbox_hosts(box.url)
        repo = github.create_repo("edge-shop")
        owner, name = repo.full_name.split("/")
        made = netlify.create_site(name="edge-shop", repo_path=repo.full_name, branch="main")
        netlify.set_env(made.account_id, made.id, {"ORIGIN": origin})
        found = {"github": github, "netlify": netlify, "owner": owner, "name": name, "site": made}
        deploy(found, b"v1")
        yield found


def deploy(site: dict, version: bytes) -> dict:
    """Push a version of the storefront and wait until its deploy is live."""
    github, netlify = site["github"], site["netlify"]
    files = {"netlify.toml": TOML, "build.py": BUILD, "VERSION": version}
    sha = str(
        github.commit_files(site["owner"], site["name"], "main", files, f"Storefront {version.decode()}")
    )
    deadline = time.monotonic() + 60
    while True:
        found = list(netlify.request("GET", f"/sites/{site['site'].id}/deploys"))
        if found and found[0]["commit_ref"] == sha and found[0]["state"] in ("ready", "error"):
            assert found[0]["state"] == "ready", found[0]
            return found[0]
        assert time.monotonic() < deadline, found
        time.sleep(0.05)


def products(site: dict, **headers: str) -> httpx.Response:
    return httpx.get(f"{site['site'].ssl_url}api/products", headers=headers)


PASSED_ON = ("content-type", "cache-control", "etag", "last-modified")


def test_the_edges_copy_is_the_origins_answer(site: dict, origin: str) -> None:
    direct = httpx.get(f"{origin}/api/products")
    Catalog.requests.clear()
    missed, kept = products(site), products(site)
    assert missed.headers["cache-status"] == '"Netlify Edge"; fwd=miss'  # the first read since the deploy
    assert kept.headers["cache-status"] == '"Netlify Edge"; hit'
    for answer in (missed, kept):
        assert (answer.status_code, answer.content) == (200, direct.content)
        assert [answer.headers[h] for h in PASSED_ON] == [direct.headers[h] for h in PASSED_ON]
    assert int(kept.headers["age"]) >= 0
    assert Catalog.requests == ["/api/products"]  # the miss only


def test_a_conditional_read_is_answered_304_by_the_edge(site: dict) -> None:
    current = products(site)
    Catalog.requests.clear()
    unchanged = products(site, **{"If-None-Match": current.headers["etag"]})
    assert (unchanged.status_code, unchanged.content) == (304, b"")
    assert unchanged.headers["etag"] == current.headers["etag"]
    other = products(site, **{"If-None-Match": '"something-else"'})
    assert (other.status_code, other.content) == (200, current.content)
    assert Catalog.requests == []  # both from the edge's copy


def test_a_new_deploy_and_a_restored_one_invalidate_the_edge(site: dict) -> None:
    before = products(site)
    first_live = site["netlify"].request("GET", f"/sites/{site['site'].id}/deploys")[0]
    Catalog.body = b'{"items": ["mug", "beans"]}'  # the catalog changed at the origin
    try:
        still = products(site)
        assert (still.content, still.headers["cache-status"]) == (before.content, '"Netlify Edge"; hit')
        deploy(site, b"v2")
        Catalog.requests.clear()
        after = products(site)
        assert after.content == b'{"items": ["mug", "beans"]}'
        assert after.headers["etag"] != before.headers["etag"]
        assert Catalog.requests == ["/api/products"]  # asked again once, then kept again
        assert products(site).headers["cache-status"] == '"Netlify Edge"; hit'
        assert httpx.get(site["site"].ssl_url).text == "<h1>Shop</h1>v2"  # the new deploy's own files
        Catalog.requests.clear()
        restored = site["netlify"].request(
            "POST", f"/sites/{site['site'].id}/deploys/{first_live['id']}/restore"
        )
        assert restored["published"] is True
        assert httpx.get(site["site"].ssl_url).text == "<h1>Shop</h1>v1"
        products(site)
        assert Catalog.requests == ["/api/products"]
    finally:
        Catalog.body = b'{"items": ["mug"]}'


@pytest.mark.parametrize("path", ["..%2F..%2Fnetlify.json", "%2e%2e/build.py", "./index.html/../../x"])
def test_no_path_leaves_the_deploys_own_files(site: dict, path: str) -> None:
    answer = httpx.get(f"{site['site'].ssl_url}{path}")
    assert answer.status_code == 404
    assert "deploys" not in answer.text and "import" not in answer.text
