"""Request models of the blog, integrations, search and AI suggestions, settings and staff, and the sign-in
hand-off's query."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal
from uuid import UUID

from pydantic import (
    AwareDatetime,
    BaseModel,
    Field,
    StrictInt,
    field_validator,
)

from svc_backoffice.core.catalogue import say
from svc_backoffice.domain.models.base import (
    INT32,
    SLUG,
    Body,
    Distinct,
    Email,
    ListQuery,
    Partial,
    Role,
    Tag,
)

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


class BlogPostUpdate(Partial, BlogPostCreate):
    slug: str = Field(pattern=SLUG, max_length=200)


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


class BlogCategoryUpdate(Partial, BlogCategoryCreate):
    slug: str = Field(pattern=SLUG, max_length=120)


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


class IntegrationUpdate(Partial):
    config: dict[str, Any] = Field(max_length=50)
    secret: IntegrationSecret | None
    status: IntegrationStatus


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
class SettingsUpdate(Partial):
    store_name: str = Field(min_length=1, max_length=120)
    contact_email: Email | None
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    locale: str = Field(pattern=r"^[a-z]{2}(-[A-Z]{2})?$")
    timezone: str = Field(min_length=1, max_length=64)
    low_stock_threshold: Annotated[StrictInt, Field(ge=0, le=100000)]
    weight_unit: Literal["kg", "g", "lb", "oz"]


class StaffCreate(Body):
    email: Email
    name: str = Field(default="", max_length=120)
    role: Role


class StaffUpdate(Partial):
    required = frozenset({"id"})

    id: UUID
    role: Role
    name: str = Field(max_length=120)


class StaffDelete(Body):
    id: UUID


class HandoffQuery(BaseModel):
    token: str
    next: str | None = None
