"""Every answer of the backoffice is never sniffed as another type and, unless it is a page with a policy of
its own, carries a Content-Security-Policy that loads and frames nothing (hosted, the shops share the
workspace's origin): a route's JSON, a refusal, the gate's redirect, the resolver's 404 and 405, a 500."""

from __future__ import annotations

import pytest
from bohelpers import invoke

from svc_backoffice.domain import store

JSON_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"


def assert_guarded(answer, policy: str = JSON_POLICY) -> None:
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert answer.headers["Content-Security-Policy"] == policy


@pytest.mark.parametrize(
    ("who", "method", "path", "body", "status"),
    [
        ("owner", "GET", "/api/products", None, 200),
        ("owner", "POST", "/api/products", {"title": ""}, 400),
        ("owner", "GET", "/api/products/not-a-uuid", None, 404),
        ("owner", "PUT", "/api/products", {}, 405),
        ("owner", "GET", "/api/nowhere", None, 404),
        (None, "GET", "/api/products", None, 302),
        ("viewer", "POST", "/api/products", {"title": "x"}, 302),
        (None, "POST", "/api/payments/webhooks/card", {"id": "evt"}, 400),
        (None, "GET", "/openapi.json", None, 200),
    ],
)
def test_json_answers_and_redirects_carry_nosniff_and_a_policy(as_role, who, method, path, body, status):
    answer = as_role(who).request(method, path, body=body)
    assert answer.status == status
    assert_guarded(answer)


def test_an_unexpected_failure_is_guarded_too(as_role, monkeypatch):
    def broken(db):
        raise RuntimeError("boom")

    monkeypatch.setattr(store, "list_staff", broken)
    answer = as_role("owner").get("/api/staff")
    assert answer.status == 500
    assert "boom" not in answer.body
    assert_guarded(answer)


def test_pages_keep_their_own_policy(db):
    page = invoke("GET", "/auth/signed-out")
    assert page.headers["Content-Type"].startswith("text/html")
    assert_guarded(page, "default-src 'none'")
