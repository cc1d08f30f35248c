"""Blog routes: posts (publish, unpublish, schedule), categories (reorder), comments (bulk, approve-all)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice import blog
from svc_backoffice.db import database
from svc_backoffice.web import ApiRouter, body, json_response, path_id, query

OK = {"ok": True}

posts = ApiRouter("/api/blog/posts")


@posts.api(
    "GET",
    role="viewer",
    query="BlogPostListQuery",
    answers="200 302 400 500",
    summary="Blog posts with filters and paging",
)
def list_posts() -> Response:
    return json_response(200, blog.list_posts(database(), query(posts)))


@posts.api(
    "POST",
    role="editor",
    body="BlogPostCreate",
    answers="201 302 400 409 422 500",
    summary="Create a draft post",
)
def create_post() -> Response:
    return json_response(201, blog.create_post(database(), body(posts), posts.staff().id))


@posts.api(
    "GET",
    "/<id>",
    role="viewer",
    answers="200 302 404 500",
    summary="A blog post",
)
def get_post(id: str) -> Response:
    return json_response(200, blog.get_post(database(), path_id(id)))


@posts.api(
    "PATCH",
    "/<id>",
    role="editor",
    body="BlogPostUpdate",
    answers="200 302 400 404 409 422 500",
    summary="Update a blog post",
)
def update_post(id: str) -> Response:
    post_id = path_id(id)
    return json_response(200, blog.update_post(database(), post_id, body(posts)))


@posts.api(
    "DELETE",
    "/<id>",
    role="editor",
    answers="200 302 404 500",
    summary="Delete a blog post and its comments",
)
def delete_post(id: str) -> Response:
    blog.delete_post(database(), path_id(id))
    return json_response(200, OK)


@posts.api(
    "POST",
    "/<id>/publish",
    role="editor",
    answers="200 302 404 422 500",
    summary="Publish now",
)
def publish_post(id: str) -> Response:
    return json_response(200, blog.publish_post(database(), path_id(id)))


@posts.api(
    "POST",
    "/<id>/unpublish",
    role="editor",
    answers="200 302 404 422 500",
    summary="Back to draft",
)
def unpublish_post(id: str) -> Response:
    return json_response(200, blog.unpublish_post(database(), path_id(id)))


@posts.api(
    "POST",
    "/<id>/schedule",
    role="editor",
    body="BlogPostSchedule",
    answers="200 302 400 404 422 500",
    summary="Schedule publication at a future time",
)
def schedule_post(id: str) -> Response:
    post_id = path_id(id)
    return json_response(200, blog.schedule_post(database(), post_id, body(posts)))


categories = ApiRouter("/api/blog/categories")


@categories.api(
    "GET",
    role="viewer",
    answers="200 302 500",
    summary="Blog categories in display order",
)
def list_categories() -> Response:
    return json_response(200, {"items": blog.list_categories(database())})


@categories.api(
    "POST",
    role="editor",
    body="BlogCategoryCreate",
    answers="201 302 400 409 500",
    summary="Create a blog category",
)
def create_category() -> Response:
    return json_response(201, blog.create_category(database(), body(categories)))


@categories.api(
    "PATCH",
    "/<id>",
    role="editor",
    body="BlogCategoryUpdate",
    answers="200 302 400 404 409 500",
    summary="Update a blog category",
)
def update_category(id: str) -> Response:
    category_id = path_id(id)
    return json_response(200, blog.update_category(database(), category_id, body(categories)))


@categories.api(
    "DELETE",
    "/<id>",
    role="editor",
    answers="200 302 404 500",
    summary="Delete a blog category (posts keep no category)",
)
def delete_category(id: str) -> Response:
    blog.delete_category(database(), path_id(id))
    return json_response(200, OK)


@categories.api(
    "POST",
    "/reorder",
    role="editor",
    body="ReorderBody",
    answers="200 302 400 422 500",
    summary="Set blog category positions from an ordered id list",
)
def reorder_categories() -> Response:
    blog.reorder_categories(database(), body(categories).ids)
    return json_response(200, OK)


comments = ApiRouter("/api/blog/comments")


@comments.api(
    "GET",
    role="viewer",
    query="BlogCommentListQuery",
    answers="200 302 400 500",
    summary="Comments with filters and paging",
)
def list_comments() -> Response:
    return json_response(200, blog.list_comments(database(), query(comments)))


@comments.api(
    "PATCH",
    "/<id>",
    role="editor",
    body="BlogCommentUpdate",
    answers="200 302 400 404 500",
    summary="Moderate one comment",
)
def update_comment(id: str) -> Response:
    comment_id = path_id(id)
    return json_response(200, blog.update_comment(database(), comment_id, body(comments)))


@comments.api(
    "POST",
    "/bulk",
    role="editor",
    body="BlogCommentBulk",
    answers="200 207 302 400 500",
    summary="Approve, mark as spam or delete many comments (207 on partial success)",
)
def bulk_comments() -> Response:
    all_done, result = blog.bulk_comments(database(), body(comments))
    return json_response(200 if all_done else 207, result)


@comments.api(
    "POST",
    "/approve-all",
    role="editor",
    answers="200 302 500",
    summary="Approve every pending comment",
)
def approve_all() -> Response:
    return json_response(200, blog.approve_all(database()))


ROUTERS = (posts, categories, comments)
