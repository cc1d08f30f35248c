"""Blog routes: posts (publish, unpublish, schedule), categories (reorder), comments (bulk, approve-all)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.data.db import database
from svc_backoffice.domain import blog
from svc_backoffice.edge.api_router import ApiRouter
from svc_backoffice.edge.requests import body
from svc_backoffice.edge.web import json_response

posts = ApiRouter("/api/blog/posts", reader="viewer", writer="editor")
posts.lists(blog.list_posts, query="BlogPostListQuery", summary="Blog posts with filters and paging")


@posts.api(
    "POST",
    role="editor",
    body="BlogPostCreate",
    answers="201 302 400 409 422 500",
    summary="Create a draft post",
)
def create_post() -> Response:
    return json_response(201, blog.create_post(database(), body(posts), posts.staff().id))


posts.reads(blog.get_post, summary="A blog post")
posts.updates(blog.update_post, body="BlogPostUpdate", also="409 422", summary="Update a blog post")
posts.deletes(blog.delete_post, summary="Delete a blog post and its comments")


posts.acts("publish", blog.publish_post, also="422", summary="Publish now")
posts.acts("unpublish", blog.unpublish_post, also="422", summary="Back to draft")
posts.acts(
    "schedule",
    blog.schedule_post,
    body="BlogPostSchedule",
    also="422",
    summary="Schedule publication at a future time",
)


categories = ApiRouter("/api/blog/categories", reader="viewer", writer="editor")
categories.lists(blog.list_categories, summary="Blog categories in display order")
categories.creates(
    blog.create_category, body="BlogCategoryCreate", also="409", summary="Create a blog category"
)
categories.updates(
    blog.update_category, body="BlogCategoryUpdate", also="409", summary="Update a blog category"
)
categories.deletes(blog.delete_category, summary="Delete a blog category (posts keep no category)")
categories.reorders(blog.reorder_categories, summary="Set blog category positions from an ordered id list")

comments = ApiRouter("/api/blog/comments", reader="viewer", writer="editor")
comments.lists(blog.list_comments, query="BlogCommentListQuery", summary="Comments with filters and paging")
comments.updates(blog.update_comment, body="BlogCommentUpdate", summary="Moderate one comment")


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


comments.serves(
    "POST",
    "/approve-all",
    blog.approve_all,
    role="editor",
    answers="200 302 500",
    summary="Approve every pending comment",
)


ROUTERS = (posts, categories, comments)
