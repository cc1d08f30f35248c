"""`svc-local` end to end: starts, prints its services and `ready`, serves the template, stops on SIGTERM
with exit 0 and keeps its state for the next start."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx
from stackproc import cli, start_stack

from svc_local.postgres import redact, socket_address


def sign_in(gateway: str, email: str, password: str) -> httpx.Cookies:
    answer = httpx.post(
        f"{gateway}/login", data={"email": email, "password": password, "next": "/api/me"}, timeout=10
    )
    assert answer.status_code == 303, answer.text
    assert "svc_ws_session" in answer.cookies
    return answer.cookies


def demo_store(stack, cookies: httpx.Cookies) -> dict:
    """The demo store's publish status, as its owner's browser reads it."""
    project = stack.services["backoffice"].rsplit("/shops/", 1)[1]
    answer = httpx.post(
        f"{stack.services['gateway']}/api/projects/{project}/provision",
        json={"action": "status"},
        cookies=cookies,
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_make_dev_defaults_serve_sign_in_and_keep_state_across_restarts(tmp_path: Path):
    """The default `make dev` path (embedded PostgreSQL, no DATABASE_URL): a fresh start, sign-in as the
    demo user, a user created with the CLI, then Ctrl-C (SIGINT) and a second start that still has both."""
    state = tmp_path / "state"
    stack = start_stack(state, database_url=None)
    try:
        assert set(stack.services) >= {"gateway", "aws", "sandbox", "postgres"}
        assert stack.services["postgres"].startswith("postgresql://")
        gateway = stack.services["gateway"]
        form = httpx.get(f"{gateway}/login", timeout=10)
        assert form.status_code == 200
        assert '<form method="post"' in form.text
        assert httpx.get(f"{gateway}/nope", timeout=10).status_code == 404
        assert httpx.get(f"{stack.services['sandbox']}/health", timeout=10).status_code == 200
        cookies = sign_in(gateway, "demo@svc.local", "demo-password-123")
        assert httpx.get(f"{gateway}/api/me", cookies=cookies, timeout=10).json()["plan"] == "paid"
        # The demo store is published as every shop is: its repository holds the template's one commit, and
        # its site, built from that commit against the shop's storefront API, is live at the address its
        # publish status gives
        demo = demo_store(stack, cookies)
        assert demo["done"] and demo["stage"] == "ready"
        (repo,) = httpx.get(f"{stack.services['sandbox']}/__admin/github/repos", timeout=10).json()[
            "repositories"
        ]
        pushed = repo["branches"]["main"]
        deadline = time.monotonic() + 90
        while (site := httpx.get(demo["live_url"], timeout=10)).status_code != 200:
            assert time.monotonic() < deadline, site.text
            time.sleep(0.5)
        assert site.headers["x-commit-sha"] == pushed
        assert 'href="/sites/' in site.text and "/products/" in site.text
        created = cli(stack, "users", "create", "--email", "new@example.com", "--password", "new-password-1")
        assert created.returncode == 0, created.stderr
    finally:
        assert stack.interrupt() == 0
    key = (state / "kms-keys.json").read_text()  # the embedded KMS keys the functions seal with

    stack = start_stack(state, database_url=None)
    try:
        gateway = stack.services["gateway"]
        assert httpx.get(f"{gateway}/api/me", cookies=cookies, timeout=10).json()["email"] == "demo@svc.local"
        assert demo_store(stack, cookies)["live_url"] == demo["live_url"]
        again = httpx.get(f"{stack.services['sandbox']}/__admin/github/repos", timeout=10).json()[
            "repositories"
        ]
        assert [r["branches"]["main"] for r in again] == [pushed]  # nothing made or pushed again
        sign_in(gateway, "new@example.com", "new-password-1")
        free = sign_in(gateway, "free@svc.local", "free-password-123")
        assert httpx.get(f"{gateway}/api/me", cookies=free, timeout=10).json()["plan"] == "free"
        moved = cli(stack, "users", "set-plan", "--email", "new@example.com", "--plan", "paid")
        assert moved.returncode == 0, moved.stderr
        assert '"plan": "paid"' in moved.stdout
    finally:
        assert stack.stop() == 0
    assert (state / "kms-keys.json").read_text() == key


def test_printed_database_url_hides_the_password():
    assert redact("postgresql://app:s3cret@db.local:5432/app") == "postgresql://app:***@db.local:5432/app"
    assert (
        redact("postgresql://postgres:@/postgres?host=/tmp/pg")
        == "postgresql://postgres:@/postgres?host=/tmp/pg"
    )


def test_database_probe_address_follows_the_url():
    assert socket_address("postgresql://postgres:@/postgres?host=/tmp/pg") == (
        socket.AF_UNIX,
        "/tmp/pg/.s.PGSQL.5432",
    )
    assert socket_address("postgresql://u:p@db.local:6543/app") == (socket.AF_INET, ("db.local", 6543))
