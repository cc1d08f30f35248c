"""The migration runner: ordered SQL files in migrations/, each applied once and recorded in
`schema_migrations`. Every step is one SQL text handed to a pluggable executor, so the same runner drives a
psycopg connection (tests, local stack) and the db_host HTTP SQL endpoint (publishing)."""

from __future__ import annotations

import argparse
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# An executor runs one SQL text (possibly several statements) and returns the rows of its last statement.
Executor = Callable[[str], Sequence[dict[str, Any]]]

DEFAULT_DIR = Path(__file__).resolve().parents[3] / "migrations"
_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")

BOOTSTRAP_SQL = """CREATE TABLE IF NOT EXISTS schema_migrations (
  version text PRIMARY KEY,
  name text NOT NULL,
  checksum text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);"""
APPLIED_SQL = "SELECT version, checksum FROM schema_migrations ORDER BY version;"


class MigrationError(RuntimeError):
    pass


@dataclass(frozen=True)
class Migration:
    version: str
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()

    def script(self) -> str:
        """The whole migration as one SQL text: the version row first (a concurrent runner blocks on it and
        then fails), then the migration, in one transaction."""
        return (
            "BEGIN;\n"
            f"INSERT INTO schema_migrations (version, name, checksum) "
            f"VALUES ('{self.version}', '{self.name}', '{self.checksum}');\n"
            f"{self.sql.rstrip()}\n"
            "COMMIT;\n"
        )


def load(directory: Path = DEFAULT_DIR) -> list[Migration]:
    migrations = []
    for path in sorted(directory.glob("*.sql")):
        match = _FILE.match(path.name)
        if not match:
            raise MigrationError(f"{path.name}: migration files are named NNNN_snake_name.sql")
        migrations.append(Migration(version=match[1], name=match[2], sql=path.read_text()))
    versions = [m.version for m in migrations]
    if len(set(versions)) != len(versions):
        raise MigrationError("two migration files share a version number")
    return migrations


def pending(executor: Executor, migrations: Sequence[Migration]) -> list[Migration]:
    """Migrations not applied yet; an applied migration whose file changed since is an error."""
    executor(BOOTSTRAP_SQL)
    applied = {row["version"]: row["checksum"] for row in executor(APPLIED_SQL)}
    for m in migrations:
        if m.version in applied and applied[m.version] != m.checksum:
            raise MigrationError(f"migration {m.version}_{m.name} changed after it was applied")
    return [m for m in migrations if m.version not in applied]


def migrate(executor: Executor, migrations: Sequence[Migration] | None = None) -> list[str]:
    """Apply every pending migration, one SQL text each; returns the versions applied."""
    todo = pending(executor, load() if migrations is None else migrations)
    for m in todo:
        executor(m.script())
    return [m.version for m in todo]


def psycopg_executor(conn: Any) -> Executor:
    """An executor over a psycopg 3 connection in autocommit mode (each script manages its transaction)."""
    from psycopg.rows import dict_row

    def run(sql: str) -> list[dict[str, Any]]:
        try:
            with conn.cursor(row_factory=dict_row) as cur:
                cur.execute(sql.encode())
                return list(cur.fetchall()) if cur.description else []
        except Exception:
            conn.rollback()  # a failed script leaves its explicit transaction open
            raise

    return run


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Apply or print the backoffice migrations.")
    parser.add_argument("--database-url", help="PostgreSQL URL to migrate (default: DATABASE_URL)")
    parser.add_argument("--print", action="store_true", help="print each migration's SQL text and exit")
    args = parser.parse_args(argv)
    if args.print:
        print(BOOTSTRAP_SQL)
        for m in load():
            print(m.script())
        return
    import os

    import psycopg

    url = args.database_url or os.environ.get("DATABASE_URL")
    if not url:
        parser.error("give --database-url or set DATABASE_URL")
    with psycopg.connect(url, autocommit=True) as conn:
        applied = migrate(psycopg_executor(conn))
    print("applied: " + (", ".join(applied) or "nothing"))


if __name__ == "__main__":
    main()
