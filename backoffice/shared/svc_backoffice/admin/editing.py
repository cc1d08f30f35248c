"""One record edited by one form: `Editor` declares a kind of record's pages once (`<path>/new` to create,
`<path>/<id>` to read and change, `<path>/<id>/delete`), each behind the role of the API route doing the same
(`POST <api>`, `PATCH <api>/[id]`, `DELETE <api>/[id]`, `GET <api>` to read). Its fields say how the form
writes each model field and how a stored value reads back in the form, so customers, discounts, posts,
shipping zones, methods and carriers, payment providers and integrations share one form page (record.html).

An update sends only the fields the form posted (the models are partial), so a small form of one field (a
provider's webhook secret beside Connect Stripe) changes that field alone. A secret is write-only: its box
starts empty, empty keeps what is stored, and a "remove" box clears it."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from aws_lambda_powertools.event_handler import Response
from pydantic import BaseModel

from svc_backoffice.admin import render
from svc_backoffice.admin.forms import FormInvalid, cents, converted, refused, validated, whole, words
from svc_backoffice.admin.pages import current_query, form, nav_of, page, router, see_other, store_row, tab_of
from svc_backoffice.admin.removal import confirmed
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import Conflict, InvalidInput, Unprocessable
from svc_backoffice.data.db import Database, Row, database
from svc_backoffice.domain.rows import Table
from svc_backoffice.edge.requests import path_id

Options = tuple[tuple[str, str], ...]
REMOVE = "_remove"  # a secret's "remove" box is named <field>_remove
LOCAL_TIME = "%Y-%m-%dT%H:%M"  # what <input type="datetime-local"> sends and shows


@dataclass(frozen=True)
class Field:
    """A form field feeding model field `target` (its own name when not given). `kind` says how it is read
    and shown (READERS): text, long (a text area), email, url and optional (empty is none), select (empty is
    none), check, money (empty is 0) and maybe_money (empty is none), whole (empty is none) and number
    (empty is 0), words (comma separated), when (a local date and time in the store's zone), secret
    (write-only) or lines ('name = value' per line, a dict). `options` (select) may be a function of the database. `fixed`: given when the record is
    created, then only shown."""

    name: str
    label: str
    kind: str = "text"
    target: str = ""
    hint: str = ""
    options: Options | Callable[[Database], Options] = ()
    attrs: str = ""
    fixed: bool = False
    wide: bool = False  # across the form's columns (as a text area is)

    @property
    def model(self) -> str:
        return self.target or self.name


def _local(typed: str) -> datetime | None:
    text = typed.strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(say("admin.when")) from None
    return moment.replace(tzinfo=render.zone(store_row()["timezone"]))


def _lines(typed: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in typed.splitlines():
        if not line.strip():
            continue
        name, equals, value = line.partition("=")
        if not equals or not name.strip():
            raise ValueError(say("admin.lines"))
        found[name.strip()] = value.strip()
    return found


READERS: dict[str, Callable[[str], Any]] = {
    "text": lambda v: v.strip(),
    "email": lambda v: v.strip(),
    "select": lambda v: v or None,
    "long": lambda v: v,
    "url": lambda v: v.strip() or None,
    "optional": lambda v: v.strip() or None,
    "check": lambda v: v == "on",
    "money": lambda v: cents(v) or 0,
    "maybe_money": cents,
    "whole": whole,
    "number": lambda v: whole(v) or 0,
    "words": words,
    "when": _local,
    "lines": _lines,
}


def _text(value: Any) -> str:
    """A setting's value on its line: text as it is, a number or a yes/no as JSON writes it."""
    return value if isinstance(value, str) else json.dumps(value)


def _kept(typed: dict[str, str], stored: Any) -> dict[str, Any]:
    """Settings read back from their lines: a line left as it was shown keeps its stored value (a number
    stays a number); a changed or new line is text."""
    before = dict(stored or {})
    return {k: before[k] if k in before and _text(before[k]) == v else v for k, v in typed.items()}


def shown(f: Field, value: Any) -> str:
    """A stored value as the form field shows it."""
    if value is None or f.kind == "secret":
        return ""
    if f.kind == "check":
        return "on" if value else ""
    if f.kind in ("money", "maybe_money"):
        return render.amount(value, store_row()["currency"])
    if f.kind == "words":
        return ", ".join(value)
    if f.kind == "when":
        moment = datetime.fromisoformat(value) if isinstance(value, str) else value
        return str(moment.astimezone(render.zone(store_row()["timezone"])).strftime(LOCAL_TIME))
    if f.kind == "lines":
        return "\n".join(f"{k} = {_text(v)}" for k, v in dict(value).items())
    return str(value)


@dataclass(frozen=True)
class Records:
    """A kind of record the domain keeps with functions of its own rather than as a `Table`, told the same way:
    the request models a create and an update take, and the functions reading, updating, creating and
    deleting one by id (no create or delete when the API has none)."""

    create_model: type[BaseModel] | None
    update_model: type[BaseModel]
    read: Callable[[Database, str], Row]
    update: Callable[[Database, str, Any], Row]
    create: Callable[[Database, Any], Row] | None = None
    delete: Callable[[Database, str], None] | None = None


@dataclass(frozen=True)
class Editor:
    """A kind of record (`records`: the domain's `Table`, or its `Records`) and its form, its pages under
    `path` (in the navigation's section and settings tab the path names). `adjust(fields, data, errors)` reads
    what the fields cannot say alone (and names the form fields of the model paths it fills); `beside` puts a
    model-wide rule's message next to the field it concerns; a duplicate (409) is shown beside `unique`."""

    records: Table[Any, Any] | Records
    path: str
    api: str
    noun: str
    sections: tuple[tuple[str, tuple[Field, ...]], ...]
    title: Callable[[Row], str] = lambda row: str(row.get("name") or row.get("title") or "")
    adjust: Callable[[dict[str, str], dict[str, Any], dict[str, str]], Mapping[str, str] | None] | None = None
    values_of: Callable[[Row, dict[str, str]], None] | None = None
    context: Callable[[Row | None], dict[str, Any]] = lambda row: {}
    defaults: Callable[[], dict[str, str]] = dict
    beside: Mapping[str, str] = field(default_factory=dict)
    unique: str | None = None
    suffix: str = ""  # after the id in the form's address (a customer's form is /customers/<id>/edit)
    inside: str | None = None  # a template of more fields inside the form
    aside: str | None = None  # a template shown beside the form
    back: str = ""  # where the record's list is (the path itself when empty)
    removal: str = ""  # what deleting the record takes with it or leaves, said before it is deleted

    @property
    def nav(self) -> str:
        return nav_of(self.path)

    @property
    def tab(self) -> str:
        return tab_of(self.path)

    @property
    def fields(self) -> tuple[Field, ...]:
        return tuple(f for _, group in self.sections for f in group)

    # -- reading and writing the form ------------------------------------------------------------------------
    def values(self, row: Row) -> dict[str, str]:
        values = {f.name: shown(f, row.get(f.model)) for f in self.fields}
        if self.values_of:
            self.values_of(row, values)
        return values

    def body(self, fields: dict[str, str], record: Row | None) -> Any:
        """The posted form as the create model (record None) or the update model (the fields posted)."""
        conversions: dict[str, tuple[str, Callable[[str], Any]]] = {}
        data: dict[str, Any] = {}
        for f in self.fields:
            if record is not None and (f.fixed or (f.name not in fields and f.name + REMOVE not in fields)):
                continue
            if f.kind == "secret":
                if fields.get(f.name + REMOVE) == "on":
                    data[f.model] = None
                elif fields.get(f.name, ""):
                    data[f.model] = fields[f.name]
                continue
            conversions[f.model] = (f.name, READERS[f.kind])
        read, errors = converted(fields, conversions)
        data.update(read)
        for f in self.fields:
            if f.kind == "lines" and record is not None and isinstance(data.get(f.model), dict):
                data[f.model] = _kept(data[f.model], record.get(f.model))
        names = {f.model: f.name for f in self.fields}
        if self.adjust:
            names.update(self.adjust(fields, data, errors) or {})
        model = self.records.update_model if record is not None else self.records.create_model
        assert model is not None
        try:
            return validated(model, data, names, errors)
        except FormInvalid as exc:
            for key, name in self.beside.items():
                if exc.form.rstrip(".") == say(key).rstrip("."):
                    exc.fields.setdefault(name, exc.form)
            raise

    # -- the pages ---------------------------------------------------------------------------------------------
    def render(self, record: Row | None, values: dict[str, str], status: int = 200, **more: Any) -> Response:
        context = {
            "editor": self,
            "record": record,
            "values": values,
            "writes": f"PATCH {self.api}/[id]" if record else f"POST {self.api}",
            "removes": f"DELETE {self.api}/[id]" if record and self.records.delete else None,
            "options": {
                f.name: f.options(database()) if callable(f.options) else f.options
                for f in self.fields
                if f.kind == "select"
            },
            **self.context(record),
            **more,
        }
        title = self.title(record) if record else f"Add {self.noun}"
        return page("record.html", status, nav=self.nav, title=title, tab=self.tab, **context)

    def save(self, record: Row | None) -> Response:
        fields = form()
        db = database()
        try:
            body = self.body(fields, record)
            with db.transaction():
                if record is None:
                    assert self.records.create is not None
                    record = self.records.create(db, body)
                    notice = "created"
                else:
                    self.records.update(db, str(record["id"]), body)
                    notice = "saved"
        except (FormInvalid, InvalidInput, Conflict, Unprocessable) as exc:
            found = refused(exc, self.unique if isinstance(exc, Conflict) else None)
            values = {**(self.values(record) if record else self.defaults()), **fields}
            return self.render(record, values, 400, errors=found.fields, form_error=found.form)
        return see_other(f"{self.path}/{record['id']}", notice=notice)

    def listed(
        self,
        rows: list[Row],
        columns: tuple[tuple[str, Callable[[Row], str]], ...],
        *,
        title: str,
        empty: str,
        intro: str = "",
    ) -> Response:
        """The list of these records (records.html): a row each, its first column linking to the form."""
        return page(
            "records.html",
            nav=self.nav,
            tab=self.tab,
            title=title,
            editor=self,
            headings=[heading for heading, _ in columns],
            rows=[(row["id"], [cell(row) for _, cell in columns]) for row in rows],
            empty=empty,
            intro=intro,
        )

    def declare(self) -> Editor:
        """Declare the pages on the admin router (new, then the record's, so `new` is not read as an id)."""
        if self.records.create is not None:
            router.page("GET", f"{self.path}/new", api=f"POST {self.api}")(
                lambda: self.render(None, {**self.defaults(), **current_query()})
            )
            router.page("POST", f"{self.path}/new", api=f"POST {self.api}")(lambda: self.save(None))
        router.page("GET", f"{self.path}/<id>{self.suffix}", api=f"GET {self.api}")(
            lambda id: self.render(record := self.records.read(database(), path_id(id)), self.values(record))
        )
        router.page("POST", f"{self.path}/<id>{self.suffix}", api=f"PATCH {self.api}/[id]")(
            lambda id: self.save(self.records.read(database(), path_id(id)))
        )
        if self.records.delete is not None:
            router.page("POST", f"{self.path}/<id>/delete", api=f"DELETE {self.api}/[id]")(self._remove)
        return self

    def _remove(self, id: str) -> Response:
        delete = self.records.delete
        assert delete is not None
        record = self.records.read(database(), path_id(id))
        return confirmed(
            lambda: delete(database(), str(record["id"])),
            what=f"the {self.noun} {self.title(record)}",
            back=self.back or self.path,
            consequence=self.removal,
        )
