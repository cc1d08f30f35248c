"""Command-palette search and AI suggestions (deterministic placeholders, SHA-256 keyed cache)."""

from __future__ import annotations

import pytest


def test_search_finds_entities_of_every_kind(editor, viewer, db):
    editor.post("/api/products", {"title": "Walnut desk", "sku": "WD-9"})
    editor.post("/api/categories", {"name": "Walnut furniture"})
    editor.post("/api/collections", {"title": "Walnut week"})
    db.all("INSERT INTO customers (email, first_name) VALUES ('walnut.fan@example.com', 'Wally')")
    answer = viewer.get("/api/search?q=walnut")
    assert answer.status == 200
    kinds = sorted(r["type"] for r in answer.json()["results"])
    assert kinds == ["category", "collection", "customer", "product"]
    assert viewer.get("/api/search?q=wd-9").json()["results"][0]["title"] == "Walnut desk"
    assert viewer.get("/api/search?q=100%25_").json()["results"] == []


@pytest.mark.parametrize("q", ["%C2%B9", "%C2%B2%C2%B3", "%D9%A1%D9%A2"])  # superscripts, Arabic-Indic 12
def test_search_for_digits_int_cannot_read_finds_nothing_and_no_error(viewer, q):
    answer = viewer.get(f"/api/search?q={q}")
    assert answer.status == 200, answer.body
    assert answer.json()["results"] == []


def test_search_needs_a_query(viewer):
    assert viewer.get("/api/search").status == 400
    assert viewer.get("/api/search?q=" + "x" * 101).status == 400


@pytest.mark.parametrize(
    "body",
    [
        {"task": "rewrite_title", "title": "Mug"},
        {"task": "meta_description", "title": "Mug", "keywords": ["coffee"]},
        {"task": "alt_text", "image_url": "https://cdn.example/mug.png"},
        {"task": "product_description", "title": "Mug", "features": ["350 ml"]},
        {"task": "tag_suggestions", "title": "Blue ceramic mug", "max_tags": 2},
        {"task": "translate", "text": "Hello", "target_language": "fr"},
        {"task": "seo_keywords", "title": "Blue ceramic mug"},
        {"task": "blog_outline", "topic": "Coffee", "sections": 3},
    ],
)
def test_suggestions_are_deterministic_and_cached(viewer, body):
    first = viewer.post("/api/ai/suggest", body)
    assert (first.status, first.headers["x-cache"]) == (200, "miss")
    second = viewer.post("/api/ai/suggest", body)
    assert second.headers["x-cache"] == "hit"
    assert first.json() == second.json()
    assert first.json()["task"] == body["task"] and first.json()["suggestions"]


def test_suggest_validates_the_task_shape(viewer):
    assert viewer.post("/api/ai/suggest", {"task": "write_novel"}).status == 400
    assert viewer.post("/api/ai/suggest", {"task": "translate", "text": "hi"}).status == 400
    assert viewer.post("/api/ai/suggest", raw_body="nope").json() == {"error": "Invalid JSON"}


def test_suggest_needs_a_session(as_role):
    assert as_role(None).post("/api/ai/suggest", {"task": "rewrite_title", "title": "x"}).status == 302
