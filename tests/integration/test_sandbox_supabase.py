"""db_host sandbox (Supabase Management API shape) through the platform's adapter: expiring and rotating
OAuth tokens, organizations per account, project readiness, SQL run in a real PostgreSQL database."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from svc_local.postgres import socket_address
from svc_local.providers import SandboxCredentials, Supabase, build_providers
from svc_local.sandbox import Sandbox
from svc_shared.core.errors import RateLimited
from svc_shared.providers.db_host import DbHost, DbHostOAuth
from svc_shared.providers.http import ProviderAuthError, ProviderError

DATABASE_URL = os.environ.get("SVC_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIRECT = "http://127.0.0.1:9/callback/db"


def _reachable(url: str) -> bool:
    family, address = socket_address(url)
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        try:
            sock.connect(address)
        except OSError:
            return False
    return True


@pytest.fixture(scope="module")
def sandbox(creds: SandboxCredentials) -> Iterator[Sandbox]:
    database_url = DATABASE_URL if _reachable(DATABASE_URL) else None
    providers = build_providers(None, creds, database_url=database_url, project_ready_delay=0.3)
    with Sandbox("127.0.0.1", 0, providers, quiet=True) as running:
        yield running
    supabase = next(p for p in providers if isinstance(p, Supabase))
    if database_url:
        import psycopg

        with psycopg.connect(database_url, autocommit=True) as conn:
            for project in supabase.data["projects"].values():
                conn.execute(f'DROP DATABASE IF EXISTS "{project["database"]}" WITH (FORCE)')
                conn.execute(f'DROP ROLE IF EXISTS "{project["database"]}"')  # its own role


def admin(sandbox: Sandbox, path: str, body: dict) -> dict:
    answer = httpx.post(f"{sandbox.url}/__admin{path}", json=body)
    assert answer.status_code in (200, 201), answer.text
    return answer.json()


def connect(urls: dict[str, str], creds: SandboxCredentials) -> dict:
    oauth = DbHostOAuth(urls["DB_HOST_API_URL"])
    url = oauth.authorize_url(client_id=creds.db_host_client_id, redirect_uri=REDIRECT, state="s")
    params = httpx.URL(httpx.get(url).headers["location"]).params
    return oauth.exchange(
        client_id=creds.db_host_client_id,
        client_secret=creds.db_host_client_secret,
        code=params["code"],
        redirect_uri=REDIRECT,
    )


@pytest.fixture(scope="module")
def db(urls: dict[str, str], creds: SandboxCredentials) -> DbHost:
    return DbHost(urls["DB_HOST_API_URL"], connect(urls, creds)["access_token"])


def test_token_endpoint_answers_201_with_expiring_tokens(urls, creds):
    tokens = connect(urls, creds)
    assert set(tokens) == {"access_token", "refresh_token", "expires_in", "token_type"}
    assert (tokens["token_type"], tokens["expires_in"]) == ("Bearer", 86400)


def test_access_tokens_expire_and_refresh_rotates_both(sandbox: Sandbox, urls, creds):
    # Long enough for the first call to land inside it on a loaded machine, short enough to wait out.
    admin(sandbox, "/supabase/settings", {"access_token_lifetime": 2})
    try:
        tokens = connect(urls, creds)
    finally:
        admin(sandbox, "/supabase/settings", {"access_token_lifetime": 86400})
    DbHost(urls["DB_HOST_API_URL"], tokens["access_token"]).organizations()
    time.sleep(2.05)
    with pytest.raises(ProviderAuthError):
        DbHost(urls["DB_HOST_API_URL"], tokens["access_token"]).organizations()
    oauth = DbHostOAuth(urls["DB_HOST_API_URL"])
    fresh = oauth.refresh(
        client_id=creds.db_host_client_id,
        client_secret=creds.db_host_client_secret,
        refresh_token=tokens["refresh_token"],
    )
    assert fresh["refresh_token"] != tokens["refresh_token"]
    assert DbHost(urls["DB_HOST_API_URL"], fresh["access_token"]).organizations()
    with pytest.raises(ProviderError) as reused:
        oauth.refresh(
            client_id=creds.db_host_client_id,
            client_secret=creds.db_host_client_secret,
            refresh_token=tokens["refresh_token"],
        )
    assert reused.value.status == 400
    # Rotation again: the access token it replaces stops working at once.
    newest = oauth.refresh(
        client_id=creds.db_host_client_id,
        client_secret=creds.db_host_client_secret,
        refresh_token=fresh["refresh_token"],
    )
    with pytest.raises(ProviderAuthError):
        DbHost(urls["DB_HOST_API_URL"], fresh["access_token"]).organizations()
    assert DbHost(urls["DB_HOST_API_URL"], newest["access_token"]).organizations()


def test_wrong_client_credentials_are_refused(urls, creds):
    with pytest.raises(ProviderAuthError):
        DbHostOAuth(urls["DB_HOST_API_URL"]).refresh(
            client_id=creds.db_host_client_id, client_secret="wrong", refresh_token="x"
        )


def test_an_account_without_organizations(sandbox: Sandbox, urls, creds):
    admin(sandbox, "/oauth/next", {"provider": "supabase", "account": "no-orgs"})
    tokens = connect(urls, creds)
    assert DbHost(urls["DB_HOST_API_URL"], tokens["access_token"]).organizations() == []


def test_project_becomes_ready_and_runs_sql_for_real(db: DbHost):
    if not db.organizations():
        pytest.fail("the default account has an organization")
    org = db.organizations()[0].slug
    project = db.create_project(name="shop", db_pass="secret-pass-1", organization_slug=org)
    assert (project.status, project.name, project.organization_slug) == ("COMING_UP", "shop", org)
    assert project.ref and project.region == "eu-central-1"
    health = db.health(project.ref)
    assert [h["name"] for h in health] == ["db", "rest"]
    deadline = time.monotonic() + 10
    while db.project(project.ref).status != "ACTIVE_HEALTHY":
        assert time.monotonic() < deadline, "the project never became ready"
        time.sleep(0.1)
    assert all(h["healthy"] for h in db.health(project.ref))
    if not _reachable(DATABASE_URL):
        pytest.skip("no PostgreSQL for project databases")
    assert db.query(project.ref, "create table items (id int primary key, name text)") == []
    db.query(project.ref, "insert into items values (1, 'a'), (2, 'b')")
    assert db.query(project.ref, "select id, name from items order by id") == [
        {"id": 1, "name": "a"},
        {"id": 2, "name": "b"},
    ]
    with pytest.raises(ProviderError) as failed:
        db.query(project.ref, "insert into items values (1, 'dup')")
    assert failed.value.status == 400
    assert failed.value.body["message"].startswith("Failed to run sql query: ERROR: 23505")
    keys = db.api_keys(project.ref)
    assert keys.public and keys.privileged and keys.public != keys.privileged


def test_the_pooler_of_a_project_is_its_own_database_on_the_sandbox_server(sandbox: Sandbox, db: DbHost):
    if not _reachable(DATABASE_URL):
        pytest.skip("no PostgreSQL for project databases")
    org = db.organizations()[0].slug
    project = db.create_project(name="pooled", db_pass="secret-pass-2", organization_slug=org)
    raw = httpx.get(
        f"{sandbox.url}/supabase/v1/projects/{project.ref}/config/database/pooler",
        headers=db.headers(),
    )
    assert raw.status_code == 200
    (primary,) = raw.json()
    assert {
        "identifier", "database_type", "is_using_scram_auth", "db_user", "db_host", "db_port", "db_name",
        "connection_string", "pool_mode", "default_pool_size", "max_client_conn",
    } == set(primary)  # fmt: skip
    assert (primary["database_type"], primary["db_name"]) == ("PRIMARY", f"sbx_{project.ref}")
    assert "secret-pass-2" not in raw.text

    pooler = db.session_pooler(project.ref)
    server = httpx.URL(DATABASE_URL)
    # The project's own role, named as its database: never the server's superuser.
    assert (pooler.host, pooler.port, pooler.user) == (server.host, server.port or 5432, f"sbx_{project.ref}")
    assert pooler.database == f"sbx_{project.ref}"
    db.query(project.ref, "create table pooled_items (id int)")  # waits for the database to exist
    import psycopg

    url = f"postgresql://{pooler.user}:secret-pass-2@{pooler.host}:{pooler.port}/{pooler.database}"
    with psycopg.connect(url, connect_timeout=5) as conn:
        assert conn.execute("SELECT to_regclass('public.pooled_items') IS NOT NULL").fetchone()[0]

    # A fault on the route, as on any other: a 503 the adapter retries (GET), then a 404 it does not.
    admin(
        sandbox,
        "/faults",
        {
            "method": "GET",
            "path": "/supabase/v1/projects/*/config/database/pooler",
            "status": 503,
            "times": 1,
        },
    )
    assert db.session_pooler(project.ref) == pooler
    admin(
        sandbox,
        "/faults",
        {
            "method": "GET",
            "path": "/supabase/v1/projects/*/config/database/pooler",
            "status": 404,
            "times": 1,
        },
    )
    with pytest.raises(ProviderError) as missing:
        db.session_pooler(project.ref)
    assert missing.value.status == 404


def test_unknown_project_is_404(db: DbHost):
    with pytest.raises(ProviderError) as missing:
        db.project("nosuchprojectref0000")
    assert missing.value.status == 404


def test_rate_limit_answers_429(sandbox: Sandbox, urls, creds):
    admin(sandbox, "/supabase/settings", {"rate_limit_per_minute": 3})
    try:
        db = DbHost(urls["DB_HOST_API_URL"], connect(urls, creds)["access_token"])
        db.retries = 0
        for _ in range(3):
            db.organizations()
        with pytest.raises(RateLimited):
            db.organizations()
    finally:
        admin(sandbox, "/supabase/settings", {"rate_limit_per_minute": 60})


def test_a_projects_role_is_no_superuser_and_reaches_no_other_projects_database(db: DbHost):
    """What a shop's backoffice connects as, locally as in the cloud: its own role. Through it, a shop cannot
    read another shop's database, make roles, or read the server's files."""
    import psycopg

    if not _reachable(DATABASE_URL):
        pytest.skip("no PostgreSQL for project databases")
    org = db.organizations()[0].slug
    mine = db.create_project(name="mine", db_pass="secret-pass-3", organization_slug=org)
    other = db.create_project(name="other", db_pass="secret-pass-4", organization_slug=org)
    for project in (mine, other):
        db.query(project.ref, "create table secrets_of_the_shop (v text)")  # waits for the database
    assert db.query(
        mine.ref, "select current_user as who, usesuper from pg_user where usename = current_user"
    ) == [{"who": f"sbx_{mine.ref}", "usesuper": False}]
    for attack in ("create role intruder login superuser", "select pg_read_file('postgresql.conf')"):
        with pytest.raises(ProviderError) as refused:
            db.query(mine.ref, attack)
        assert refused.value.status == 400
        assert "42501" in refused.value.body["message"]  # insufficient_privilege
    pooler = db.session_pooler(mine.ref)
    into_other = f"postgresql://{pooler.user}:secret-pass-3@{pooler.host}:{pooler.port}/sbx_{other.ref}"
    with pytest.raises(psycopg.OperationalError, match="permission denied for database"):
        psycopg.connect(into_other, connect_timeout=5)
