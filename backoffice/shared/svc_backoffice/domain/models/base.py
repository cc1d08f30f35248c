"""What every request model shares: the base body (no unknown field, no text PostgreSQL cannot store), list
queries (paging, booleans and whole numbers from the query string), and the field types several domains use."""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictInt,
    ValidationInfo,
    model_validator,
)

from svc_backoffice.core.catalogue import say

INT32 = 2_147_483_647
SLUG = r"^[a-z0-9]+(-[a-z0-9]+)*$"
# An address: one @, a dot in the domain, at most 64 characters before the @ (RFC 5321), and no white space
# or control character anywhere (they would reach mail headers and logs).
EMAIL = r"^[^@\s\x00-\x1f\x7f]{1,64}@[^@\s\x00-\x1f\x7f]+\.[^@\s\x00-\x1f\x7f]+$"
Role = Literal["viewer", "editor", "admin", "owner"]
ProductStatus = Literal["draft", "active", "archived"]
ProductType = Literal["physical", "digital", "service", "bundle"]


def _distinct(values: list[Any], info: ValidationInfo) -> list[Any]:
    if len(set(values)) != len(values):
        raise ValueError(say("validation.unique", field=info.field_name))
    return values


def _not_blank(text: str, info: ValidationInfo) -> str:
    if not text.strip():
        raise ValueError(say("validation.blank", field=info.field_name))
    return text


Distinct = AfterValidator(_distinct)  # a list without repeats: `Annotated[list[X], Distinct]`
NotBlank = AfterValidator(_not_blank)  # text with more than white space: `Annotated[str, NotBlank]`


def _storable(value: Any) -> Any:
    """PostgreSQL text cannot hold NUL, and lone surrogates cannot be encoded: refuse them at the edge."""
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError(say("validation.nul"))
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(say("validation.unicode")) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _storable(key)
            _storable(item)
    elif isinstance(value, list):
        for item in value:
            _storable(item)
    return value


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    @model_validator(mode="before")
    @classmethod
    def _no_unstorable_text(cls, data: Any) -> Any:
        return _storable(data)


def _no_defaults(schema: dict[str, Any]) -> None:
    for field in schema.get("properties", {}).values():
        field.pop("default", None)


class Partial(Body):
    """A partial update: each field of the model (its own and those it inherits, constraints and all) may be
    left out, and a field left out keeps its stored value; the domain reads the fields sent with
    `model_dump(exclude_unset=True)`. A field is null only where its type says so (`X | None`), and the fields
    named in `required` must be sent. Declared once: `class ProductUpdate(Partial, ProductFields)` takes the
    create model's fields; a field whose update differs is declared again (without a default)."""

    model_config = ConfigDict(json_schema_extra=_no_defaults)  # absent means "unchanged", not a default
    required: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        for name, info in cls.model_fields.items():
            if name not in cls.required:
                info.default, info.default_factory = None, None
        cls.model_rebuild(force=True)


Cents = Annotated[StrictInt, Field(ge=0, le=INT32)]
Tag = Annotated[str, Field(min_length=1, max_length=40)]
Email = Annotated[str, Field(pattern=EMAIL, max_length=254)]  # 254: RFC 5321's path limit


def _bool_param(value: Any) -> Any:
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no", ""):
            return False
    return value


def _whole_number(value: Any) -> Any:
    """A number in a query string: digits with an optional sign; anything else is refused (400 naming the
    parameter) rather than read as the default."""
    if isinstance(value, str):
        text = value.strip()
        if not re.fullmatch(r"[+-]?[0-9]{1,15}", text):
            raise ValueError(say("validation.whole_number"))
        return int(text)
    return value


QueryNumber = Annotated[int, BeforeValidator(_whole_number)]


class ListQuery(BaseModel):
    """The query of a list route: unknown parameters are ignored, text must be storable, `offset` and `limit`
    must be whole numbers; offset is then floored at 0 and limit (DEFAULT_LIMIT when absent) clamped to
    1..MAX_LIMIT."""

    model_config = ConfigDict(extra="ignore")
    DEFAULT_LIMIT: ClassVar[int] = 20
    MAX_LIMIT: ClassVar[int] = 100

    offset: QueryNumber = 0
    limit: QueryNumber = 0  # DEFAULT_LIMIT when not given

    @model_validator(mode="before")
    @classmethod
    def _no_unstorable_text(cls, data: Any) -> Any:
        return _storable(data)

    @model_validator(mode="after")
    def _clamp(self) -> Self:
        self.offset = min(max(self.offset, 0), INT32)
        limit = self.limit if "limit" in self.model_fields_set else self.DEFAULT_LIMIT
        self.limit = min(max(limit, 1), self.MAX_LIMIT)
        return self


# The SQL each product sort orders by (ProductListQuery.sort names them).
