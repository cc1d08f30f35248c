"""Content: blog posts (one form to write and edit a post's text, address, summary, category, tags, cover and
search listing; publish now, schedule, back to draft, delete), their categories (arranged on their own page,
categories.py), and comments moderated in bulk (approve, spam, delete) with a partial result said in words, as the API's 207."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.admin import render
from svc_backoffice.admin.editing import Editor, Field, Records
from svc_backoffice.admin.forms import FormInvalid, validated
from svc_backoffice.admin.pages import (
    current_query,
    form,
    form_lists,
    page,
    router,
    see_other,
    signed_in,
    store_row,
)
from svc_backoffice.core.catalogue import say
from svc_backoffice.data.db import Database, Row, database
from svc_backoffice.domain import blog
from svc_backoffice.domain.models.content import (
    BlogCommentBulk,
    BlogCommentListQuery,
    BlogPostCreate,
    BlogPostListQuery,
    BlogPostSchedule,
    BlogPostUpdate,
)
from svc_backoffice.edge.requests import path_id

STATUSES = ("draft", "scheduled", "published")


def _content(status: int = 200, **context: Any) -> Response:
    db = database()
    query = current_query()
    chosen = query.get("status", "") if query.get("status", "") in STATUSES else ""
    comments_status = (
        query.get("comments", "pending") if query.get("comments") in ("approved", "spam") else "pending"
    )
    posts = blog.list_posts(
        db, BlogPostListQuery.model_validate({"limit": "50", **({"status": chosen} if chosen else {})})
    )
    comments = blog.list_comments(db, BlogCommentListQuery.model_validate({"status": comments_status}))
    return page(
        "content.html",
        status,
        nav="content",
        title="Content",
        posts=posts,
        chosen=chosen,
        statuses=STATUSES,
        categories=blog.list_categories(db),
        comments=comments,
        comments_status=comments_status,
        **{"result": None, **context},
    )


@router.page("GET", "/content")
def content() -> Response:
    return _content()


@router.page("GET", "/blog/posts/<id>")
def post_link(id: str) -> Response:
    """Where the command palette's post results lead (the API's search names /blog/posts/<id>)."""
    post = blog.get_post(database(), path_id(id))
    return see_other(f"/content/posts/{post['id']}")


def _categories(db: Database) -> tuple[tuple[str, str], ...]:
    return (("", "No category"), *((str(c["id"]), c["name"]) for c in blog.list_categories(db)))


def _written(db: Database, body: BlogPostCreate) -> Row:
    staff = signed_in()
    return blog.create_post(db, body, staff.id)


def _slug(fields: dict[str, str], data: dict[str, Any], errors: dict[str, str]) -> None:
    """An empty slug is made from the title (a new post) or kept as it is (an existing one)."""
    if "slug" in data and data["slug"] is None:
        del data["slug"]


POSTS = Editor(
    records=Records(
        BlogPostCreate,
        BlogPostUpdate,
        read=blog.get_post,
        update=blog.update_post,
        create=_written,
        delete=blog.delete_post,
    ),
    path="/content/posts",
    api="/api/blog/posts",
    noun="post",
    back="/content",
    sections=(
        (
            "",
            (
                Field("title", "Title", attrs='maxlength="200"', wide=True),
                Field(
                    "slug",
                    "Address",
                    "optional",
                    hint="Small letters, digits and dashes; empty: made from the title",
                    attrs='maxlength="200"',
                    wide=True,
                ),
                Field("excerpt", "Summary", "long", attrs='maxlength="500" rows="2"'),
                Field("body", "Text", "long", attrs='maxlength="200000" rows="14"'),
            ),
        ),
        (
            "Organise",
            (
                Field("category_id", "Category", "select", options=_categories),
                Field("tags", "Tags", "words", hint="Separated by commas"),
                Field("cover_image", "Cover image address", "optional", hint="https://…"),
            ),
        ),
        (
            "Search engine listing",
            (
                Field("seo_title", "Page title", "optional", attrs='maxlength="70"'),
                Field("seo_description", "Meta description", "optional", attrs='maxlength="320"'),
            ),
        ),
    ),
    adjust=_slug,
    unique="slug",
    aside="_post_actions.html",
    removal="Its comments are deleted with it.",
).declare()


@router.page("POST", "/content/posts/<id>/publish", api="POST /api/blog/posts/[id]/publish")
def publish(id: str) -> Response:
    post = blog.publish_post(database(), path_id(id))
    return see_other(f"/content/posts/{post['id']}", notice="saved")


@router.page("POST", "/content/posts/<id>/unpublish", api="POST /api/blog/posts/[id]/unpublish")
def unpublish(id: str) -> Response:
    post = blog.unpublish_post(database(), path_id(id))
    return see_other(f"/content/posts/{post['id']}", notice="saved")


@router.page("POST", "/content/posts/<id>/schedule", api="POST /api/blog/posts/[id]/schedule")
def schedule(id: str) -> Response:
    post = blog.get_post(database(), path_id(id))
    typed = form().get("publish_at", "").strip()
    try:
        local = datetime.fromisoformat(typed).replace(tzinfo=render.zone(store_row()["timezone"]))
        body = validated(BlogPostSchedule, {"publish_at": local})
    except ValueError:
        return POSTS.render(post, POSTS.values(post), 400, schedule_error=say("admin.when"))
    except FormInvalid as exc:
        problem = exc.fields.get("publish_at") or exc.form
        return POSTS.render(post, POSTS.values(post), 400, schedule_error=problem)
    blog.schedule_post(database(), str(post["id"]), body)
    return see_other(f"/content/posts/{post['id']}", notice="saved")


@router.page("POST", "/content/comments", api="POST /api/blog/comments/bulk")
def moderate() -> Response:
    ids = form_lists().get("ids", [])
    try:
        body = validated(BlogCommentBulk, {"ids": ids, "action": form().get("action", "")})
    except FormInvalid as exc:
        return _content(400, form_error=exc.fields.get("ids") or exc.fields.get("action") or exc.form)
    with database().transaction():
        complete, result = blog.bulk_comments(database(), body)
    if complete:
        return see_other("/content", notice="saved")
    # Some were done and some not (deleted meanwhile): the page says which, as the API's 207 does.
    return _content(207, result=say("admin.partial", done=result["processed"], failed=result["failed"]))
