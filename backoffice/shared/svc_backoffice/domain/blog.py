"""Blog logic and data access: posts (draft -> scheduled -> published), categories and comment moderation.
A scheduled post becomes published when its time has come, on the next read of the posts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import NotFound, Unprocessable
from svc_backoffice.data.db import Database, Row
from svc_backoffice.domain.models.content import (
    BlogCategoryCreate,
    BlogCategoryUpdate,
    BlogCommentBulk,
    BlogCommentListQuery,
    BlogCommentUpdate,
    BlogPostCreate,
    BlogPostListQuery,
    BlogPostSchedule,
    BlogPostUpdate,
)
from svc_backoffice.domain.rows import (
    Table,
    delete_row,
    insert_row,
    page_of,
    reorder,
    slugify,
    update_row,
    where_equal,
)
from svc_backoffice.domain.store import _like

POST_COLUMNS = (
    "id, title, slug, excerpt, status, category_id, author_id, tags, seo_title, seo_description, cover_image, "
    "scheduled_for, published_at, created_at, updated_at"
)
COMMENT_COLUMNS = "id, post_id, author_name, author_email, body, status, created_at"


def _publish_due(db: Database) -> None:
    db.all(
        "UPDATE blog_posts SET status = 'published', published_at = scheduled_for, scheduled_for = NULL "
        "WHERE status = 'scheduled' AND scheduled_for <= now()"
    )


# -- posts ---------------------------------------------------------------------------------------------------
def list_posts(db: Database, q: BlogPostListQuery) -> dict[str, Any]:
    _publish_due(db)
    where: list[str] = []
    params: dict[str, Any] = {"limit": q.limit + 1, "offset": q.offset}
    if q.q and (text := q.q.strip()):
        params["like"] = _like(text)
        where.append("title ILIKE %(like)s")
    where_equal(q, ("status", "category_id"), where, params)
    rows = db.all(
        f"SELECT {POST_COLUMNS}, (SELECT count(*) FROM blog_comments c WHERE c.post_id = p.id) AS comment_count "  # noqa: S608
        "FROM blog_posts p"
        + (f" WHERE {' AND '.join(where)}" if where else "")
        + " ORDER BY coalesce(published_at, scheduled_for, updated_at) DESC, id DESC LIMIT %(limit)s OFFSET %(offset)s",
        params,
    )
    return page_of(rows, q.offset, q.limit)


def get_post(db: Database, post_id: Any) -> Row:
    _publish_due(db)
    row = db.found(f"SELECT {POST_COLUMNS}, body FROM blog_posts WHERE id = %s", (post_id,))  # noqa: S608
    return row


def create_post(db: Database, body: BlogPostCreate, author_id: str) -> Row:
    data = body.model_dump()
    data["slug"] = data["slug"] or slugify(body.title, "post")
    row = insert_row(db, "blog_posts", {**data, "author_id": author_id}, "id")
    return get_post(db, row["id"])


def update_post(db: Database, post_id: str, body: BlogPostUpdate) -> Row:
    update_row(db, "blog_posts", post_id, body.model_dump(exclude_unset=True), "id")
    return get_post(db, post_id)


def delete_post(db: Database, post_id: str) -> None:
    delete_row(db, "blog_posts", post_id)


@dataclass(frozen=True)
class Move:
    """Where a post may go: the columns the move sets, the statuses it starts from, and the catalogue key of
    its refusal from any other status."""

    sets: str
    allowed_from: tuple[str, ...]
    refusal: str


PUBLISH = Move(
    "status = 'published', published_at = now(), scheduled_for = NULL",
    ("draft", "scheduled"),
    "blog.already",
)
UNPUBLISH = Move(
    "status = 'draft', published_at = NULL, scheduled_for = NULL",
    ("published", "scheduled"),
    "blog.not_unpublishable",
)
SCHEDULE = Move(
    "status = 'scheduled', scheduled_for = %(at)s, published_at = NULL",
    ("draft", "scheduled"),
    "blog.unpublish_first",
)


def _move(db: Database, post_id: str, move: Move, **params: Any) -> Row:
    """One conditional UPDATE: the post moves only from `move.allowed_from`; otherwise 404, or 422 with the
    text of `move.refusal` naming the post's status."""
    _publish_due(db)
    row = db.one(
        f"UPDATE blog_posts SET {move.sets} WHERE id = %(id)s AND status = ANY(%(allowed)s) RETURNING id",  # noqa: S608
        {**params, "id": post_id, "allowed": list(move.allowed_from)},
    )
    if row is None:
        current = db.one("SELECT status FROM blog_posts WHERE id = %s", (post_id,))
        if current is None:
            raise NotFound()
        refusal = move.refusal  # a key of the catalogue, chosen where the move is declared
        raise Unprocessable(say(refusal, status=current["status"]))
    return get_post(db, post_id)


def publish_post(db: Database, post_id: str) -> Row:
    return _move(db, post_id, PUBLISH)


def unpublish_post(db: Database, post_id: str) -> Row:
    return _move(db, post_id, UNPUBLISH)


def schedule_post(db: Database, post_id: str, body: BlogPostSchedule) -> Row:
    return _move(db, post_id, SCHEDULE, at=body.publish_at)


# -- categories ----------------------------------------------------------------------------------------------
CATEGORY_COLUMNS = "id, name, slug, position, created_at"


def list_categories(db: Database) -> list[Row]:
    return db.all(
        f"SELECT {CATEGORY_COLUMNS}, (SELECT count(*) FROM blog_posts p WHERE p.category_id = c.id) AS post_count "  # noqa: S608
        "FROM blog_categories c ORDER BY position, name"
    )


CATEGORIES = Table("blog_categories", CATEGORY_COLUMNS, BlogCategoryCreate, BlogCategoryUpdate, "category")
create_category, update_category, delete_category = CATEGORIES.create, CATEGORIES.update, CATEGORIES.delete


def reorder_categories(db: Database, ids: list[Any]) -> None:
    reorder(db, "blog_categories", ids, say("blog.unknown_category"))


# -- comments ------------------------------------------------------------------------------------------------
STATUS_OF_ACTION = {"approve": "approved", "spam": "spam"}


def list_comments(db: Database, q: BlogCommentListQuery) -> dict[str, Any]:
    where: list[str] = []
    params: dict[str, Any] = {"limit": q.limit + 1, "offset": q.offset}
    where_equal(q, ("status", "post_id"), where, params)
    rows = db.all(
        f"SELECT {COMMENT_COLUMNS} FROM blog_comments"  # noqa: S608
        + (f" WHERE {' AND '.join(where)}" if where else "")
        + " ORDER BY created_at DESC, id DESC LIMIT %(limit)s OFFSET %(offset)s",
        params,
    )
    return page_of(rows, q.offset, q.limit)


def update_comment(db: Database, comment_id: str, body: BlogCommentUpdate) -> Row:
    return update_row(db, "blog_comments", comment_id, body.model_dump(), COMMENT_COLUMNS)


def bulk_comments(db: Database, body: BlogCommentBulk) -> tuple[bool, dict[str, Any]]:
    """Apply `action` to every id in one statement; ids that name no comment are reported, the rest done."""
    ids = [str(i) for i in body.ids]
    if body.action == "delete":
        rows = db.all("DELETE FROM blog_comments WHERE id = ANY(%s::uuid[]) RETURNING id::text", (ids,))
    else:
        rows = db.all(
            "UPDATE blog_comments SET status = %s WHERE id = ANY(%s::uuid[]) RETURNING id::text",
            (STATUS_OF_ACTION[body.action], ids),
        )
    done = {r["id"] for r in rows}
    failed = [i for i in ids if i not in done]
    result: dict[str, Any] = {"ok": not failed, "processed": len(done), "action": body.action}
    if failed:
        result |= {
            "failed": len(failed),
            "failed_ids": failed,
            "message": f"{len(done)}/{len(ids)} succeeded; {len(failed)} failed",
        }
    return not failed, result


def approve_all(db: Database) -> dict[str, Any]:
    rows = db.all("UPDATE blog_comments SET status = 'approved' WHERE status = 'pending' RETURNING id")
    return {"ok": True, "processed": len(rows), "action": "approve"}
