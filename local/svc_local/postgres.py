"""PostgreSQL for the local stack: DATABASE_URL when given, otherwise an embedded server (pgserver)."""

from __future__ import annotations

import os
import socket
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit, urlunsplit


def redact(url: str) -> str:
    """The URL without its password, for printing."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


class Postgres:
    """Either an external database (DATABASE_URL) or pgserver's embedded one under `data_dir`."""

    def __init__(self, data_dir: str | Path, database_url: str | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.external_url = database_url if database_url is not None else os.environ.get("DATABASE_URL")
        self._server: Any = None
        self.url: str | None = None

    @property
    def embedded(self) -> bool:
        return not self.external_url

    def start(self) -> str:
        """Start (or attach to) the database; returns its connection URL."""
        if self.external_url:
            self.url = self.external_url
            return self.url
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (containers); pgserver copes with the fallback.
            warnings.simplefilter("ignore")
            import pgserver

        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        self._server = pgserver.get_server(self.data_dir, cleanup_mode="stop")
        self.url = str(self._server.get_uri())
        return self.url

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None

    def probe(self, timeout: float = 1.0) -> bool:
        """Does the server accept connections (unix socket or TCP)? Cheaper than a query: no driver import."""
        if not self.url:
            return False
        family, address = socket_address(self.url)
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            try:
                sock.connect(address)
            except OSError:
                return False
        return True


def socket_address(url: str) -> tuple[socket.AddressFamily, Any]:
    """Where a libpq URL connects: a unix socket (host=/dir in the query or an absolute host) or host:port."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    host = (query.get("host") or [parts.hostname or "localhost"])[0]
    port = int((query.get("port") or [str(parts.port or 5432)])[0])
    if host.startswith("/"):
        return socket.AF_UNIX, f"{host}/.s.PGSQL.{port}"
    return socket.AF_INET, (host, port)


def server_endpoint(url: str) -> tuple[str, int, str, str]:
    """(host, port, user, password) of a libpq URL's server, the host a unix socket directory when the URL
    names one: what a pooler configuration or a project record gives for that server."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    host = (query.get("host") or [parts.hostname or "127.0.0.1"])[0]
    port = int((query.get("port") or [str(parts.port or 5432)])[0])
    user = (query.get("user") or [unquote(parts.username or "") or "postgres"])[0]
    password = (query.get("password") or [unquote(parts.password or "")])[0]
    return host, port, user, password


def as_user(url: str, database: str, user: str, password: str) -> str:
    """The same server as `url`, `database` reached as `user` (a unix socket host stays in the query)."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    query = "&".join(p for p in parts.query.split("&") if p and not p.startswith(("user=", "password=")))
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{host}"
    return urlunsplit(parts._replace(netloc=netloc, path=f"/{database}", query=query))


def own_database(admin_url: str, name: str, password: str) -> str:
    """A database of one shop, owned by a login role of its own named as it (never the superuser): the role
    is created or given `password`, the database created owned by it, and no other role may connect to it.
    Returns the URL that reaches it as that role. `admin_url` connects as a role that may create roles."""
    import psycopg
    from psycopg import sql

    role = sql.Identifier(name)
    with psycopg.connect(admin_url, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
        verb = sql.SQL("ALTER ROLE" if exists else "CREATE ROLE")
        admin.execute(
            sql.SQL("{} {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD {}").format(
                verb, role, sql.Literal(password)
            )
        )
        if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            admin.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(role, role))
        admin.execute(sql.SQL("REVOKE CONNECT, TEMPORARY ON DATABASE {} FROM PUBLIC").format(role))
    return as_user(admin_url, name, name, password)
