"""Customers, Discounts, Content, the payments/shipping/integrations settings and the search page against the
real database: what each shows, what an editor does there, and what a viewer is refused."""

from __future__ import annotations

import re
import uuid

from adminhelpers import forms, get, own_token, post, submit, text

from svc_backoffice.domain import blog, commerce
from svc_backoffice.domain.models.commerce import CouponCreate, CustomerCreate
from svc_backoffice.domain.models.content import BlogPostCreate


def test_customers_are_listed_searched_and_shown_with_their_orders(as_role, db):
    ana = commerce.create_customer(
        db, CustomerCreate(email="ana@example.com", first_name="Ana", last_name="Lima")
    )
    commerce.create_customer(db, CustomerCreate(email="bob@example.com", first_name="Bob"))
    viewer = as_role("viewer")
    found = text(get(viewer, "/customers?q=lima"))
    assert "Ana Lima" in found and "Bob" not in found
    page = text(get(viewer, f"/customers/{ana['id']}"))
    assert "ana@example.com" in page and "No orders yet." in page


def test_no_customers_says_what_comes_next(as_role, db):
    assert "No customers yet" in text(get(as_role("viewer"), "/customers"))


def test_an_editor_creates_a_discount_and_sees_its_figures(as_role, db):
    editor = as_role("editor")
    fields = {"code": "spring10", "kind": "percent", "value": "10", "min_subtotal": "20.00", "active": "on"}
    assert submit(editor, "/discounts/new", "/discounts/new", fields).status == 303
    coupon = commerce.list_coupons(db)[0]
    assert (coupon["code"], coupon["value"], coupon["min_subtotal_cents"]) == ("SPRING10", 10, 2000)
    page = text(get(editor, "/discounts"))
    assert "SPRING10" in page and "10 % off over €20.00" in page and "Live" in page
    fixed = submit(
        editor,
        "/discounts/new",
        "/discounts/new",
        {"code": "FIVE", "kind": "fixed", "value": "5.50", "active": "on"},
    )
    assert fixed.status == 303 and commerce.list_coupons(db)[0]["value"] == 550
    bad = submit(editor, "/discounts/new", "/discounts/new", {"code": "x", "kind": "percent", "value": "150"})
    assert bad.status == 400 and 'id="code-error"' in bad.body


def test_a_viewer_sees_discounts_without_controls(as_role, db):
    commerce.create_coupon(db, CouponCreate(code="KEEP", kind="free_shipping"))
    page = get(as_role("viewer"), "/discounts")
    assert "KEEP" in text(page) and forms(page) == ["/auth/sign-out"]
    refused = post(
        as_role("viewer"),
        "/discounts/new",
        {"code": "NOPE", "kind": "free_shipping"},
        csrf=own_token(as_role("viewer")),
    )
    assert refused.status == 403 and "Your role (viewer) cannot do this" in text(refused)
    assert [c["code"] for c in commerce.list_coupons(db)] == ["KEEP"]


def test_posts_are_written_published_and_moved_back_to_draft(as_role, db):
    editor = as_role("editor")
    assert (
        submit(
            editor, "/content/posts/new", "/content/posts/new", {"title": "Autumn care", "excerpt": "Tips"}
        ).status
        == 303
    )
    post_id = blog.list_posts(db, _all())["items"][0]["id"]
    assert submit(editor, "/content", f"/content/posts/{post_id}/publish", {}).status == 303
    assert "Published" in text(get(editor, "/content?status=published"))
    assert submit(editor, "/content", f"/content/posts/{post_id}/unpublish", {}).status == 303
    assert blog.get_post(db, post_id)["status"] == "draft"
    scheduled = submit(
        editor, "/content", f"/content/posts/{post_id}/schedule", {"publish_at": "2099-01-01T09:00"}
    )
    assert scheduled.status == 303 and blog.get_post(db, post_id)["status"] == "scheduled"
    past = submit(
        editor, "/content", f"/content/posts/{post_id}/schedule", {"publish_at": "2001-01-01T09:00"}
    )
    assert past.status == 400


def _all():
    from svc_backoffice.domain.models.content import BlogPostListQuery

    return BlogPostListQuery.model_validate({})


def _comment(db, post_id, name: str) -> str:
    row = db.one(
        "INSERT INTO blog_comments (post_id, author_name, author_email, body) VALUES (%s, %s, %s, %s) RETURNING id::text",
        (post_id, name, f"{name.lower()}@example.com", f"Lovely, says {name}"),
    )
    return row["id"]


def test_comments_are_moderated_in_bulk_and_a_partial_result_is_said(as_role, db, staff):
    post_id = blog.create_post(db, BlogPostCreate(title="Hello"), staff["owner"]["id"])["id"]
    first, second = _comment(db, post_id, "Ana"), _comment(db, post_id, "Bob")
    editor = as_role("editor")
    assert (
        submit(editor, "/content", "/content/comments", {"ids": [first], "action": "approve"}).status == 303
    )
    assert "Lovely, says Ana" in text(get(editor, "/content?comments=approved"))
    gone = str(uuid.uuid4())
    partial = submit(editor, "/content", "/content/comments", {"ids": [second, gone], "action": "spam"})
    assert partial.status == 207
    assert "1 done; 1 could not be changed" in text(partial)
    assert db.one("SELECT status FROM blog_comments WHERE id = %s", (second,))["status"] == "spam"


def test_payments_show_the_connect_button_to_an_admin_only(as_role, db):
    page = get(as_role("admin"), "/settings/payments")
    assert page.status == 200 and 'data-connect="/api/payments/providers/card/connect"' in page.body
    assert get(as_role("editor"), "/settings/payments").status == 403


def test_shipping_and_integrations_read_in_words(as_role, db):
    assert "No shipping zone yet" in text(get(as_role("viewer"), "/settings/shipping"))
    assert "No other integration yet" in text(get(as_role("admin"), "/settings/integrations"))


def test_the_search_page_finds_products_and_orders(as_role, db):
    from svc_backoffice.domain import catalog
    from svc_backoffice.domain.models.catalog import ProductCreate

    product = catalog.create_product(db, ProductCreate(title="Beeswax candle"))
    page = get(as_role("viewer"), "/search?q=beeswax")
    assert "Beeswax candle" in text(page) and f'href="/products/{product["id"]}"' in page.body
    assert "Nothing matches" in text(get(as_role("viewer"), "/search?q=zzzz"))
    assert re.search(r"<form[^>]+/search", get(as_role("viewer"), "/").body)
