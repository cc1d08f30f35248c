"""One local stack per test session, started as `python -m svc_local` and used over HTTP."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from docserver import TestAuthority
from stacklog import pytest_runtest_makereport  # noqa: F401 - a failing test shows what IAM refused
from stackproc import DATABASE_URL, RunningStack, launch_chromium, start_stack


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def tls_authority(tmp_path_factory: pytest.TempPathFactory) -> TestAuthority:
    """The certificate authority of the MCP clients' own loopback servers (their client metadata documents),
    trusted by the stack as a developer's machine trusts its own."""
    return TestAuthority(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory, tls_authority: TestAuthority) -> Iterator[RunningStack]:
    # Its own demo store database on the shared server, dropped afterwards: one left by an earlier run could
    # hold another version of a migration.
    demo_store = f"svc_demo_store_e2e_{uuid.uuid4().hex[:8]}"
    running = start_stack(
        tmp_path_factory.mktemp("stack") / "state",
        database_url=DATABASE_URL,
        extra_env={
            "SVC_DEMO_STORE_DATABASE": demo_store,
            "SSL_CERT_FILE": str(tls_authority.ca_file),
            # The SDK client with client_metadata_url and the conformance suite's document scenario serve
            # their client metadata documents on loopback, which the local stack fetches only when asked.
            "CIMD_ALLOW_LOOPBACK": "true",
            # Every Chromium test signs its people in from 127.0.0.1, one machine as an office is: far more
            # sign-ins from that address in 15 minutes than the per-address limit (30) lets through. The limit
            # itself is tested in tests/integration; the httpx clients here each sign in from an address of
            # their own.
            "LOGIN_IP_MAX_ATTEMPTS": "2000",
        },
    )
    try:
        yield running
        assert running.stop() == 0
    finally:
        if running.process.poll() is None:
            running.stop()
        with psycopg.connect(DATABASE_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{demo_store}" WITH (FORCE)')
            admin.execute(f'DROP ROLE IF EXISTS "{demo_store}"')  # its own role


@pytest.fixture(scope="session")
def gateway(stack: RunningStack) -> str:
    return stack.services["gateway"]


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    """Headless Chromium, one per test module."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()
