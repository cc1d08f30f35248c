"""Blog categories on their own page (/content/categories), as product categories are: added, renamed (the
slug in the blog's addresses stays), moved up and down by buttons that are plain forms (keyboard, no script),
deleted after asking with their posts kept without a category; a viewer sees them without a control and the
server refuses a forged post, against the real database."""

from __future__ import annotations

from adminhelpers import error_beside, forms, get, own_token, post, refused_by_role, submit, text

from svc_backoffice.domain import blog
from svc_backoffice.domain.models.content import BlogPostCreate

PAGE = "/content/categories"


def _names(db) -> list[str]:
    return [c["name"] for c in blog.list_categories(db)]


def _add(editor, *names: str) -> None:
    for name in names:
        assert submit(editor, PAGE, PAGE, {"name": name}).location == f"{PAGE}?notice=created"


def test_an_editor_adds_renames_and_reorders_blog_categories(as_role, db):
    editor = as_role("editor")
    assert f"{PAGE}" in get(editor, "/content").body  # the Content page leads here
    _add(editor, "News", "Guides", "Recipes")
    assert _names(db) == ["News", "Guides", "Recipes"]
    recipes = next(c for c in blog.list_categories(db) if c["name"] == "Recipes")
    page = get(editor, PAGE)
    assert f"{PAGE}/{recipes['id']}/move" in forms(page) and 'aria-label="Move Recipes up"' in page.body
    assert (
        submit(editor, PAGE, f"{PAGE}/{recipes['id']}/move", {"to": "up"}).location == f"{PAGE}?notice=saved"
    )
    assert _names(db) == ["News", "Recipes", "Guides"]
    news = blog.list_categories(db)[0]
    submit(editor, PAGE, f"{PAGE}/{news['id']}/move", {"to": "up"})  # the first stays first
    assert _names(db) == ["News", "Recipes", "Guides"]
    renamed = submit(editor, PAGE, f"{PAGE}/{news['id']}", {f"name_{news['id']}": "Shop news"})
    assert renamed.status == 303
    now = blog.list_categories(db)[0]
    assert (now["name"], now["slug"]) == ("Shop news", news["slug"])
    empty = submit(editor, PAGE, f"{PAGE}/{news['id']}", {f"name_{news['id']}": "  "})
    assert empty.status == 400 and error_beside(empty, f"name_{news['id']}")
    taken = submit(editor, PAGE, PAGE, {"name": "Guides"})  # its address would be the same as another's
    assert taken.status == 409 and error_beside(taken, "name")
    blank = submit(editor, PAGE, PAGE, {"name": ""})
    assert blank.status == 400 and error_beside(blank, "name")


def test_a_blog_category_deleted_after_asking_leaves_its_posts_without_one(as_role, db, staff):
    editor = as_role("editor")
    _add(editor, "News")
    news = blog.list_categories(db)[0]
    story = blog.create_post(
        db, BlogPostCreate(title="Opening", body="x", category_id=news["id"]), staff["owner"]["id"]
    )
    assert "1 post" in text(get(editor, PAGE))
    asked = submit(editor, PAGE, f"{PAGE}/{news['id']}/delete", {})
    assert asked.status == 200 and "Delete the category News?" in text(asked)
    assert "Its posts stay, without a category." in text(asked) and _names(db) == ["News"]
    done = post(editor, f"{PAGE}/{news['id']}/delete", {"understood": "on"}, csrf=own_token(editor))
    assert done.location == f"{PAGE}?notice=removed"
    assert _names(db) == [] and blog.get_post(db, story["id"])["category_id"] is None


def test_a_viewer_sees_blog_categories_without_a_control_and_a_forged_post_is_refused(as_role, db):
    _add(as_role("editor"), "News", "Guides")
    viewer = as_role("viewer")
    page = get(viewer, PAGE)
    assert "News" in text(page) and forms(page) == ["/auth/sign-out"] and "Move" not in text(page)
    news = blog.list_categories(db)[0]
    token = own_token(viewer)
    for path, fields in (
        (PAGE, {"name": "Mine"}),
        (f"{PAGE}/{news['id']}", {f"name_{news['id']}": "Mine"}),
        (f"{PAGE}/{news['id']}/move", {"to": "down"}),
        (f"{PAGE}/{news['id']}/delete", {"understood": "on"}),
    ):
        assert refused_by_role(post(viewer, path, fields, csrf=token), "viewer"), path
    assert post(as_role("editor"), PAGE, {"name": "Mine"}, csrf=None).status == 403
    assert _names(db) == ["News", "Guides"]
