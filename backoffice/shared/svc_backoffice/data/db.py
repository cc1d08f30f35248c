"""PostgreSQL access: one transaction per request, the translation of the database's refusals to domain
errors (by SQLSTATE and constraint: dberrors.py), and the connections a warm instance keeps: the self-hosted
deployment's one, opened lazily, or, hosted, a small LRU of idle connections keyed by the shop's conninfo."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from contextvars import ContextVar
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row

from svc_backoffice.core import config, tenancy
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import NotFound, Unavailable
from svc_backoffice.data.dberrors import translate

Row = dict[str, Any]

CONNECT_TIMEOUT_SECONDS = 5


class Database:
    """A lazily opened autocommit connection; `transaction()` scopes the work of one request. `queries`
    counts the statements sent, so tests and the bench can hold a route to its query budget."""

    def __init__(self, conninfo: str | None = None, *, connection: psycopg.Connection | None = None) -> None:
        self._conninfo = conninfo
        self._conn = connection
        self.queries = 0

    @property
    def conninfo(self) -> str | None:
        return self._conninfo

    @property
    def connection(self) -> psycopg.Connection:
        """The open connection, (re)opened when there is none or it broke. A database that cannot be reached
        is `Unavailable` (503): its message names neither the conninfo nor the libpq text."""
        if self._conn is None or self._conn.closed or self._conn.broken:
            if self._conninfo is None:
                raise RuntimeError("the injected connection is closed")
            try:
                self._conn = psycopg.connect(
                    self._conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS
                )
            except psycopg.Error as exc:
                raise Unavailable(say("database.unreachable"), reason=_reason(exc, self._conninfo)) from None
        return self._conn

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with translate_errors(), ExitStack() as stack:
            try:
                stack.enter_context(self.connection.transaction())
            except psycopg.OperationalError as exc:
                # A kept connection the server closed while idle (a restart, an idle timeout) fails its
                # BEGIN and is marked broken: open a new one once, nothing of the request has run yet.
                if self._conn is None or not self._conn.broken:
                    raise Unavailable(
                        say("database.unreachable"), reason=_reason(exc, self._conninfo)
                    ) from None
                stack.enter_context(self.connection.transaction())
            try:
                yield
            except psycopg.OperationalError as exc:
                if self._conn is not None and self._conn.broken:
                    raise Unavailable(
                        say("database.unreachable"), reason=_reason(exc, self._conninfo)
                    ) from None
                raise

    def all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Row]:
        self.queries += 1
        with self.connection.cursor(row_factory=dict_row) as cur:
            cur.execute(sql, params)
            return list(cur.fetchall()) if cur.description else []

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Row | None:
        rows = self.all(sql, params)
        return rows[0] if rows else None

    def found(
        self, sql: str, params: Sequence[Any] | dict[str, Any] = (), *, missing: str | None = None
    ) -> Row:
        """The first row of `sql`; NotFound (404) when there is none, in the words `missing` gives if any."""
        row = self.one(sql, params)
        if row is None:
            raise NotFound(missing)
        return row

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


@contextmanager
def translate_errors() -> Iterator[None]:
    """A refusal the schema or its functions made on purpose becomes the domain error that says it in the
    product's words (svc_backoffice.data.dberrors); anything else goes on as it is."""
    try:
        yield
    except psycopg.Error as exc:
        error = translate(exc)
        if error is None:
            raise
        raise error from exc


def _reason(exc: psycopg.Error, conninfo: str | None) -> str:
    """What the log says about a connection failure: libpq's words, with the password taken out should they
    ever quote it."""
    code = f" {exc.sqlstate}" if exc.sqlstate else ""
    text = f"{type(exc).__name__}{code}: {exc}"
    try:
        password = conninfo_to_dict(conninfo or "").get("password")
    except psycopg.Error:
        return f"{type(exc).__name__} (unreadable conninfo)"
    return text.replace(str(password), "***") if password else text


class Pool:
    """The idle connections of a warm instance, one per database (keyed by conninfo): the least recently
    used beyond `size` are closed. A request checks its shop's connection out and back in, so requests served
    side by side in one process (a local gateway) never share one."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self._idle: OrderedDict[str, Database] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._idle)

    def checkout(self, conninfo: str) -> Database:
        with self._lock:
            db = self._idle.pop(conninfo, None)
        return db if db is not None else Database(conninfo)

    def checkin(self, db: Database) -> None:
        assert db.conninfo is not None
        closing: list[Database] = []
        with self._lock:
            if db.conninfo in self._idle:
                closing.append(db)  # another request opened one meanwhile; keep one idle per database
            else:
                self._idle[db.conninfo] = db
            while len(self._idle) > self.size:
                closing.append(self._idle.popitem(last=False)[1])
        for extra in closing:
            extra.close()

    @contextmanager
    def lease(self, conninfo: str) -> Iterator[Database]:
        db = self.checkout(conninfo)
        try:
            yield db
        finally:
            self.checkin(db)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = list(self._idle.values()), OrderedDict()
        for db in idle:
            db.close()


POOL = Pool()

# The database of this request, per execution context. Self-hosted: the container's one, opened lazily
# (Lambda runs one request at a time on one thread; tests that run handlers on several threads at once give
# each thread its own connection). Hosted: the shop's, set by hosting.handle for the request (`serving`).
_current: ContextVar[Database | None] = ContextVar("svc_backoffice_database", default=None)


def database() -> Database:
    db = _current.get()
    if db is None:
        if tenancy.current_shop() is not None:
            raise RuntimeError("a hosted request's database is set by hosting.handle")
        db = Database(config.database_url())
        _current.set(db)
    return db


def use_database(db: Database | None) -> None:
    _current.set(db)


def serving(db: Database) -> AbstractContextManager[Database | None]:
    """Make `db` this request's database for the block, restored afterwards even on errors."""
    return tenancy.bound(_current, db)
