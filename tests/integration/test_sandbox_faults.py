"""Fault injection seen through the platform's adapters: an injected 5xx or dropped connection is retried for
GET and not for POST, and an injected delay slows the call down."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from svc_local.providers import SandboxCredentials, base_urls, build_providers
from svc_local.sandbox import Sandbox
from svc_shared.providers.http import ProviderUnavailable
from svc_shared.providers.repo_host import RepoHost


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox("127.0.0.1", 0, build_providers(None, SandboxCredentials.generate()), quiet=True) as running:
        yield running


@pytest.fixture
def github(sandbox: Sandbox) -> Iterator[RepoHost]:
    token = httpx.post(f"{sandbox.url}/__admin/github/tokens", json={}).json()["access_token"]
    yield RepoHost(base_urls(sandbox.url)["REPO_HOST_API_URL"], token)
    httpx.delete(f"{sandbox.url}/__admin/faults")


def fault(sandbox: Sandbox, **spec: object) -> None:
    assert httpx.post(f"{sandbox.url}/__admin/faults", json=spec).status_code == 201


def test_5xx_is_retried_for_get(sandbox: Sandbox, github: RepoHost):
    fault(sandbox, method="GET", path="/github/api/user", status=503, times=2)
    assert github.user().login == "sandbox-user"
    assert httpx.get(f"{sandbox.url}/__admin/faults").json()["faults"] == []  # both used up


def test_5xx_is_not_retried_for_post(sandbox: Sandbox, github: RepoHost):
    fault(sandbox, method="POST", path="/github/api/user/repos", status=502, times=1)
    with pytest.raises(ProviderUnavailable):
        github.create_repo("not-created")
    assert github.create_repo("not-created").name == "not-created"  # the fault was spent on the first try


def test_dropped_connection_is_retried_for_get_only(sandbox: Sandbox, github: RepoHost):
    fault(sandbox, method="GET", path="/github/api/user", drop=True, times=1)
    assert github.user().login == "sandbox-user"
    fault(sandbox, method="POST", path="/github/api/user/repos", drop=True, times=1)
    with pytest.raises(ProviderUnavailable):
        github.create_repo("dropped")


def test_delay_slows_the_call(sandbox: Sandbox, github: RepoHost):
    fault(sandbox, method="GET", path="/github/api/repos/*", delay_ms=300, times=1)
    repo = github.create_repo("slow-one")
    started = time.perf_counter()
    assert github.get_repo(repo.owner, repo.name).name == "slow-one"
    assert time.perf_counter() - started >= 0.3
