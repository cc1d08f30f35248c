"""Request models of the catalog (products, categories, attributes, collections) and of inventory."""

from __future__ import annotations

from typing import Annotated, Literal
from uuid import UUID

from pydantic import (
    BeforeValidator,
    Field,
    StrictBool,
    StrictInt,
    field_validator,
)

from svc_backoffice.core.catalogue import say
from svc_backoffice.domain.models.base import (
    INT32,
    SLUG,
    Body,
    Cents,
    Distinct,
    ListQuery,
    NotBlank,
    Partial,
    ProductStatus,
    ProductType,
    Tag,
    _bool_param,
)


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


class ProductUpdate(Partial, ProductFields):
    """Fields to change; absent fields keep their value, `attributes` replaces the whole set."""

    slug: str = Field(pattern=SLUG, max_length=200)  # a product keeps a slug: not null here


SORTS = {
    "created_at": "created_at",
    "updated_at": "updated_at",
    "title": "lower(title)",
    "price": "price_cents",
    "stock": "stock_total",
}


class ProductListQuery(ListQuery):
    """Filters of GET /api/products: an unknown sort or dir is a 400 naming the allowed values."""

    q: str | None = Field(default=None, max_length=200)
    status: ProductStatus | None = None
    type: ProductType | None = None
    category_id: UUID | None = None
    out_of_stock: Annotated[bool, BeforeValidator(_bool_param)] = False
    low_stock: Annotated[bool, BeforeValidator(_bool_param)] = False
    sort: Literal["created_at", "updated_at", "title", "price", "stock"] = "created_at"
    dir: Literal["asc", "desc"] = "desc"


class CategoryCreate(Body):
    name: str = Field(min_length=1, max_length=120)
    slug: str | None = Field(default=None, pattern=SLUG, max_length=120)
    parent_id: UUID | None = None
    description: str = Field(default="", max_length=5000)
    position: Annotated[StrictInt, Field(ge=0, le=INT32)] = 0


class CategoryUpdate(Partial, CategoryCreate):
    slug: str = Field(pattern=SLUG, max_length=120)


class ReorderBody(Body):
    """Ids in their new order (positions 0..n-1)."""

    ids: Annotated[list[UUID], Distinct] = Field(min_length=1, max_length=1000)


AttributeKind = Literal["text", "number", "boolean", "select"]


class AttributeCreate(Body):
    name: str = Field(min_length=1, max_length=80)
    slug: str | None = Field(default=None, pattern=SLUG, max_length=80)
    kind: AttributeKind = "text"
    options: list[Annotated[str, Field(min_length=1, max_length=80)]] = Field(
        default_factory=list, max_length=100
    )
    position: Annotated[StrictInt, Field(ge=0, le=INT32)] = 0


class AttributeUpdate(Partial, AttributeCreate):
    slug: str = Field(pattern=SLUG, max_length=80)


class CollectionCreate(Body):
    title: str = Field(min_length=1, max_length=200)
    slug: str | None = Field(default=None, pattern=SLUG, max_length=200)
    description: str = Field(default="", max_length=5000)
    published: StrictBool = False
    product_ids: list[UUID] = Field(default_factory=list, max_length=1000)


class CollectionUpdate(Partial):
    """Fields to change; the products are set by their own route."""

    title: str = Field(min_length=1, max_length=200)
    slug: str = Field(pattern=SLUG, max_length=200)
    description: str = Field(max_length=5000)
    published: StrictBool


# -- inventory -----------------------------------------------------------------------------------------------
LOCATION_CODE = r"^[A-Z0-9_-]{1,32}$"


class LocationCreate(Body):
    name: str = Field(min_length=1, max_length=120)
    code: str = Field(pattern=LOCATION_CODE)
    address: str = Field(default="", max_length=500)
    is_default: StrictBool = False
    active: StrictBool = True


class LocationUpdate(Partial, LocationCreate):
    pass


class InventoryAdjust(Body):
    """A stock delta at a location (the default location when omitted)."""

    product_id: UUID
    location_id: UUID | None = None
    delta: Annotated[StrictInt, Field(ge=-1_000_000, le=1_000_000)]
    reason: Annotated[str, NotBlank] = Field(min_length=1, max_length=200)

    @field_validator("delta")
    @classmethod
    def _non_zero(cls, delta: int) -> int:
        if delta == 0:
            raise ValueError(say("validation.delta_zero"))
        return delta
