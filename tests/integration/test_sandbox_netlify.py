"""static_host sandbox (Netlify shape) through the platform's adapter: OAuth, sites linked to a GitHub sandbox
repository, environment variables, a build moving to ready, and the live site naming the deployed commit."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from svc_local.providers import SandboxCredentials, build_providers
from svc_local.sandbox import Sandbox
from svc_shared.providers.http import ProviderAuthError, ProviderConflict, ProviderError
from svc_shared.providers.repo_host import RepoHost
from svc_shared.providers.static_host import StaticHost, StaticHostOAuth

REDIRECT = "http://127.0.0.1:9/callback/netlify"


@pytest.fixture(scope="module")
def sandbox(creds: SandboxCredentials) -> Iterator[Sandbox]:
    with Sandbox("127.0.0.1", 0, build_providers(None, creds, build_delay=0.4), quiet=True) as running:
        yield running


def authorize(urls: dict[str, str], creds: SandboxCredentials, state: str = "s") -> httpx.URL:
    oauth = StaticHostOAuth(urls["STATIC_HOST_OAUTH_URL"], urls["STATIC_HOST_TOKEN_URL"])
    url = oauth.authorize_url(client_id=creds.static_host_client_id, redirect_uri=REDIRECT, state=state)
    answer = httpx.get(url)
    assert answer.status_code == 302
    return httpx.URL(answer.headers["location"])


@pytest.fixture(scope="module")
def netlify(urls: dict[str, str], creds: SandboxCredentials) -> StaticHost:
    oauth = StaticHostOAuth(urls["STATIC_HOST_OAUTH_URL"], urls["STATIC_HOST_TOKEN_URL"])
    code = authorize(urls, creds).params["code"]
    token = oauth.exchange(
        client_id=creds.static_host_client_id,
        client_secret=creds.static_host_client_secret,
        code=code,
        redirect_uri=REDIRECT,
    )
    with pytest.raises(ProviderError):  # single use
        oauth.exchange(
            client_id=creds.static_host_client_id,
            client_secret=creds.static_host_client_secret,
            code=code,
            redirect_uri=REDIRECT,
        )
    return StaticHost(urls["STATIC_HOST_API_URL"], token["access_token"])


@pytest.fixture(scope="module")
def repo(sandbox: Sandbox, urls: dict[str, str]) -> tuple[RepoHost, str]:
    token = httpx.post(f"{sandbox.url}/__admin/github/tokens", json={}).json()["access_token"]
    github = RepoHost(urls["REPO_HOST_API_URL"], token)
    created = github.create_repo("storefront")
    return github, created.full_name


def wait_done(netlify: StaticHost, deploy_id: str, seconds: float = 30):
    deadline = time.monotonic() + seconds
    while True:
        deploy = netlify.deploy(deploy_id)
        if deploy.state in ("ready", "error") or time.monotonic() > deadline:
            return deploy
        time.sleep(0.05)


def test_denied_authorization(sandbox: Sandbox, urls, creds):
    httpx.post(f"{sandbox.url}/__admin/oauth/next", json={"provider": "netlify", "decision": "deny"})
    assert authorize(urls, creds, "q").params["error"] == "access_denied"


def test_bad_token_is_401(urls):
    with pytest.raises(ProviderAuthError):
        StaticHost(urls["STATIC_HOST_API_URL"], "nope").find_site("x")


def test_site_env_build_to_ready_and_the_live_url(netlify: StaticHost, repo: tuple[RepoHost, str]):
    github, full_name = repo
    site = netlify.create_site(name="my-shop", repo_path=full_name, branch="main", cmd="", publish_dir="")
    raw = netlify.request("GET", f"/sites/{site.id}")
    assert {"id", "name", "url", "ssl_url", "admin_url", "account_id", "build_settings"} <= set(raw)
    assert (site.name, site.account_id, site.ssl_url, site.repo_path) == (
        "my-shop",
        raw["account_id"],
        raw["ssl_url"],
        full_name,
    )
    with pytest.raises(ProviderConflict) as taken:
        netlify.create_site(name="my-shop", repo_path=full_name, branch="main")
    assert taken.value.body == {"errors": {"subdomain": ["must be unique"]}}
    assert netlify.find_site("my-shop") == site
    assert netlify.find_site("my-sho") is None  # the API filters by substring; the adapter compares exactly

    netlify.set_env(site.account_id, site.id, {"PUBLIC_URL": "a", "SERVICE_KEY": "b"})
    netlify.set_env(site.account_id, site.id, {"PUBLIC_URL": "c"})
    assert netlify.env(site.account_id, site.id) == {"PUBLIC_URL": "c", "SERVICE_KEY": "b"}

    owner, name = full_name.split("/")
    sha = github.commit_files(owner, name, "main", {"index.html": b"<h1>Shop</h1>"}, "site")
    build = netlify.start_build(site.id)
    started = netlify.request("GET", f"/builds/{build.id}")
    assert (started["sha"], started["deploy_id"], started["error"]) == (sha, build.deploy_id, None)
    states = []
    deadline = time.monotonic() + 10
    while True:
        deploy = netlify.deploy(build.deploy_id or "")
        if not states or states[-1] != deploy.state:
            states.append(deploy.state)
        if deploy.state in ("ready", "error") or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert states[-1] == "ready"
    assert set(states) <= {"new", "building", "ready"}
    live = httpx.get(deploy.deploy_ssl_url or "")
    assert live.status_code == 200
    assert live.headers["x-commit-sha"] == sha
    assert live.text == "<h1>Shop</h1>"
    assert live.headers["content-type"] == "text/html; charset=utf-8"


def test_build_needs_a_linked_repository(netlify: StaticHost):
    site = netlify.request("POST", "/sites", json={"name": "unlinked-site"})
    with pytest.raises(ProviderConflict) as unlinked:
        netlify.start_build(site["id"])
    assert unlinked.value.status == 422


def test_a_failing_build_ends_in_error(sandbox: Sandbox, netlify: StaticHost, repo):
    _github, full_name = repo
    site = netlify.create_site(name="broken-shop", repo_path=full_name, branch="main")
    httpx.post(
        f"{sandbox.url}/__admin/netlify/next-build",
        json={"error": "Build script returned non-zero exit code: 2"},
    )
    build = netlify.start_build(site.id)
    deploy = wait_done(netlify, build.deploy_id or "")
    assert deploy.state == "error"
    assert netlify.request("GET", f"/deploys/{deploy.id}")["error_message"].startswith(
        "Build script returned"
    )
    assert httpx.get(deploy.ssl_url or "").status_code == 404
