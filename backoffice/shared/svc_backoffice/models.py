"""Request models of the backoffice routes (bodies and queries). The OpenAPI document is generated from
them; names match the `body` / `query` columns of the route table."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    field_validator,
    model_validator,
)

INT32 = 2_147_483_647
SLUG = r"^[a-z0-9]+(-[a-z0-9]+)*$"
EMAIL = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"
Role = Literal["viewer", "editor", "admin", "owner"]
ProductStatus = Literal["draft", "active", "archived"]
ProductType = Literal["physical", "digital", "service", "bundle"]


def _storable(value: Any) -> Any:
    """PostgreSQL text cannot hold NUL, and lone surrogates cannot be encoded: refuse them at the edge."""
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError("text must not contain NUL characters")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("text must be valid Unicode") from None
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


Cents = Annotated[StrictInt, Field(ge=0, le=INT32)]
Tag = Annotated[str, Field(min_length=1, max_length=40)]


# -- catalog -------------------------------------------------------------------------------------------------
class ProductImage(Body):
    url: str = Field(min_length=1, max_length=2000)
    alt: str = Field(default="", max_length=300)


class AttributeValue(Body):
    attribute_id: UUID
    value: str = Field(max_length=500)


class ProductFields(Body):
    title: str = Field(min_length=1, max_length=200)
    slug: str | None = Field(default=None, pattern=SLUG, max_length=200)
    sku: str | None = Field(default=None, min_length=1, max_length=64)
    description: str = Field(default="", max_length=20000)
    status: ProductStatus = "draft"
    type: ProductType = "physical"
    category_id: UUID | None = None
    price_cents: Cents = 0
    compare_at_cents: Cents | None = None
    track_inventory: StrictBool = True
    low_stock_threshold: Annotated[StrictInt, Field(ge=0, le=INT32)] = 5
    tags: list[Tag] = Field(default_factory=list, max_length=50)
    images: list[ProductImage] = Field(default_factory=list, max_length=20)
    seo_title: str | None = Field(default=None, max_length=70)
    seo_description: str | None = Field(default=None, max_length=320)
    weight_grams: Annotated[StrictInt, Field(ge=0, le=INT32)] | None = None
    attributes: list[AttributeValue] | None = Field(default=None, max_length=100)


class ProductCreate(ProductFields):
    """A new product; `slug` defaults to one made from the title."""


class ProductUpdate(ProductFields):
    """Fields to change; absent fields keep their value, `attributes` replaces the whole set."""

    title: str = Field(default=None, min_length=1, max_length=200)  # type: ignore[assignment]
    slug: str = Field(default=None, pattern=SLUG, max_length=200)  # type: ignore[assignment]


def _bool_param(value: Any) -> Any:
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no", ""):
            return False
    return value


def _lenient_int(default: int) -> Any:
    def parse(value: Any) -> int:
        try:
            return int(value)
        except (TypeError, ValueError):
            return default

    return BeforeValidator(parse)


SORTS = {
    "created_at": "created_at",
    "updated_at": "updated_at",
    "title": "lower(title)",
    "price": "price_cents",
    "stock": "stock_total",
}


class ProductListQuery(BaseModel):
    """Filters of GET /api/products. offset is floored at 0, limit defaults to 20 and is clamped to 1..100;
    an unknown sort or dir falls back to created_at / desc."""

    model_config = ConfigDict(extra="ignore")

    q: str | None = Field(default=None, max_length=200)
    status: ProductStatus | None = None
    type: ProductType | None = None
    category_id: UUID | None = None
    out_of_stock: Annotated[bool, BeforeValidator(_bool_param)] = False
    low_stock: Annotated[bool, BeforeValidator(_bool_param)] = False
    sort: str = "created_at"
    dir: str = "desc"
    offset: Annotated[int, _lenient_int(0)] = 0
    limit: Annotated[int, _lenient_int(20)] = 20

    @model_validator(mode="before")
    @classmethod
    def _no_unstorable_text(cls, data: Any) -> Any:
        return _storable(data)

    @model_validator(mode="after")
    def _clamp(self) -> ProductListQuery:
        self.offset = min(max(self.offset, 0), INT32)
        self.limit = min(max(self.limit, 1), 100)
        if self.sort not in SORTS:
            self.sort = "created_at"
        if self.dir not in ("asc", "desc"):
            self.dir = "desc"
        return self


class CategoryCreate(Body):
    name: str = Field(min_length=1, max_length=120)
    slug: str | None = Field(default=None, pattern=SLUG, max_length=120)
    parent_id: UUID | None = None
    description: str = Field(default="", max_length=5000)
    position: Annotated[StrictInt, Field(ge=0, le=INT32)] = 0


class CategoryUpdate(Body):
    name: str = Field(default=None, min_length=1, max_length=120)  # type: ignore[assignment]
    slug: str = Field(default=None, pattern=SLUG, max_length=120)  # type: ignore[assignment]
    parent_id: UUID | None = None
    description: str = Field(default=None, max_length=5000)  # type: ignore[assignment]
    position: Annotated[StrictInt, Field(ge=0, le=INT32)] = None  # type: ignore[assignment]


class ReorderBody(Body):
    """Ids in their new order (positions 0..n-1)."""

    ids: list[UUID] = Field(min_length=1, max_length=1000)

    @field_validator("ids")
    @classmethod
    def _unique(cls, ids: list[UUID]) -> list[UUID]:
        if len(set(ids)) != len(ids):
            raise ValueError("ids must be unique")
        return ids


AttributeKind = Literal["text", "number", "boolean", "select"]


class AttributeCreate(Body):
    name: str = Field(min_length=1, max_length=80)
    slug: str | None = Field(default=None, pattern=SLUG, max_length=80)
    kind: AttributeKind = "text"
    options: list[Annotated[str, Field(min_length=1, max_length=80)]] = Field(
        default_factory=list, max_length=100
    )
    position: Annotated[StrictInt, Field(ge=0, le=INT32)] = 0


class AttributeUpdate(Body):
    name: str = Field(default=None, min_length=1, max_length=80)  # type: ignore[assignment]
    slug: str = Field(default=None, pattern=SLUG, max_length=80)  # type: ignore[assignment]
    kind: AttributeKind = None  # type: ignore[assignment]
    options: list[Annotated[str, Field(min_length=1, max_length=80)]] = Field(default=None, max_length=100)  # type: ignore[assignment]
    position: Annotated[StrictInt, Field(ge=0, le=INT32)] = None  # type: ignore[assignment]


class CollectionCreate(Body):
    title: str = Field(min_length=1, max_length=200)
    slug: str | None = Field(default=None, pattern=SLUG, max_length=200)
    description: str = Field(default="", max_length=5000)
    published: StrictBool = False
    product_ids: list[UUID] = Field(default_factory=list, max_length=1000)


class CollectionUpdate(Body):
    title: str = Field(default=None, min_length=1, max_length=200)  # type: ignore[assignment]
    slug: str = Field(default=None, pattern=SLUG, max_length=200)  # type: ignore[assignment]
    description: str = Field(default=None, max_length=5000)  # type: ignore[assignment]
    published: StrictBool = None  # type: ignore[assignment]


# -- inventory -----------------------------------------------------------------------------------------------
LOCATION_CODE = r"^[A-Z0-9_-]{1,32}$"


class LocationCreate(Body):
    name: str = Field(min_length=1, max_length=120)
    code: str = Field(pattern=LOCATION_CODE)
    address: str = Field(default="", max_length=500)
    is_default: StrictBool = False
    active: StrictBool = True


class LocationUpdate(Body):
    name: str = Field(default=None, min_length=1, max_length=120)  # type: ignore[assignment]
    code: str = Field(default=None, pattern=LOCATION_CODE)  # type: ignore[assignment]
    address: str = Field(default=None, max_length=500)  # type: ignore[assignment]
    is_default: StrictBool = None  # type: ignore[assignment]
    active: StrictBool = None  # type: ignore[assignment]


class InventoryAdjust(Body):
    """A stock delta at a location (the default location when omitted)."""

    product_id: UUID
    location_id: UUID | None = None
    delta: Annotated[StrictInt, Field(ge=-1_000_000, le=1_000_000)]
    reason: str = Field(min_length=1, max_length=200)

    @field_validator("delta")
    @classmethod
    def _non_zero(cls, delta: int) -> int:
        if delta == 0:
            raise ValueError("delta must be a non-zero integer")
        return delta

    @field_validator("reason")
    @classmethod
    def _not_blank(cls, reason: str) -> str:
        if not reason.strip():
            raise ValueError("reason must not be blank")
        return reason


# -- search, ai ----------------------------------------------------------------------------------------------
class SearchQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")

    q: str = Field(min_length=1, max_length=100)
    limit: Annotated[int, _lenient_int(5)] = 5

    @model_validator(mode="before")
    @classmethod
    def _no_unstorable_text(cls, data: Any) -> Any:
        return _storable(data)

    @model_validator(mode="after")
    def _clamp(self) -> SearchQuery:
        self.limit = min(max(self.limit, 1), 20)
        return self


Tone = Literal["neutral", "friendly", "premium", "playful"]
Language = Annotated[str, Field(pattern=r"^[a-z]{2}(-[A-Z]{2})?$")]
Short = Annotated[str, Field(min_length=1, max_length=200)]
Long = Annotated[str, Field(max_length=5000)]


class RewriteTitle(Body):
    task: Literal["rewrite_title"]
    title: Short
    tone: Tone = "neutral"


class MetaDescription(Body):
    task: Literal["meta_description"]
    title: Short
    description: Long = ""
    keywords: list[Tag] = Field(default_factory=list, max_length=20)


class AltText(Body):
    task: Literal["alt_text"]
    image_url: str = Field(min_length=1, max_length=2000)
    product_title: Short | None = None


class ProductDescription(Body):
    task: Literal["product_description"]
    title: Short
    features: list[Short] = Field(default_factory=list, max_length=20)
    tone: Tone = "neutral"


class TagSuggestions(Body):
    task: Literal["tag_suggestions"]
    title: Short
    description: Long = ""
    max_tags: Annotated[StrictInt, Field(ge=1, le=20)] = 5


class Translate(Body):
    task: Literal["translate"]
    text: Annotated[str, Field(min_length=1, max_length=5000)]
    target_language: Language
    source_language: Language | None = None


class SeoKeywords(Body):
    task: Literal["seo_keywords"]
    title: Short
    description: Long = ""


class BlogOutline(Body):
    task: Literal["blog_outline"]
    topic: Short
    sections: Annotated[StrictInt, Field(ge=1, le=10)] = 4


AiSuggest = Annotated[
    RewriteTitle
    | MetaDescription
    | AltText
    | ProductDescription
    | TagSuggestions
    | Translate
    | SeoKeywords
    | BlogOutline,
    Field(discriminator="task"),
]


# -- settings, staff -----------------------------------------------------------------------------------------
class SettingsUpdate(Body):
    store_name: str = Field(default=None, min_length=1, max_length=120)  # type: ignore[assignment]
    contact_email: str | None = Field(default=None, pattern=EMAIL, max_length=254)
    currency: str = Field(default=None, pattern=r"^[A-Z]{3}$")  # type: ignore[assignment]
    locale: str = Field(default=None, pattern=r"^[a-z]{2}(-[A-Z]{2})?$")  # type: ignore[assignment]
    timezone: str = Field(default=None, min_length=1, max_length=64)  # type: ignore[assignment]
    low_stock_threshold: Annotated[StrictInt, Field(ge=0, le=100000)] = None  # type: ignore[assignment]
    weight_unit: Literal["kg", "g", "lb", "oz"] = None  # type: ignore[assignment]


class StaffCreate(Body):
    email: str = Field(pattern=EMAIL, max_length=254)
    name: str = Field(default="", max_length=120)
    role: Role


class StaffUpdate(Body):
    id: UUID
    role: Role = None  # type: ignore[assignment]
    name: str = Field(default=None, max_length=120)  # type: ignore[assignment]


class StaffDelete(Body):
    id: UUID


class HandoffQuery(BaseModel):
    token: str
    next: str | None = None


REQUEST_MODELS: dict[str, Any] = {
    name: obj
    for name, obj in dict(globals()).items()
    if name[:1].isupper() and ((isinstance(obj, type) and issubclass(obj, BaseModel)) or name == "AiSuggest")
}
