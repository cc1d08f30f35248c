"""The rows every domain module reads and writes the same way: INSERT, UPDATE and DELETE of one row by id
(names from request models, never from the client), a table's create, update and delete as one `Table`, list
filters and pages, reordering, slugs and search queries."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from svc_backoffice.core.errors import NotFound, Unprocessable
from svc_backoffice.data.db import Database, Row

Create = TypeVar("Create", bound=BaseModel)
Update = TypeVar("Update", bound=BaseModel)


def slugify(text: str, fallback: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:120].strip("-")
    return slug or fallback


def tsquery(text: str) -> str | None:
    """Prefix query over the words of `text`, punctuation read as a space as the search column reads it
    ('red sh' -> 'red:* & sh:*', 'mug-20' -> 'mug:* & 20:*'); None when it has no words."""
    words = re.findall(r"[^\W_]+", text.lower())[:8]
    return " & ".join(f"{w}:*" for w in words) or None


def selective(text: str) -> bool:
    """Whether a search names a code (a word with a digit): such words match few products."""
    return any(any(ch.isdigit() for ch in word) for word in re.findall(r"[^\W_]+", text))


def update_row(db: Database, table: str, row_id: str, changes: dict[str, Any], columns: str = "*") -> Row:
    """UPDATE the given columns (names come from request models, never from the client) of one row."""
    if not changes:
        row = db.one(f"SELECT {columns} FROM {table} WHERE id = %s", (row_id,))  # noqa: S608
    else:
        sets = ", ".join(f"{name} = %({name})s" for name in changes)
        row = db.one(
            f"UPDATE {table} SET {sets} WHERE id = %(id)s RETURNING {columns}",  # noqa: S608
            {**changes, "id": row_id},
        )
    if row is None:
        raise NotFound()
    return row


def insert_row(db: Database, table: str, data: dict[str, Any], columns: str = "*") -> Row:
    """INSERT one row of `data` (keys come from request models, never from the client)."""
    names = ", ".join(data)
    values = ", ".join(f"%({n})s" for n in data)
    row = db.one(f"INSERT INTO {table} ({names}) VALUES ({values}) RETURNING {columns}", data)  # noqa: S608
    assert row is not None
    return row


def insert_named(db: Database, table: str, body: Any, columns: str, fallback: str) -> Row:
    """INSERT one row of `body`, its slug made from its name when it gives none (`fallback` for a name with
    no letter or digit)."""
    data = body.model_dump()
    data["slug"] = data["slug"] or slugify(body.name, fallback)
    return insert_row(db, table, data, columns)


def where_equal(
    q: Any, names: tuple[str, ...], where: list[str], params: dict[str, Any], alias: str = ""
) -> None:
    """The list query's filters among `names` that are set, each an equality on its column."""
    for name in names:
        if (value := getattr(q, name)) is not None:
            where.append(f"{alias}{name} = %({name})s")
            params[name] = value


def page_of(rows: list[Row], offset: int, limit: int) -> dict[str, Any]:
    """A page of a list read with `limit + 1` rows: the extra row only says there are more."""
    return {"items": rows[:limit], "offset": offset, "limit": limit, "has_more": len(rows) > limit}


def delete_row(db: Database, table: str, row_id: str) -> None:
    if db.one(f"DELETE FROM {table} WHERE id = %s RETURNING id", (row_id,)) is None:  # noqa: S608
        raise NotFound()


def reorder(db: Database, table: str, ids: list[Any], unknown: str) -> None:
    """Positions from the order of `ids`; `unknown` (422) when one names no row."""
    rows = db.all(
        f"UPDATE {table} t SET position = o.ord - 1 "  # noqa: S608
        "FROM unnest(%s::uuid[]) WITH ORDINALITY AS o(id, ord) WHERE t.id = o.id RETURNING t.id",
        (ids,),
    )
    if len(rows) != len(ids):
        raise Unprocessable(unknown)


@dataclass(frozen=True)
class Table(Generic[Create, Update]):
    """A table whose rows are created from a create model, changed by a partial update model (the fields
    sent), read and deleted by id, listed in `order`, each answered with `columns`. A table whose rows have a
    name and a slug says `slug_fallback`: a row created without a slug gets one made from its name
    (insert_named)."""

    name: str
    columns: str
    create_model: type[Create]
    update_model: type[Update]
    slug_fallback: str | None = None
    order: str = "id"

    def all(self, db: Database) -> list[Row]:
        """Every row, in `order`."""
        return db.all(f"SELECT {self.columns} FROM {self.name} ORDER BY {self.order}")  # noqa: S608

    def read(self, db: Database, row_id: str) -> Row:
        """One row by id (NotFound when none)."""
        return db.found(f"SELECT {self.columns} FROM {self.name} WHERE id = %s", (row_id,))  # noqa: S608

    def create(self, db: Database, body: Create) -> Row:
        if self.slug_fallback is not None:
            return insert_named(db, self.name, body, self.columns, self.slug_fallback)
        return insert_row(db, self.name, body.model_dump(), self.columns)

    def update(self, db: Database, row_id: str, body: Update) -> Row:
        return update_row(db, self.name, row_id, body.model_dump(exclude_unset=True), self.columns)

    def delete(self, db: Database, row_id: str) -> None:
        delete_row(db, self.name, row_id)
