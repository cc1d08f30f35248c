"""The hosted backoffice: the platform's one deployment serves every published shop under
`{PUBLIC_BASE_URL}/shops/{project_id}`. The platform resolves the shop from the path, decrypts its
credentials and calls `handle` with the event (its `path` already relative to the shop) and the Shop; every
route of every group is served here, with everything per shop (database, session key, hand-off keys and
audience, field-sealing key, the paths the backoffice emits) current for that request only.

The merchant's own deployment (template.yaml, one function per group) never imports this module."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
from aws_lambda_powertools.logging import correlation_paths

from svc_backoffice.admin import screens
from svc_backoffice.core import tenancy
from svc_backoffice.core.errors import Unavailable
from svc_backoffice.core.logs import logger, start_log_context
from svc_backoffice.core.tenancy import Shop
from svc_backoffice.data import db, migrate
from svc_backoffice.edge.app import create_app
from svc_backoffice.routers.table import ROUTERS, ROUTES
from svc_backoffice.storefront import routes as storefront

__all__ = ["Shop", "handle", "upgrade_schema"]

# One resolver with every router: the groups share their heavy imports (Powertools, pydantic models,
# psycopg, cryptography), so all of them cost little more at a cold start than one (docs/decisions.md,
# "Backoffice hosting").
app = create_app(
    *(router for group in ROUTERS.values() for router in group),
    *storefront.ROUTERS,
    *screens.routers(ROUTES),
    not_found_page=screens.not_found_page,
)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def _resolve(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return app.resolve(event, context)


# The databases this warm instance found at its code's schema: each shop's is checked (and brought up to date)
# on the first request the instance serves it, so an upgrade of the platform rolls across the shops as each
# is next used, with no pass over every shop.
_current_schemas: set[str] = set()
_migrations: dict[Path | None, Sequence[migrate.Migration]] = {}
_schema_lock = threading.Lock()


def upgrade_schema(database: db.Database, migrations_dir: Path | None = None) -> list[str]:
    """Apply the migrations the shop's database lacks (once per warm instance and database); returns the
    versions applied. Another instance applying the same migration at the same moment makes this one wait on
    its version row and then find it applied."""
    key = database.conninfo or ""
    if key in _current_schemas:
        return []
    with _schema_lock:
        if migrations_dir not in _migrations:
            _migrations[migrations_dir] = migrate.load(migrations_dir or migrate.DEFAULT_DIR)
        migrations = _migrations[migrations_dir]
    executor = migrate.psycopg_executor(database.connection)
    try:
        applied = migrate.migrate(executor, migrations)
    except psycopg.errors.UniqueViolation:
        applied = migrate.migrate(executor, migrations)  # the other runner committed it: take the rest
    if applied:
        logger.info("shop schema upgraded", extra={"versions": applied})
    _current_schemas.add(key)
    return applied


def _serve(event: dict[str, Any], context: Any, shop: Shop, migrations_dir: Path | None) -> dict[str, Any]:
    start_log_context(shop=shop.id)
    if shop.absent:  # its sign-in pages only, which need no database
        with tenancy.serving(shop):
            return _resolve(event, context)
    with tenancy.serving(shop), db.POOL.lease(shop.conninfo) as database, db.serving(database):
        try:
            upgrade_schema(database, migrations_dir)
        except Unavailable:
            pass  # the request answers 503 in the backoffice's words when it reaches the database
        except (psycopg.Error, migrate.MigrationError):
            logger.exception("the shop's schema could not be brought up to date; serving it as it is")
        return _resolve(event, context)


def handle(
    event: dict[str, Any], context: Any, shop: Shop, *, migrations_dir: Path | None = None
) -> dict[str, Any]:
    """Serve one API Gateway proxy event (REST / payload format 1.0) whose `path` is already relative to
    the shop (`/api/products`, `/auth/sso`), as that shop's backoffice, its database first brought to the
    schema of `migrations_dir` (the backoffice's migrations/ by default). Runs in a copy of the caller's
    context, so nothing this request makes current (the shop, its database, the resolver's event, log keys)
    outlives it or reaches the caller, even on errors."""
    return contextvars.copy_context().run(_serve, event, context, shop, migrations_dir)
