"""Blog posts (publish, unpublish, schedule), categories (reorder) and comment moderation (bulk, 207)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest


@pytest.fixture
def post(editor):
    answer = editor.post("/api/blog/posts", {"title": "Hello world", "body": "First post", "tags": ["news"]})
    assert answer.status == 201
    return answer.json()


def add_comments(db, post_id: str, n: int) -> list[str]:
    rows = db.all(
        "INSERT INTO blog_comments (post_id, author_name, body) SELECT %s, 'Reader', 'Nice ' || i "
        "FROM generate_series(1, %s) i RETURNING id::text",
        (post_id, n),
    )
    return [r["id"] for r in rows]


def test_post_crud(editor, viewer, staff, post):
    assert (post["slug"], post["status"], post["author_id"]) == (
        "hello-world",
        "draft",
        staff["editor"]["id"],
    )
    dup = editor.post("/api/blog/posts", {"title": "Hello world"})
    assert (dup.status, dup.json()) == (409, {"error": "A blog post with that slug already exists."})
    assert editor.post("/api/blog/posts", {"title": ""}).status == 400
    assert editor.post("/api/blog/posts", {"title": "x", "category_id": str(uuid.uuid4())}).status == 422
    assert editor.post("/api/blog/posts", {"title": "x", "status": "published"}).status == 400
    assert editor.patch(f"/api/blog/posts/{post['id']}", {"excerpt": "Short"}).json()["excerpt"] == "Short"
    assert editor.patch(f"/api/blog/posts/{uuid.uuid4()}", {"excerpt": "x"}).status == 404
    assert viewer.get(f"/api/blog/posts/{post['id']}").json()["body"] == "First post"
    assert viewer.get(f"/api/blog/posts/{uuid.uuid4()}").status == 404
    assert [p["id"] for p in viewer.get("/api/blog/posts?q=hello&status=draft").json()["items"]] == [
        post["id"]
    ]
    assert viewer.get("/api/blog/posts?status=gone").status == 400
    assert editor.delete(f"/api/blog/posts/{post['id']}").json() == {"ok": True}
    assert editor.delete(f"/api/blog/posts/{post['id']}").status == 404


def test_publish_unpublish_schedule(editor, viewer, db, post):
    url = f"/api/blog/posts/{post['id']}"
    published = editor.post(f"{url}/publish")
    assert (published.status, published.json()["status"]) == (200, "published")
    assert published.json()["published_at"] is not None
    again = editor.post(f"{url}/publish")
    assert (again.status, again.json()) == (422, {"error": "The post is already published."})
    soon = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    assert editor.post(f"{url}/schedule", {"publish_at": soon}).status == 422
    assert editor.post(f"{url}/unpublish").json()["status"] == "draft"
    assert editor.post(f"{url}/unpublish").status == 422
    past = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    assert editor.post(f"{url}/schedule", {"publish_at": past}).status == 400
    assert editor.post(f"{url}/schedule", {"publish_at": "2031-01-01T00:00:00"}).status == 400
    assert editor.post(f"{url}/schedule", {}).status == 400
    scheduled = editor.post(f"{url}/schedule", {"publish_at": soon})
    assert (scheduled.status, scheduled.json()["status"]) == (200, "scheduled")
    # Its time comes: the next read publishes it.
    db.all("UPDATE blog_posts SET scheduled_for = now() - interval '1 second' WHERE id = %s", (post["id"],))
    assert viewer.get(url).json()["status"] == "published"
    for action in ("publish", "unpublish"):
        assert editor.post(f"/api/blog/posts/{uuid.uuid4()}/{action}").status == 404
    assert editor.post(f"/api/blog/posts/{uuid.uuid4()}/schedule", {"publish_at": soon}).status == 404


def test_categories(editor, viewer):
    news = editor.post("/api/blog/categories", {"name": "News"}).json()
    guides = editor.post("/api/blog/categories", {"name": "Guides", "position": 1}).json()
    assert editor.post("/api/blog/categories", {"name": "News"}).status == 409
    assert editor.post("/api/blog/categories/reorder", {"ids": [guides["id"], news["id"]]}).json() == {
        "ok": True
    }
    assert [c["slug"] for c in viewer.get("/api/blog/categories").json()["items"]] == ["guides", "news"]
    assert editor.post("/api/blog/categories/reorder", {"ids": [news["id"], news["id"]]}).status == 400
    assert editor.post("/api/blog/categories/reorder", {"ids": [str(uuid.uuid4())]}).status == 422
    assert editor.patch(f"/api/blog/categories/{news['id']}", {"slug": "guides"}).status == 409
    assert editor.patch(f"/api/blog/categories/{news['id']}", {"name": "Updates"}).json()["name"] == "Updates"
    post = editor.post("/api/blog/posts", {"title": "In news", "category_id": news["id"]}).json()
    assert editor.delete(f"/api/blog/categories/{news['id']}").json() == {"ok": True}
    assert viewer.get(f"/api/blog/posts/{post['id']}").json()["category_id"] is None
    assert editor.delete(f"/api/blog/categories/{news['id']}").status == 404
    assert editor.patch(f"/api/blog/categories/{uuid.uuid4()}", {"name": "x"}).status == 404


def test_comment_moderation(editor, viewer, db, post):
    ids = add_comments(db, post["id"], 4)
    assert len(viewer.get(f"/api/blog/comments?post_id={post['id']}&status=pending").json()["items"]) == 4
    assert viewer.get("/api/blog/comments?status=weird").status == 400
    assert editor.patch(f"/api/blog/comments/{ids[0]}", {"status": "spam"}).json()["status"] == "spam"
    assert editor.patch(f"/api/blog/comments/{ids[0]}", {"status": "deleted"}).status == 400
    assert editor.patch(f"/api/blog/comments/{uuid.uuid4()}", {"status": "spam"}).status == 404
    answer = editor.post("/api/blog/comments/approve-all")
    assert answer.json() == {"ok": True, "processed": 3, "action": "approve"}
    assert editor.post("/api/blog/comments/approve-all").json()["processed"] == 0


@pytest.mark.parametrize("action", ["approve", "spam", "delete"])
def test_bulk_all_succeed(editor, viewer, db, post, action):
    ids = add_comments(db, post["id"], 3)
    answer = editor.post("/api/blog/comments/bulk", {"ids": ids, "action": action})
    assert (answer.status, answer.json()) == (200, {"ok": True, "processed": 3, "action": action})
    remaining = viewer.get("/api/blog/comments").json()["items"]
    if action == "delete":
        assert remaining == []
    else:
        assert {c["status"] for c in remaining} == {"approved" if action == "approve" else "spam"}


def test_bulk_with_an_unknown_id_is_207(editor, viewer, db, post):
    ids = add_comments(db, post["id"], 2)
    unknown = str(uuid.uuid4())
    answer = editor.post("/api/blog/comments/bulk", {"ids": [*ids, unknown], "action": "delete"})
    assert answer.status == 207
    assert answer.json() == {
        "ok": False,
        "processed": 2,
        "failed": 1,
        "failed_ids": [unknown],
        "action": "delete",
        "message": "2/3 succeeded; 1 failed",
    }
    assert viewer.get("/api/blog/comments").json()["items"] == []


@pytest.mark.parametrize(
    "body",
    [
        {"ids": [], "action": "approve"},
        {"action": "approve"},
        {"ids": ["not-a-uuid"], "action": "approve"},
        {"ids": [str(uuid.uuid4())], "action": "publish"},
        {"ids": "all", "action": "approve"},
    ],
)
def test_bulk_bad_bodies_are_400(editor, body):
    assert editor.post("/api/blog/comments/bulk", body).status == 400


def test_bulk_with_duplicate_ids_is_400_and_changes_nothing(editor, viewer, db, post):
    ids = add_comments(db, post["id"], 2)
    answer = editor.post("/api/blog/comments/bulk", {"ids": [ids[0], ids[0], ids[1]], "action": "approve"})
    assert answer.status == 400
    assert answer.json()["error"]["fieldErrors"]["ids"] == ["Value error, ids must be unique"]
    assert {c["status"] for c in viewer.get("/api/blog/comments").json()["items"]} == {"pending"}
    assert editor.post("/api/blog/comments/bulk", raw_body="{not json").status == 400
