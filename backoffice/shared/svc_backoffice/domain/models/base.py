"""Request models of the backoffice routes (bodies and queries). The OpenAPI document is generated from
them; names match the `body` / `query` columns of the route table."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal, Self
from uuid import UUID

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationInfo,
    field_validator,
    model_validator,
)

from svc_backoffice.catalogue import say

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


class CategoryUpdate(Body):
    name: str = Field(default=None, min_length=1, max_length=120)  # type: ignore[assignment]
    slug: str = Field(default=None, pattern=SLUG, max_length=120)  # type: ignore[assignment]
    parent_id: UUID | None = None
    description: str = Field(default=None, max_length=5000)  # type: ignore[assignment]
    position: Annotated[StrictInt, Field(ge=0, le=INT32)] = None  # type: ignore[assignment]


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


class AttributeUpdate(Body):
    name: str = Field(default=None, min_length=1, max_length=80)  # type: ignore[assignment]
    slug: str = Field(default=None, pattern=SLUG, max_length=80)  # type: ignore[assignment]
    kind: AttributeKind = None  # type: ignore[assignment]
    options: list[Annotated[str, Field(min_length=1, max_length=80)]] = Field(default=None, max_length=100)  # type: ignore[arg-type]
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
    reason: Annotated[str, NotBlank] = Field(min_length=1, max_length=200)

    @field_validator("delta")
    @classmethod
    def _non_zero(cls, delta: int) -> int:
        if delta == 0:
            raise ValueError(say("validation.delta_zero"))
        return delta


# -- commerce -------------------------------------------------------------------------------------------------
OrderStatus = Literal["pending", "paid", "processing", "shipped", "delivered", "cancelled", "refunded"]
Currency = Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
Email = Annotated[str, Field(pattern=EMAIL, max_length=254)]  # 254: RFC 5321's path limit
Country = Annotated[str, Field(pattern=r"^[A-Z]{2}$")]


class Address(Body):
    name: str = Field(default="", max_length=200)
    line1: str = Field(min_length=1, max_length=200)
    line2: str = Field(default="", max_length=200)
    city: str = Field(min_length=1, max_length=120)
    postal_code: str = Field(default="", max_length=20)
    region: str = Field(default="", max_length=120)
    country: Country
    phone: str | None = Field(default=None, max_length=32)


class OrderListQuery(ListQuery):
    """Filters of GET /api/orders; q matches the order number exactly or the email by substring."""

    q: str | None = Field(default=None, max_length=200)
    status: OrderStatus | None = None
    customer_id: UUID | None = None


class OrderItemIn(Body):
    """A line: from a catalog product (title, SKU and price default to the product's) or a custom line."""

    product_id: UUID | None = None
    title: str | None = Field(default=None, min_length=1, max_length=200)
    sku: str | None = Field(default=None, max_length=64)
    quantity: Annotated[StrictInt, Field(ge=1, le=10_000)]
    unit_price_cents: Cents | None = None

    @model_validator(mode="after")
    def _custom_line_is_complete(self) -> OrderItemIn:
        if self.product_id is None and (self.title is None or self.unit_price_cents is None):
            raise ValueError(say("validation.line_incomplete"))
        return self


class OrderCreate(Body):
    email: Email
    customer_id: UUID | None = None
    currency: Currency = "EUR"
    items: list[OrderItemIn] = Field(min_length=1, max_length=200)
    shipping_method_id: UUID | None = None
    shipping_cents: Cents | None = None
    tax_cents: Cents = 0
    coupon_code: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_-]{3,32}$")
    shipping_address: Address | None = None
    billing_address: Address | None = None


class OrderUpdate(Body):
    """Contact, addresses and tracking; the status moves only through /transition."""

    email: Email = None  # type: ignore[assignment]
    tracking_number: str | None = Field(default=None, min_length=1, max_length=120)
    shipping_address: Address | None = None
    billing_address: Address | None = None


class OrderTransition(Body):
    """The target status; whether the move is allowed is the database's rule (order_transition())."""

    to: OrderStatus
    note: str | None = Field(default=None, min_length=1, max_length=2000)


class OrderNoteCreate(Body):
    body: Annotated[str, NotBlank] = Field(min_length=1, max_length=2000)
    internal: StrictBool = True


class CustomerListQuery(ListQuery):
    q: str | None = Field(default=None, max_length=200)


PHONE = r"^\+?[0-9 ().-]{4,32}$"


class CustomerCreate(Body):
    email: Email
    first_name: str = Field(default="", max_length=120)
    last_name: str = Field(default="", max_length=120)
    phone: str | None = Field(default=None, pattern=PHONE)
    accepts_marketing: StrictBool = False
    addresses: list[Address] = Field(default_factory=list, max_length=20)
    note: str = Field(default="", max_length=5000)


class CustomerUpdate(Body):
    email: Email = None  # type: ignore[assignment]
    first_name: str = Field(default=None, max_length=120)  # type: ignore[assignment]
    last_name: str = Field(default=None, max_length=120)  # type: ignore[assignment]
    phone: str | None = Field(default=None, pattern=PHONE)
    accepts_marketing: StrictBool = None  # type: ignore[assignment]
    addresses: list[Address] = Field(default=None, max_length=20)  # type: ignore[arg-type]
    note: str = Field(default=None, max_length=5000)  # type: ignore[assignment]


CouponKind = Literal["percent", "fixed", "free_shipping"]
COUPON_CODE = r"^[A-Z0-9_-]{3,32}$"


class CouponFields(Body):
    code: str = Field(pattern=COUPON_CODE)
    kind: CouponKind
    value: Cents = 0  # percent 1..100, or cents for fixed; 0 for free_shipping
    min_subtotal_cents: Cents = 0
    usage_limit: Annotated[StrictInt, Field(ge=1, le=INT32)] | None = None
    starts_at: AwareDatetime | None = None
    ends_at: AwareDatetime | None = None
    active: StrictBool = True

    @model_validator(mode="after")
    def _consistent(self) -> CouponFields:
        fields = self.model_fields_set
        if self.starts_at and self.ends_at and self.ends_at <= self.starts_at:
            raise ValueError(say("validation.coupon_dates"))
        value = self.value
        if "kind" in fields and value is not None and self.kind == "percent" and not 1 <= value <= 100:
            raise ValueError(say("validation.coupon_percent"))
        if "kind" in fields and value is not None and self.kind == "fixed" and value <= 0:
            raise ValueError(say("validation.coupon_fixed"))
        return self


class CouponCreate(CouponFields):
    """A coupon; `code` is upper case letters, digits, - and _."""


class CouponUpdate(CouponFields):
    """Fields to change; rules spanning stored fields (dates, value per kind) are the database's (422)."""

    code: str = Field(default=None, pattern=COUPON_CODE)  # type: ignore[assignment]
    kind: CouponKind = None  # type: ignore[assignment]
    value: Cents = None  # type: ignore[assignment]
    min_subtotal_cents: Cents = None  # type: ignore[assignment]
    active: StrictBool = None  # type: ignore[assignment]


# -- shipping, payments --------------------------------------------------------------------------------------
class ShippingZoneCreate(Body):
    name: str = Field(min_length=1, max_length=120)
    countries: Annotated[list[Country], Distinct] = Field(default_factory=list, max_length=250)
    position: Annotated[StrictInt, Field(ge=0, le=INT32)] = 0


class ShippingZoneUpdate(ShippingZoneCreate):
    name: str = Field(default=None, min_length=1, max_length=120)  # type: ignore[assignment]
    countries: Annotated[list[Country], Distinct] = Field(default=None, max_length=250)  # type: ignore[arg-type]
    position: Annotated[StrictInt, Field(ge=0, le=INT32)] = None  # type: ignore[assignment]


ShippingKind = Literal["flat", "free", "weight", "pickup"]
Days = Annotated[StrictInt, Field(ge=0, le=365)]


class ShippingMethodCreate(Body):
    zone_id: UUID
    carrier_id: UUID | None = None
    name: str = Field(min_length=1, max_length=120)
    kind: ShippingKind = "flat"
    price_cents: Cents = 0
    free_over_cents: Cents | None = None
    min_days: Days | None = None
    max_days: Days | None = None
    active: StrictBool = True
    position: Annotated[StrictInt, Field(ge=0, le=INT32)] = 0

    @model_validator(mode="after")
    def _consistent(self) -> ShippingMethodCreate:
        if self.min_days is not None and self.max_days is not None and self.max_days < self.min_days:
            raise ValueError(say("validation.method_days"))
        if "kind" in self.model_fields_set and self.kind == "free" and self.price_cents:
            raise ValueError(say("validation.method_free"))
        return self


class ShippingMethodUpdate(ShippingMethodCreate):
    zone_id: UUID = None  # type: ignore[assignment]
    name: str = Field(default=None, min_length=1, max_length=120)  # type: ignore[assignment]
    kind: ShippingKind = None  # type: ignore[assignment]
    price_cents: Cents = None  # type: ignore[assignment]
    active: StrictBool = None  # type: ignore[assignment]
    position: Annotated[StrictInt, Field(ge=0, le=INT32)] = None  # type: ignore[assignment]


class CarrierCreate(Body):
    name: str = Field(min_length=1, max_length=120)
    code: str = Field(pattern=r"^[a-z0-9_-]{1,40}$")
    tracking_url_template: str | None = Field(default=None, pattern=r"^https://", max_length=500)
    active: StrictBool = True


class CarrierUpdate(CarrierCreate):
    name: str = Field(default=None, min_length=1, max_length=120)  # type: ignore[assignment]
    code: str = Field(default=None, pattern=r"^[a-z0-9_-]{1,40}$")  # type: ignore[assignment]
    active: StrictBool = None  # type: ignore[assignment]


PaymentProviderKind = Literal["card", "wallet-a", "wallet-b", "mobile-money"]
WebhookSecret = Annotated[str, Field(min_length=16, max_length=500, json_schema_extra={"writeOnly": True})]


class PaymentProviderCreate(Body):
    """A provider; `webhook_secret` is write-only: stored encrypted, never returned (`webhook_secret_set`)."""

    kind: PaymentProviderKind
    display_name: str = Field(min_length=1, max_length=120)
    enabled: StrictBool = False
    public_config: dict[str, Any] = Field(default_factory=dict, max_length=50)
    webhook_secret: WebhookSecret | None = None


class PaymentProviderUpdate(Body):
    """Fields to change; `webhook_secret: null` removes the secret (the webhook then answers 401)."""

    display_name: str = Field(default=None, min_length=1, max_length=120)  # type: ignore[assignment]
    enabled: StrictBool = None  # type: ignore[assignment]
    public_config: dict[str, Any] = Field(default=None, max_length=50)  # type: ignore[arg-type]
    webhook_secret: WebhookSecret | None = None


# -- blog ----------------------------------------------------------------------------------------------------
BlogStatus = Literal["draft", "scheduled", "published"]


class BlogPostListQuery(ListQuery):
    q: str | None = Field(default=None, max_length=200)
    status: BlogStatus | None = None
    category_id: UUID | None = None


class BlogPostCreate(Body):
    """A post, created as a draft; publish, unpublish and schedule move it."""

    title: str = Field(min_length=1, max_length=200)
    slug: str | None = Field(default=None, pattern=SLUG, max_length=200)
    excerpt: str = Field(default="", max_length=500)
    body: str = Field(default="", max_length=200000)
    category_id: UUID | None = None
    tags: list[Tag] = Field(default_factory=list, max_length=50)
    seo_title: str | None = Field(default=None, max_length=70)
    seo_description: str | None = Field(default=None, max_length=320)
    cover_image: str | None = Field(default=None, min_length=1, max_length=2000)


class BlogPostUpdate(BlogPostCreate):
    title: str = Field(default=None, min_length=1, max_length=200)  # type: ignore[assignment]
    slug: str = Field(default=None, pattern=SLUG, max_length=200)  # type: ignore[assignment]
    excerpt: str = Field(default=None, max_length=500)  # type: ignore[assignment]
    body: str = Field(default=None, max_length=200000)  # type: ignore[assignment]
    tags: list[Tag] = Field(default=None, max_length=50)  # type: ignore[arg-type]


class BlogPostSchedule(Body):
    publish_at: AwareDatetime

    @field_validator("publish_at")
    @classmethod
    def _future(cls, when: datetime) -> datetime:
        if when <= datetime.now(UTC):
            raise ValueError(say("validation.publish_in_past"))
        return when


class BlogCategoryCreate(Body):
    name: str = Field(min_length=1, max_length=120)
    slug: str | None = Field(default=None, pattern=SLUG, max_length=120)
    position: Annotated[StrictInt, Field(ge=0, le=INT32)] = 0


class BlogCategoryUpdate(Body):
    name: str = Field(default=None, min_length=1, max_length=120)  # type: ignore[assignment]
    slug: str = Field(default=None, pattern=SLUG, max_length=120)  # type: ignore[assignment]
    position: Annotated[StrictInt, Field(ge=0, le=INT32)] = None  # type: ignore[assignment]


CommentStatus = Literal["pending", "approved", "spam"]


class BlogCommentListQuery(ListQuery):
    DEFAULT_LIMIT: ClassVar[int] = 50
    MAX_LIMIT: ClassVar[int] = 200

    status: CommentStatus | None = None
    post_id: UUID | None = None


class BlogCommentUpdate(Body):
    status: CommentStatus


class BlogCommentBulk(Body):
    """Distinct comment ids and one action; unknown ids are reported per id (HTTP 207)."""

    ids: Annotated[list[UUID], Distinct] = Field(min_length=1, max_length=500)
    action: Literal["approve", "spam", "delete"]


# -- integrations --------------------------------------------------------------------------------------------
IntegrationStatus = Literal["disconnected", "pending", "connected", "error"]
IntegrationSecret = Annotated[
    str, Field(min_length=1, max_length=4000, json_schema_extra={"writeOnly": True})
]


class IntegrationCreate(Body):
    """`secret` is write-only: stored encrypted, never returned (`secret_set`). `gsc` is managed by /api/gsc."""

    kind: str = Field(pattern=r"^[a-z0-9_-]{2,40}$")
    config: dict[str, Any] = Field(default_factory=dict, max_length=50)
    secret: IntegrationSecret | None = None
    status: IntegrationStatus = "disconnected"


class IntegrationUpdate(Body):
    config: dict[str, Any] = Field(default=None, max_length=50)  # type: ignore[arg-type]
    secret: IntegrationSecret | None = None
    status: IntegrationStatus = None  # type: ignore[assignment]


# -- search, ai ----------------------------------------------------------------------------------------------
class SearchQuery(ListQuery):
    DEFAULT_LIMIT: ClassVar[int] = 5
    MAX_LIMIT: ClassVar[int] = 20

    q: str = Field(min_length=1, max_length=100)


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
    contact_email: Email | None = None
    currency: str = Field(default=None, pattern=r"^[A-Z]{3}$")  # type: ignore[assignment]
    locale: str = Field(default=None, pattern=r"^[a-z]{2}(-[A-Z]{2})?$")  # type: ignore[assignment]
    timezone: str = Field(default=None, min_length=1, max_length=64)  # type: ignore[assignment]
    low_stock_threshold: Annotated[StrictInt, Field(ge=0, le=100000)] = None  # type: ignore[assignment]
    weight_unit: Literal["kg", "g", "lb", "oz"] = None  # type: ignore[assignment]


class StaffCreate(Body):
    email: Email
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
