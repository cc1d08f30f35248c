"""Content: blog posts (write a draft, publish now, schedule, back to draft, delete), their categories, and
comments moderated in bulk (approve, spam, delete) with a partial result said in words, as the API's 207."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.admin import render
from svc_backoffice.admin.forms import FormInvalid, refused, validated
from svc_backoffice.admin.pages import (
    current_query,
    current_staff,
    form,
    form_lists,
    page,
    router,
    see_other,
    store_row,
)
from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import Conflict, InvalidInput, Unprocessable
from svc_backoffice.data.db import database
from svc_backoffice.domain import blog
from svc_backoffice.domain.models.content import (
    BlogCategoryCreate,
    BlogCommentBulk,
    BlogCommentListQuery,
    BlogPostCreate,
    BlogPostListQuery,
    BlogPostSchedule,
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
        **{"values": {}, "errors": {}, "form_error": None, "result": None, **context},
    )


@router.page("GET", "/content")
def content() -> Response:
    return _content()


@router.page("GET", "/blog/posts/<id>")
def post_link(id: str) -> Response:
    """Where the command palette's post results lead (the API's search names /blog/posts/<id>)."""
    blog.get_post(database(), path_id(id))
    return see_other("/content")


@router.page("POST", "/content/posts", api="POST /api/blog/posts")
def create_post() -> Response:
    fields = form()
    staff = current_staff()
    assert staff is not None
    data = {
        "title": fields.get("title", "").strip(),
        "excerpt": fields.get("excerpt", "").strip(),
        "body": fields.get("body", ""),
        "category_id": fields.get("category") or None,
    }
    try:
        body = validated(BlogPostCreate, data, {"category_id": "category"})
        with database().transaction():
            blog.create_post(database(), body, staff.id)
    except FormInvalid as exc:
        return _content(400, values=fields, errors=exc.fields, form_error=exc.form)
    except (InvalidInput, Conflict, Unprocessable) as exc:
        return _content(400, values=fields, form_error=refused(exc).form)
    return see_other("/content", notice="created")


@router.page("POST", "/content/posts/<id>/publish", api="POST /api/blog/posts/[id]/publish")
def publish(id: str) -> Response:
    blog.publish_post(database(), path_id(id))
    return see_other("/content", notice="saved")


@router.page("POST", "/content/posts/<id>/unpublish", api="POST /api/blog/posts/[id]/unpublish")
def unpublish(id: str) -> Response:
    blog.unpublish_post(database(), path_id(id))
    return see_other("/content", notice="saved")


@router.page("POST", "/content/posts/<id>/schedule", api="POST /api/blog/posts/[id]/schedule")
def schedule(id: str) -> Response:
    post_id = path_id(id)
    typed = form().get("publish_at", "").strip()
    try:
        local = datetime.fromisoformat(typed).replace(tzinfo=render.zone(store_row()["timezone"]))
        body = validated(BlogPostSchedule, {"publish_at": local})
    except ValueError:
        return _content(400, form_error=say("admin.when"))
    except FormInvalid as exc:
        return _content(400, form_error=exc.fields.get("publish_at") or exc.form)
    blog.schedule_post(database(), post_id, body)
    return see_other("/content", notice="saved")


@router.page("POST", "/content/posts/<id>/delete", api="DELETE /api/blog/posts/[id]")
def delete_post(id: str) -> Response:
    blog.delete_post(database(), path_id(id))
    return see_other("/content", notice="removed")


@router.page("POST", "/content/categories", api="POST /api/blog/categories")
def create_category() -> Response:
    fields = form()
    try:
        body = validated(
            BlogCategoryCreate, {"name": fields.get("name", "").strip()}, {"name": "category_name"}
        )
        with database().transaction():
            blog.create_category(database(), body)
    except FormInvalid as exc:
        return _content(400, values=fields, errors=exc.fields)
    except Conflict as exc:
        return _content(409, values=fields, errors={"category_name": exc.message})
    return see_other("/content", notice="created")


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
