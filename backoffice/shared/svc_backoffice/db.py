"""PostgreSQL access: one psycopg connection per container, opened lazily, one transaction per request, and
the translation of the database's refusals (unique, check, reference, illegal transition) to domain errors."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import psycopg
from psycopg import errors as pg
from psycopg.rows import dict_row

from svc_backoffice.errors import Conflict, NotFound, Unprocessable

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
    """Rules the schema enforces become domain errors carrying the database's own message."""
    try:
        yield
    except pg.UniqueViolation as exc:
        raise Conflict(_message(exc, "A record with that value already exists.")) from exc
    except (
        pg.CheckViolation,
        pg.ForeignKeyViolation,
        pg.NotNullViolation,
        pg.NumericValueOutOfRange,
        pg.DatetimeFieldOverflow,
    ) as exc:
        raise Unprocessable(_message(exc, "The database refused the change.")) from exc
    except pg.NoDataFound as exc:
        raise NotFound() from exc
    except pg.RaiseException as exc:
        if _message(exc, "").startswith("Illegal transition"):
            raise Unprocessable(_message(exc, "")) from exc
        if _message(exc, "").startswith("Not enough stock"):
            raise Conflict(_message(exc, "")) from exc
        raise


def _message(exc: psycopg.Error, default: str) -> str:
    return (exc.diag.message_primary or default) if exc.diag else default


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
