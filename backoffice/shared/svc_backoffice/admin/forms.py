"""From a posted form to a request model: money typed as a person types it (19.50, 19,50) to cents, whole
numbers, lists typed with commas, and the model's validation errors placed next to the fields they concern;
a valid request written in one transaction (`written`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import Conflict, InvalidInput, Unprocessable
from svc_backoffice.data.db import Database, database

T = TypeVar("T")
MONEY = re.compile(r"^\s*(\d{1,9})(?:[.,](\d{1,2}))?\s*$")


class FormInvalid(Exception):
    """A form that cannot become a request: messages by field name, and for the whole form."""

    def __init__(self, fields: dict[str, str], form: str | None = None) -> None:
        super().__init__(form or say("admin.check_fields"))
        self.fields, self.form = fields, form or say("admin.check_fields")


def cents(value: str) -> int | None:
    """'19.50' -> 1950, '19,5' -> 1950, '19' -> 1900, '' -> None; ValueError for anything else."""
    text = value.strip().replace("\u00a0", "").replace(" ", "")
    if not text:
        return None
    found = MONEY.match(text)
    if not found:
        raise ValueError(say("admin.money"))
    whole, fraction = found.group(1), (found.group(2) or "0").ljust(2, "0")
    try:
        return int(Decimal(whole) * 100 + Decimal(fraction))
    except InvalidOperation:
        raise ValueError(say("admin.money")) from None


def whole(value: str) -> int | None:
    text = value.strip()
    if not text:
        return None
    if not re.fullmatch(r"[+-]?\d{1,9}", text):
        raise ValueError(say("admin.whole"))
    return int(text)


def words(value: str) -> list[str]:
    """'a, b ,,c' -> ['a', 'b', 'c']."""
    return [part.strip() for part in value.split(",") if part.strip()]


def converted(
    fields: Mapping[str, str], conversions: Mapping[str, tuple[str, Callable[[str], Any]]]
) -> tuple[dict[str, Any], dict[str, str]]:
    """`{model field: convert(form field)}` for each conversion that succeeds, and the errors of the others
    by form field (shown with the model's own, see `validated`)."""
    data: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for target, (name, convert) in conversions.items():
        try:
            data[target] = convert(fields.get(name, ""))
        except ValueError as exc:
            errors[name] = str(exc)
    return data, errors


def validated(
    model: type[BaseModel],
    data: dict[str, Any],
    names: Mapping[str, str] | None = None,
    earlier: Mapping[str, str] | None = None,
) -> Any:
    """`data` as `model`; FormInvalid with each error under its form field (`names` maps a model field,
    or its first path segment, to the form field that feeds it), with the `earlier` errors of conversion."""
    fields: dict[str, str] = dict(earlier or {})
    general: list[str] = []
    result = None
    try:
        result = model.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            loc = [str(p) for p in err["loc"]]
            if not loc:
                general.append(_plain(err["msg"]))
                continue
            key = ".".join(loc)
            name = (names or {}).get(key) or (names or {}).get(loc[0]) or loc[0]
            fields.setdefault(name, _said(err["type"], loc[-1], err["msg"]))
    if fields or general:
        raise FormInvalid(fields, general[0] if general else None)
    return result


def written(
    model: type[BaseModel],
    data: dict[str, Any],
    write: Callable[[Database, Any], T],
    names: Mapping[str, str] | None = None,
    earlier: Mapping[str, str] | None = None,
) -> T:
    """`data` as `model` (FormInvalid as `validated` raises it, nothing written), then `write(db, body)` in one
    transaction; what `write` returns."""
    body = validated(model, data, names, earlier)
    db = database()
    with db.transaction():
        return write(db, body)


def _said(kind: str, field: str, message: str) -> str:
    """A validation error in words: a pattern a person cannot read (an email's, a slug's) becomes a sentence
    (the field's hint says the form it takes)."""
    if kind == "string_pattern_mismatch":
        return say("admin.email") if "email" in field else say("admin.pattern")
    return _plain(message)


def _plain(message: str) -> str:
    """pydantic's message as a sentence: 'String should have at least 1 character' -> '... character.'"""
    text = message.removeprefix("Value error, ")
    return text if text.endswith(".") else text + "."


def refused(
    exc: FormInvalid | InvalidInput | Conflict | Unprocessable, field: str | None = None
) -> FormInvalid:
    """What the form shows for `exc`: a form's own errors as they are, or a domain refusal of a valid form (a
    duplicate SKU, a rule of the database) beside `field` when it concerns one."""
    if isinstance(exc, FormInvalid):
        return exc
    if isinstance(exc, InvalidInput) and exc.issues:
        fields = {k: "; ".join(v) for k, v in (exc.issues.get("fieldErrors") or {}).items()}
        return FormInvalid(fields, exc.message)
    return FormInvalid({field: exc.message} if field else {}, exc.message)
