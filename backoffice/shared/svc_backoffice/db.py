"""PostgreSQL access: one psycopg connection per container, opened lazily, one transaction per request, and
the translation of the database's refusals to domain errors (by SQLSTATE and constraint: dberrors.py)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import psycopg
from psycopg.rows import dict_row

from svc_backoffice.dberrors import translate

Row = dict[str, Any]


class Database:
    """A lazily opened autocommit connection; `transaction()` scopes the work of one request. `queries`
    counts the statements sent, so tests and the bench can hold a route to its query budget."""

    def __init__(self, conninfo: str | None = None, *, connection: psycopg.Connection | None = None) -> None:
        self._conninfo = conninfo
        self._conn = connection
        self.queries = 0

    @property
    def connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed or self._conn.broken:
            if self._conninfo is None:
                raise RuntimeError("the injected connection is closed")
            self._conn = psycopg.connect(self._conninfo, autocommit=True)
        return self._conn

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with translate_errors(), self.connection.transaction():
            yield

    def all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Row]:
        self.queries += 1
        with self.connection.cursor(row_factory=dict_row) as cur:
            cur.execute(sql, params)
            return list(cur.fetchall()) if cur.description else []

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Row | None:
        rows = self.all(sql, params)
        return rows[0] if rows else None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


@contextmanager
def translate_errors() -> Iterator[None]:
    """A refusal the schema or its functions made on purpose becomes the domain error that says it in the
    product's words (svc_backoffice.dberrors); anything else goes on as it is."""
    try:
        yield
    except psycopg.Error as exc:
        error = translate(exc)
        if error is None:
            raise
        raise error from exc


# The container's database, per execution context: Lambda runs one request at a time on one thread; tests
# that run handlers on several threads at once (concurrent transitions) give each thread its own connection.
_current: ContextVar[Database | None] = ContextVar("svc_backoffice_database", default=None)


def database() -> Database:
    db = _current.get()
    if db is None:
        from svc_backoffice.config import get_settings

        db = Database(get_settings().database_url)
        _current.set(db)
    return db


def use_database(db: Database | None) -> None:
    _current.set(db)
