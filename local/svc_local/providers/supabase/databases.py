"""The databases behind the Supabase sandbox's projects: one PostgreSQL database per project (`sbx_<ref>`) on the
server of DATABASE_URL, created in the background, and SQL run in it for real."""

from __future__ import annotations

import datetime as dt
import decimal
import threading
import uuid
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from svc_local.postgres import as_user, own_database
from svc_local.providers.common import random_id


class QueryFailed(Exception):
    """The database refused the SQL (the message is PostgreSQL's, with its SQLSTATE)."""


class DatabaseMissing(Exception):
    """The project's database could not be created (the message says why)."""


def database_url_for(server_url: str, database: str) -> str:
    """The same server, another database (the path of a libpq URL names the database)."""
    parts = urlsplit(server_url)
    return urlunsplit(parts._replace(path=f"/{database}"))


def _jsonable(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes | memoryview):
        return "\\x" + bytes(value).hex()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def role_password(project: dict[str, Any]) -> str:
    """The password of the project's own role; a project recorded before its role had one gets one."""
    return str(project.setdefault("db_pass", random_id("", 32)))


class ProjectDatabases:
    """The projects' databases on the server of `server_url` (None: the sandbox has no PostgreSQL server)."""

    def __init__(self, server_url: str | None) -> None:
        self.server_url = server_url
        self._created: dict[str, threading.Event] = {}
        self._errors: dict[str, str] = {}

    def url(self, database: str) -> str | None:
        return database_url_for(self.server_url, database) if self.server_url else None

    def create(self, ref: str, database: str, password: str) -> None:
        """CREATE DATABASE in the background (it takes a moment), owned by a role of its own named as it
        (never the server's superuser; no other role may connect); `ready` is False until it exists."""
        if not self.server_url:
            return
        event = self._created[ref] = threading.Event()
        server_url = self.server_url

        def create() -> None:
            try:
                own_database(server_url, database, password)
            except Exception as exc:  # noqa: BLE001 - reported as INIT_FAILED and on every query
                self._errors[ref] = str(exc)
            finally:
                event.set()

        threading.Thread(target=create, name=f"sbx-db-{ref}", daemon=True).start()

    def ready(self, ref: str) -> bool:
        event = self._created.get(ref)
        return event is None or event.is_set()

    def failure(self, ref: str) -> str | None:
        """Why the project's database could not be created, if it could not."""
        return self._errors.get(ref)

    def run(self, ref: str, database: str, sql: str, password: str) -> Any:
        """The rows (as JSON values) of the last statement of `sql` that returned rows, run as the project's
        own role; QueryFailed when the database refuses it, DatabaseMissing when it could not be created."""
        event = self._created.get(ref)
        if event is None:  # created before a restart: make sure it exists
            self.create(ref, database, password)
            event = self._created[ref]
        event.wait(30)
        if ref in self._errors:
            raise DatabaseMissing(self._errors[ref])
        import psycopg
        from psycopg.rows import dict_row

        try:
            with psycopg.connect(
                as_user(self.server_url or "", database, database, password),
                autocommit=True,
                row_factory=dict_row,
                connect_timeout=10,
            ) as conn:
                cursor = conn.execute(sql.encode("utf-8"))
                rows: list[dict[str, Any]] = []
                while True:  # several statements: the rows of the last one that returned rows
                    if cursor.description is not None:
                        rows = list(cursor.fetchall())
                    if not cursor.nextset():
                        break
        except psycopg.Error as exc:
            diag = exc.diag
            detail = diag.message_primary or str(exc).strip()
            code = f"{diag.sqlstate}: " if diag.sqlstate else ""
            raise QueryFailed(f"{code}{detail}") from exc
        return _jsonable(rows)
