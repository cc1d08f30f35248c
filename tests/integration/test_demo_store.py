"""The local stack's demo store (svc_local.stack.demostore): published in the provider sandbox as every shop is, and
still seeded, with a line saying why, when the sandbox cannot make its repository or site."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from awsadmin import SANDBOX_DATABASE_URL

from svc_local.stack import demostore
from svc_shared.wiring import services


@pytest.fixture
def store_database(monkeypatch: pytest.MonkeyPatch):
    name = f"svc_demo_store_it_{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("SVC_DEMO_STORE_DATABASE", name)
    yield name
    with psycopg.connect(SANDBOX_DATABASE_URL, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'DROP ROLE IF EXISTS "{name}"')  # its own role


def test_the_demo_store_starts_without_the_sandbox_and_is_published_once_it_answers(
    provider_env, demo_user, sandbox, store_database, tmp_path, capsys
):
    marker = tmp_path / "demo-project-id"
    unreachable = "http://127.0.0.1:9"  # nothing listens on the discard port
    project_id = demostore.seed(
        SANDBOX_DATABASE_URL, demo_user.email, "http://127.0.0.1:3000", marker, unreachable
    )
    project = services.projects().get(project_id)
    assert project.extra["backoffice_url"] == f"http://127.0.0.1:3000/shops/{project_id}"  # still opens
    assert (project.repo_host_repo, project.live_url) == (None, None)
    assert "demo store: its repository and site were not made" in capsys.readouterr().err

    for _ in range(2):  # the next start makes them, the one after makes nothing again
        assert demostore.seed(
            SANDBOX_DATABASE_URL, demo_user.email, "http://127.0.0.1:3000", marker, sandbox.url
        ) == (project_id)
    project = services.projects().get(project_id)
    assert project.repo_host_repo and project.live_url and project.static_site_id
    assert project.last_pushed_sha == project.extra["template_commit_sha"]
    repos = [r for r in sandbox_repos(sandbox.url) if r["full_name"] == project.repo_host_repo]
    assert [r["branches"]["main"] for r in repos] == [project.last_pushed_sha]


def sandbox_repos(url: str) -> list[dict]:
    import httpx

    return list(httpx.get(f"{url}/__admin/github/repos", timeout=10).json()["repositories"])
