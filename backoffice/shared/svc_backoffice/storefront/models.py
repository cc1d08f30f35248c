"""The storefront's request models: queries of its catalog reads and the bodies of the coupon check and the
checkout. A checkout line carries a product and a quantity only: anything else a client sends in a line (a
price, a title) is ignored, as prices come from the catalog."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, StrictInt, model_validator

from svc_backoffice.core.catalogue import say
from svc_backoffice.domain.models.base import EMAIL, SLUG, Body, ListQuery
from svc_backoffice.domain.models.commerce import Address

Country = Annotated[str, Field(pattern=r"^[A-Z]{2}$")]
CouponCode = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{3,32}$")]


class ProductsQuery(ListQuery):
    DEFAULT_LIMIT: ClassVar[int] = 24
    MAX_LIMIT: ClassVar[int] = 100

    category: str | None = Field(default=None, pattern=SLUG, max_length=120)
    collection: str | None = Field(default=None, pattern=SLUG, max_length=200)
    sort: Literal["newest", "price_asc", "price_desc", "title"] = "newest"


class SearchQuery(ListQuery):
    DEFAULT_LIMIT: ClassVar[int] = 20
    MAX_LIMIT: ClassVar[int] = 50

    q: str = Field(min_length=1, max_length=100)


class PostsQuery(ListQuery):
    DEFAULT_LIMIT: ClassVar[int] = 10
    MAX_LIMIT: ClassVar[int] = 50


class ShippingQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")

    country: Country


class CartLine(BaseModel):
    """One line of a cart: `slug` or `product_id`, and a quantity. Other fields are ignored."""

    model_config = ConfigDict(extra="ignore")
    MAX_QUANTITY: ClassVar[int] = 100

    slug: str | None = Field(default=None, pattern=SLUG, max_length=200)
    product_id: UUID | None = None
    quantity: Annotated[StrictInt, Field(ge=1, le=MAX_QUANTITY)]

    @model_validator(mode="after")
    def _names_a_product(self) -> CartLine:
        if (self.slug is None) == (self.product_id is None):
            raise ValueError(say("storefront.line_names_one_product"))
        return self


Lines = Annotated[list[CartLine], Field(min_length=1, max_length=50)]


class CouponCheck(Body):
    code: CouponCode
    items: Lines | None = None


class Checkout(Body):
    email: Annotated[str, Field(pattern=EMAIL, max_length=254)]
    items: Lines
    shipping_method_id: UUID
    shipping_address: Address
    coupon_code: CouponCode | None = None
