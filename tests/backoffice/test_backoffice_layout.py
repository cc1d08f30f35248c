"""The route table is the single source: it matches the spec's counts, what the resolvers register, the
template's Api events, docs/routes.md and the committed OpenAPI document. Migrations apply once."""

from __future__ import annotations

import importlib
import json
import uuid
from collections import Counter
from pathlib import Path

import psycopg
import pytest
from bohelpers import ADMIN_URL

from svc_backoffice.data import migrate
from svc_backoffice.routers import table as openapi
from svc_backoffice.routers import table as route_table
from svc_local.template import Template

BACKOFFICE = Path(__file__).resolve().parents[2] / "backoffice"
GROUPS = [*route_table.FUNCTIONS, "auth"]


def registered(group: str) -> set[tuple[str, str]]:
    app = importlib.import_module(f"backoffice.functions.{group}.app").app
    return {
        (r.method, r.path.replace("<", "[").replace(">", "]"))
        for r in app._static_routes + app._dynamic_routes
    }


def test_route_inventory_matches_the_spec():
    assert len(route_table.route_files()) == 58
    assert Counter(r.method for r in route_table.ROUTES) == {"POST": 35, "GET": 29, "PATCH": 18, "DELETE": 14}
    gated = [p for p in route_table.route_files() if any(r.role for r in route_table.ROUTES if r.path == p)]
    assert len(gated) == 54
    ungated = {r.path for r in route_table.ROUTES if r.role is None}
    assert all(p.startswith("/api/payments/webhooks/") for p in ungated)


@pytest.mark.parametrize("group", GROUPS)
def test_resolvers_register_exactly_their_rows_of_the_table(group):
    if group == "auth":
        expected = {(r.method, r.path) for r in route_table.AUTH_ROUTES}
    else:
        expected = {(r.method, r.path) for r in route_table.routes_of(route_table.FUNCTIONS[group])}
    assert registered(group) == expected


def test_every_route_of_the_table_is_served():
    assert all(route_table.implemented(r) for r in route_table.ROUTES)
    served = {route for group in route_table.FUNCTIONS for route in registered(group)}
    assert served == {(r.method, r.path) for r in route_table.ROUTES}


def test_routes_md_lists_what_the_code_serves():
    """docs/routes.md, read as a document: 58 route files, 96 handlers, each served by the function it names."""
    import re

    text = (BACKOFFICE / "docs/routes.md").read_text()
    rows = re.findall(
        r"^\| (GET|POST|PATCH|DELETE) \| `(/api/[^`]+)` \| [^|]* \|[^|]*\|[^|]*\|[^|]*\| (\w+) \|", text, re.M
    )
    assert len(rows) == 96
    assert len({path for _, path, _ in rows}) == 58
    assert Counter(method for method, _, _ in rows) == {"POST": 35, "GET": 29, "PATCH": 18, "DELETE": 14}
    assert "58 route files; handlers: 35 POST, 29 GET, 18 PATCH, 14 DELETE" in text
    for method, path, function in rows:
        assert (method, path) in registered(function), (method, path, function)
    served = {route for group in route_table.FUNCTIONS for route in registered(group)}
    assert served == {(method, path) for method, path, _ in rows}


def test_template_api_events_match_the_table_and_modules_resolve():
    template = Template(
        BACKOFFICE / "template.yaml",
        {
            "DatabaseUrlSecretArn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:shop-db-AbCdEf",
            "HandoffPublicKey": "x",
            "HandoffAudience": "x",
        },
        package_root=BACKOFFICE.parent,
    )
    events = {(r.method, r.path, r.function.module) for r in template.routes()}
    expected = {
        (r.method, r.rule, f"backoffice.functions.{route_table.function_of(r)}.app")
        for r in route_table.ROUTES
        if route_table.implemented(r)
    } | {(r.method, r.rule, "backoffice.functions.auth.app") for r in route_table.AUTH_ROUTES}
    # The public storefront API (outside the staff's route table): every route and its preflight.
    from svc_backoffice.storefront.routes import ROUTERS as STOREFRONT

    storefront = {
        (r.method, r.rule, "backoffice.functions.storefront.app") for x in STOREFRONT for r in x.declared
    }
    assert len(storefront) == 24
    # The admin screens: the root and every path no API route names (API Gateway prefers the named ones).
    admin = {
        ("GET", "/", "backoffice.functions.admin.app"),
        ("ANY", "/{proxy+}", "backoffice.functions.admin.app"),
    }
    assert events == expected | storefront | admin
    for fn in template.functions():
        assert callable(getattr(importlib.import_module(fn.module), fn.attribute))


def test_generated_files_are_up_to_date():
    assert (BACKOFFICE / "docs/routes.md").read_text() == route_table.render_markdown()
    assert json.loads((BACKOFFICE / "openapi.json").read_text()) == json.loads(json.dumps(openapi.document()))


def test_requirements_repeat_the_package_pins():
    import tomllib

    pins = tomllib.loads((BACKOFFICE / "pyproject.toml").read_text())["project"]["dependencies"]
    assert (BACKOFFICE / "shared/requirements.txt").read_text().split() == pins


def test_openapi_is_served(db):
    from bohelpers import invoke

    answer = invoke("GET", "/openapi.json")
    assert answer.status == 200
    assert answer.json()["paths"]["/api/products/{id}"]["get"]["x-minimum-role"] == "viewer"


def test_migrations_apply_once_each_as_one_sql_text():
    name = f"bo_mig_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        with psycopg.connect(ADMIN_URL.rsplit("/", 1)[0] + f"/{name}", autocommit=True) as conn:
            texts: list[str] = []
            inner = migrate.psycopg_executor(conn)

            def recording(sql: str):
                texts.append(sql)
                return inner(sql)

            applied = migrate.migrate(recording)
            assert applied == [m.version for m in migrate.load()]
            scripts = [t for t in texts if t.startswith("BEGIN;")]
            assert len(scripts) == len(applied)
            assert migrate.migrate(recording) == []
            rows = conn.execute("SELECT version FROM schema_migrations ORDER BY 1").fetchall()
            assert [r[0] for r in rows] == applied
            # A changed file is detected rather than silently re-applied or skipped.
            first = migrate.load()[0]
            changed = migrate.Migration(first.version, first.name, first.sql + "\n-- edited\n")
            with pytest.raises(migrate.MigrationError, match="changed"):
                migrate.migrate(inner, [changed])
            # A failing script leaves nothing behind and the connection usable.
            broken = migrate.Migration("9999", "broken", "CREATE TABLE ok_table (id int);\nSELECT 1/0;")
            with pytest.raises(psycopg.errors.DivisionByZero):
                migrate.migrate(inner, [*migrate.load(), broken])
            assert conn.execute("SELECT to_regclass('ok_table')").fetchone() == (None,)
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_order_transitions_live_in_the_database(db):
    order = db.one("INSERT INTO orders (email) VALUES ('a@b.co') RETURNING id")
    assert db.one("SELECT status FROM order_transition(%s, 'paid')", (order["id"],))["status"] == "paid"
    with (
        pytest.raises(psycopg.DatabaseError, match=r"^Illegal transition from paid to delivered") as refused,
        db.connection.transaction(),
    ):
        db.all("SELECT order_transition(%s, 'delivered')", (order["id"],))
    assert refused.value.sqlstate == "SV001"  # the application's own code (migration 0007)
    with (
        pytest.raises(psycopg.DatabaseError, match=r"^Illegal transition"),
        db.connection.transaction(),
    ):
        db.all("UPDATE orders SET status = 'pending' WHERE id = %s", (order["id"],))


def test_database_refusals_map_to_409_and_422(db):
    from svc_backoffice.core import errors
    from svc_backoffice.data.db import translate_errors

    order = db.one("INSERT INTO orders (email) VALUES ('a@b.co') RETURNING id")
    with (
        pytest.raises(errors.Unprocessable, match=r"^Illegal transition from pending to shipped"),
        translate_errors(),
        db.connection.transaction(),
    ):
        db.all("SELECT order_transition(%s, 'shipped')", (order["id"],))
    with pytest.raises(errors.Conflict), translate_errors(), db.connection.transaction():
        db.all("INSERT INTO categories (name, slug) VALUES ('a', 'dup'), ('b', 'dup')")
