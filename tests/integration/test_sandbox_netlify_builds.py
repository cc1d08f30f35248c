"""The static_host sandbox builds like the real host: a push to the linked branch deploys, the repository's
build command runs with the site's environment, a failed build leaves the previous deploy live, an earlier
deploy is restored, build hooks build the branch head, and the live site serves content types, redirects,
proxy rewrites cached for the origin's s-maxage, and its 404 page."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from localhttp import QuietHandler, sandbox_hosts, serving

from svc_local.providers import SandboxCredentials, base_urls, build_providers
from svc_local.sandbox import Sandbox
from svc_shared.providers.repo_host import RepoHost
from svc_shared.providers.static_host import StaticHost

BUILD = b"""
import os, pathlib
out = pathlib.Path("public")
(out / "css").mkdir(parents=True, exist_ok=True)
(out / "index.html").write_text("<h1>" + os.environ["SHOP_NAME"] + "</h1>" + pathlib.Path("VERSION").read_text())
(out / "css" / "site.css").write_text("body{margin:0}")
(out / "app.js").write_text("console.log(1)")
(out / "404.html").write_text("<h1>No such page in this shop</h1>")
(out / "products").mkdir(exist_ok=True)
(out / "products" / "mug").mkdir(exist_ok=True)
(out / "products" / "mug" / "index.html").write_text("<h1>Mug</h1>")
(out / "_redirects").write_text(
    "/old-mug /products/mug/ 301\\n/api/* " + os.environ["ORIGIN"] + "/api/:splat 200\\n"
)
print("built for", os.environ["URL"])
"""
TOML = b'[build]\ncommand = "python3 build.py"\npublish = "public"\n'


class Origin(QuietHandler):
    """A shop's backend: counts requests; /api/products is cacheable for 60 s (s-maxage) with an ETag."""

    hits: list[str] = []

    def do_GET(self) -> None:
        Origin.hits.append(self.path)
        if self.path.startswith("/api/products"):
            headers = [("Cache-Control", "public, max-age=0, s-maxage=60"), ("ETag", '"v1"')]
        else:
            headers = [("Cache-Control", "no-store")]
        self.reply(200, "application/json", b'{"products": []}', headers)


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    with serving(Origin) as url:
        yield url


@pytest.fixture(scope="module")
def sandbox(creds: SandboxCredentials) -> Iterator[Sandbox]:
    with Sandbox("127.0.0.1", 0, build_providers(None, creds, build_delay=0.05), quiet=True) as running:
        yield running


@pytest.fixture(scope="module")
def hosts(sandbox: Sandbox) -> tuple[RepoHost, StaticHost]:
    return sandbox_hosts(sandbox.url)


def deploys(netlify: StaticHost, site_id: str) -> list[dict]:
    return list(netlify.request("GET", f"/sites/{site_id}/deploys"))


def settled(netlify: StaticHost, site_id: str, count: int, seconds: float = 60) -> list[dict]:
    """The site's deploys once there are `count` and none is still building, newest first."""
    deadline = time.monotonic() + seconds
    while True:
        found = deploys(netlify, site_id)
        if len(found) >= count and all(d["state"] in ("ready", "error") for d in found):
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.05)


@pytest.fixture(scope="module")
def shop(hosts: tuple[RepoHost, StaticHost], origin: str) -> dict:
    """A repository with a build, linked to a site: pushes land on it through the Git Data API."""
    github, netlify = hosts
    repo = github.create_repo("built-shop")
    owner, name = repo.full_name.split("/")
    site = netlify.create_site(name="built-shop", repo_path=repo.full_name, branch="main")
    netlify.set_env(site.account_id, site.id, {"SHOP_NAME": "Roastery", "ORIGIN": origin})
    return {"github": github, "netlify": netlify, "owner": owner, "name": name, "site": site}


def push(shop: dict, files: dict[str, bytes], message: str) -> str:
    return str(shop["github"].commit_files(shop["owner"], shop["name"], "main", files, message))


def test_a_push_builds_and_goes_live_with_content_types(shop: dict):
    netlify, site = shop["netlify"], shop["site"]
    sha = push(shop, {"netlify.toml": TOML, "build.py": BUILD, "VERSION": b"v1"}, "Storefront v1")
    newest = settled(netlify, site.id, 1)[0]
    assert (newest["state"], newest["commit_ref"], newest["title"], newest["published"]) == (
        "ready",
        sha,
        "Storefront v1",
        True,
    )
    log = netlify.request("GET", f"/builds/{newest['build_id']}/log")["log"]
    assert f"built for {site.ssl_url.rstrip('/')}" in log  # the host's own URL variable reached the build
    home = httpx.get(site.ssl_url)
    assert (home.status_code, home.text) == (200, "<h1>Roastery</h1>v1")  # the site's variable too
    assert home.headers["content-type"] == "text/html; charset=utf-8"
    assert httpx.get(f"{site.ssl_url}css/site.css").headers["content-type"] == "text/css; charset=utf-8"
    assert httpx.get(f"{site.ssl_url}app.js").headers["content-type"].startswith("text/javascript")
    assert httpx.get(f"{site.ssl_url}products/mug").text == "<h1>Mug</h1>"  # pretty URL
    assert httpx.get(f"{site.ssl_url}build.py").status_code == 404  # only the publish directory is served


def test_missing_pages_get_the_sites_404_page_and_redirects_apply(shop: dict):
    site = shop["site"]
    missing = httpx.get(f"{site.ssl_url}nothing/here")
    assert (missing.status_code, missing.text) == (404, "<h1>No such page in this shop</h1>")
    moved = httpx.get(f"{site.ssl_url}old-mug")
    assert (moved.status_code, moved.headers["location"]) == (301, "/sites/built-shop/products/mug/")


def test_a_proxy_rewrite_reaches_the_origin_and_is_cached_for_its_s_maxage(shop: dict):
    site = shop["site"]
    Origin.hits.clear()
    first = httpx.get(f"{site.ssl_url}api/products?page=1")
    assert (first.status_code, first.json()) == (200, {"products": []})
    assert first.headers["etag"] == '"v1"'
    for _ in range(5):
        again = httpx.get(f"{site.ssl_url}api/products?page=1")
        assert again.status_code == 200
        assert "hit" in again.headers["cache-status"]
    assert Origin.hits == ["/api/products?page=1"]  # one origin request for six reads
    unchanged = httpx.get(f"{site.ssl_url}api/products?page=1", headers={"If-None-Match": '"v1"'})
    assert unchanged.status_code == 304
    httpx.get(f"{site.ssl_url}api/cart")
    httpx.get(f"{site.ssl_url}api/cart")
    assert Origin.hits.count("/api/cart") == 2  # no-store: never kept


def test_a_failed_build_leaves_the_previous_deploy_live_and_keeps_its_log(shop: dict):
    netlify, site = shop["netlify"], shop["site"]
    before = settled(netlify, site.id, 1)
    live = before[0]
    broken = push(shop, {"build.py": b"import sys\nprint('catalog unreachable')\nsys.exit(3)\n"}, "Break it")
    failed = settled(netlify, site.id, len(before) + 1)[0]
    assert (failed["commit_ref"], failed["state"], failed["published"]) == (broken, "error", False)
    assert failed["error_message"] == "Build script returned non-zero exit code: 3"
    assert "catalog unreachable" in netlify.request("GET", f"/builds/{failed['build_id']}/log")["log"]
    home = httpx.get(site.ssl_url)
    assert (home.text, home.headers["x-commit-sha"]) == ("<h1>Roastery</h1>v1", live["commit_ref"])


def test_an_earlier_deploy_is_restored(shop: dict):
    netlify, site = shop["netlify"], shop["site"]
    push(shop, {"build.py": BUILD, "VERSION": b"v2"}, "Storefront v2")
    count = len(deploys(netlify, site.id))
    newest = settled(netlify, site.id, count)[0]
    assert newest["state"] == "ready"
    assert httpx.get(site.ssl_url).text.endswith("v2")
    first = next(d for d in deploys(netlify, site.id) if d["title"] == "Storefront v1")
    restored = netlify.request("POST", f"/sites/{site.id}/deploys/{first['id']}/restore")
    assert (restored["id"], restored["published"]) == (first["id"], True)
    assert httpx.get(site.ssl_url).text.endswith("v1")
    failed = next(d for d in deploys(netlify, site.id) if d["state"] == "error")
    refused = httpx.post(
        f"{netlify.base_url}/sites/{site.id}/deploys/{failed['id']}/restore",
        headers=netlify.headers(),
    )
    assert refused.status_code == 422
    assert httpx.get(site.ssl_url).text.endswith("v1")


def test_a_build_hook_builds_the_branch_head(shop: dict):
    netlify, site = shop["netlify"], shop["site"]
    hook = netlify.request("GET", f"/sites/{site.id}")["deploy_hook"]
    count = len(settled(netlify, site.id, 1))
    head = shop["github"].commit(shop["owner"], shop["name"], "main").sha
    assert httpx.post(hook).status_code == 200
    newest = settled(netlify, site.id, count + 1)[0]
    assert (newest["commit_ref"], newest["state"], newest["published"]) == (head, "ready", True)
    assert httpx.post(hook.rsplit("/", 1)[0] + "/0123456789abcdef01234567").status_code == 404


def test_a_build_over_the_time_limit_fails(sandbox: Sandbox, shop: dict):
    netlify, site = shop["netlify"], shop["site"]
    live = httpx.get(site.ssl_url).headers["x-commit-sha"]
    httpx.post(f"{sandbox.url}/__admin/netlify/settings", json={"build_timeout": 1})
    try:
        count = len(settled(netlify, site.id, 1))
        push(shop, {"build.py": b"import time\ntime.sleep(30)\n"}, "Slow build")
        newest = settled(netlify, site.id, count + 1)[0]
    finally:
        httpx.post(f"{sandbox.url}/__admin/netlify/settings", json={"build_timeout": 900})
    assert newest["state"] == "error"
    assert newest["error_message"] == "Build exceeded maximum allowed runtime (1s)"
    assert httpx.get(site.ssl_url).headers["x-commit-sha"] == live


def test_deploys_list_newest_first_and_only_the_owners(sandbox: Sandbox, shop: dict):
    netlify, site = shop["netlify"], shop["site"]
    found = deploys(netlify, site.id)
    stamps = [d["created_at"] for d in found]
    assert stamps == sorted(stamps, reverse=True)
    assert sum(d["published"] for d in found) == 1
    other = httpx.post(f"{sandbox.url}/__admin/netlify/tokens", json={"account": "someone-else"}).json()
    stranger = httpx.get(
        f"{netlify.base_url}/sites/{site.id}/deploys",
        headers={"Authorization": f"Bearer {other['access_token']}"},
    )
    assert stranger.status_code == 404


def test_a_state_directory_from_before_builds_ran_builds_its_live_sites_again(tmp_path, creds):
    """A deploy recorded by the earlier sandbox (no state, no files): the restarted host builds the site."""
    import json as jsonlib
    import shutil

    with Sandbox("127.0.0.1", 0, build_providers(tmp_path, creds, build_delay=0), quiet=True) as box:
        github, netlify = sandbox_hosts(box.url)
        repo = github.create_repo("old-shop")
        owner, name = repo.full_name.split("/")
        site = netlify.create_site(name="old-shop", repo_path=repo.full_name, branch="main")
        sha = github.commit_files(owner, name, "main", {"index.html": b"<h1>Old</h1>"}, "page")
        settled(netlify, site.id, 1)
    state_file = tmp_path / "sandbox" / "netlify.json"
    state = jsonlib.loads(state_file.read_text())
    for deploy in state["deploys"].values():
        for key in (
            "state",
            "title",
            "trigger",
            "log",
            "rules",
            "done_at_ts",
            "published_at_ts",
            "started_at_ts",
        ):
            deploy.pop(key, None)
        deploy.update(published=True, ready_at_ts=deploy["created_at_ts"], error=None)
    state_file.write_text(jsonlib.dumps(state))
    shutil.rmtree(tmp_path / "sandbox" / "netlify-deploys")
    with Sandbox("127.0.0.1", 0, build_providers(tmp_path, creds, build_delay=0), quiet=True) as box:
        netlify = StaticHost(base_urls(box.url)["STATIC_HOST_API_URL"], netlify._token)
        rebuilt = settled(netlify, site.id, 2)[0]
        assert (rebuilt["state"], rebuilt["commit_ref"], rebuilt["published"]) == ("ready", sha, True)
        assert httpx.get(f"{box.url}/sites/old-shop/").text == "<h1>Old</h1>"
