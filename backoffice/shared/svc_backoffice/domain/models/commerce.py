"""Request models of commerce (orders, customers, coupons), shipping and payments."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import (
    AwareDatetime,
    Field,
    StrictBool,
    StrictInt,
    model_validator,
)

from svc_backoffice.core.catalogue import say
from svc_backoffice.domain.models.base import (
    INT32,
    Body,
    Cents,
    Distinct,
    Email,
    ListQuery,
    NotBlank,
    Partial,
)

# -- commerce -------------------------------------------------------------------------------------------------
OrderStatus = Literal["pending", "paid", "processing", "shipped", "delivered", "cancelled", "refunded"]
Currency = Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
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


class OrderUpdate(Partial):
    """Contact, addresses and tracking; the status moves only through /transition."""

    email: Email
    tracking_number: str | None = Field(min_length=1, max_length=120)
    shipping_address: Address | None
    billing_address: Address | None


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


class CustomerUpdate(Partial, CustomerCreate):
    pass


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


class CouponUpdate(Partial, CouponFields):
    """Fields to change; rules spanning stored fields (dates, value per kind) are the database's (422)."""


# -- shipping, payments --------------------------------------------------------------------------------------
class ShippingZoneCreate(Body):
    name: str = Field(min_length=1, max_length=120)
    countries: Annotated[list[Country], Distinct] = Field(default_factory=list, max_length=250)
    position: Annotated[StrictInt, Field(ge=0, le=INT32)] = 0


class ShippingZoneUpdate(Partial, ShippingZoneCreate):
    pass


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


class ShippingMethodUpdate(Partial, ShippingMethodCreate):
    pass


class CarrierCreate(Body):
    name: str = Field(min_length=1, max_length=120)
    code: str = Field(pattern=r"^[a-z0-9_-]{1,40}$")
    tracking_url_template: str | None = Field(default=None, pattern=r"^https://", max_length=500)
    active: StrictBool = True


class CarrierUpdate(Partial, CarrierCreate):
    pass


PaymentProviderKind = Literal["card", "wallet-a", "wallet-b", "mobile-money"]
WebhookSecret = Annotated[str, Field(min_length=16, max_length=500, json_schema_extra={"writeOnly": True})]


class PaymentProviderCreate(Body):
    """A provider; `webhook_secret` is write-only: stored encrypted, never returned (`webhook_secret_set`)."""

    kind: PaymentProviderKind
    display_name: str = Field(min_length=1, max_length=120)
    enabled: StrictBool = False
    public_config: dict[str, Any] = Field(default_factory=dict, max_length=50)
    webhook_secret: WebhookSecret | None = None


class PaymentProviderUpdate(Partial):
    """Fields to change; `webhook_secret: null` removes the secret (the webhook then answers 401)."""

    display_name: str = Field(min_length=1, max_length=120)
    enabled: StrictBool
    public_config: dict[str, Any] = Field(max_length=50)
    webhook_secret: WebhookSecret | None
