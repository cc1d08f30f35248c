"""Blog routes: posts (publish, unpublish, schedule), categories (reorder), comments (bulk, approve-all)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice import blog
from svc_backoffice.db import database
from svc_backoffice.models import (
    BlogCategoryCreate,
    BlogCategoryUpdate,
    BlogCommentBulk,
    BlogCommentListQuery,
    BlogCommentUpdate,
    BlogPostCreate,
    BlogPostListQuery,
    BlogPostSchedule,
    BlogPostUpdate,
    ReorderBody,
)
from svc_backoffice.web import ApiRouter, body, json_response, path_id, query

OK = {"ok": True}

posts = ApiRouter("/api/blog/posts")


@posts.api("GET")
def list_posts() -> Response:
    return json_response(200, blog.list_posts(database(), query(posts, BlogPostListQuery)))


@posts.api("POST")
def create_post() -> Response:
    return json_response(201, blog.create_post(database(), body(posts, BlogPostCreate), posts.staff().id))


@posts.api("GET", "/<id>")
def get_post(id: str) -> Response:
    return json_response(200, blog.get_post(database(), path_id(id)))


@posts.api("PATCH", "/<id>")
def update_post(id: str) -> Response:
    post_id = path_id(id)
    return json_response(200, blog.update_post(database(), post_id, body(posts, BlogPostUpdate)))


@posts.api("DELETE", "/<id>")
def delete_post(id: str) -> Response:
    blog.delete_post(database(), path_id(id))
    return json_response(200, OK)


@posts.api("POST", "/<id>/publish")
def publish_post(id: str) -> Response:
    return json_response(200, blog.publish_post(database(), path_id(id)))


@posts.api("POST", "/<id>/unpublish")
def unpublish_post(id: str) -> Response:
    return json_response(200, blog.unpublish_post(database(), path_id(id)))


@posts.api("POST", "/<id>/schedule")
def schedule_post(id: str) -> Response:
    post_id = path_id(id)
    return json_response(200, blog.schedule_post(database(), post_id, body(posts, BlogPostSchedule)))


categories = ApiRouter("/api/blog/categories")


@categories.api("GET")
def list_categories() -> Response:
    return json_response(200, {"items": blog.list_categories(database())})


@categories.api("POST")
def create_category() -> Response:
    return json_response(201, blog.create_category(database(), body(categories, BlogCategoryCreate)))


@categories.api("PATCH", "/<id>")
def update_category(id: str) -> Response:
    category_id = path_id(id)
    return json_response(
        200, blog.update_category(database(), category_id, body(categories, BlogCategoryUpdate))
    )


@categories.api("DELETE", "/<id>")
def delete_category(id: str) -> Response:
    blog.delete_category(database(), path_id(id))
    return json_response(200, OK)


@categories.api("POST", "/reorder")
def reorder_categories() -> Response:
    blog.reorder_categories(database(), body(categories, ReorderBody).ids)
    return json_response(200, OK)


comments = ApiRouter("/api/blog/comments")


@comments.api("GET")
def list_comments() -> Response:
    return json_response(200, blog.list_comments(database(), query(comments, BlogCommentListQuery)))


@comments.api("PATCH", "/<id>")
def update_comment(id: str) -> Response:
    comment_id = path_id(id)
    return json_response(200, blog.update_comment(database(), comment_id, body(comments, BlogCommentUpdate)))


@comments.api("POST", "/bulk")
def bulk_comments() -> Response:
    all_done, result = blog.bulk_comments(database(), body(comments, BlogCommentBulk))
    return json_response(200 if all_done else 207, result)


@comments.api("POST", "/approve-all")
def approve_all() -> Response:
    return json_response(200, blog.approve_all(database()))


ROUTERS = (posts, categories, comments)
