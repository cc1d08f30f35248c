"""Sessions and the role gate: the /auth/sso hand-off (EdDSA, 60 s, single-use jti), the svc_session cookie,
and the redirects of the gate."""

from __future__ import annotations

import html
import re
import time
import uuid
from urllib.parse import urlencode

import jwt
import pytest
from bohelpers import AUDIENCE, ISSUER, Client, invoke, sso
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from svc_backoffice.access import handoff, sessions
from svc_backoffice.core import config


def token(key, *, email="new@shop.example", role="editor", jti=None, **overrides):
    args = {
        "issuer": ISSUER,
        "audience": AUDIENCE,
        "email": email,
        "role": role,
        "jti": jti or uuid.uuid4().hex,
    }
    return handoff.encode(key, **{**args, **overrides})


def pem(key: Ed25519PrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def cookie_of(answer) -> str:
    (cookie,) = [c for c in answer.cookies if c.startswith("svc_session=")]
    return cookie.split(";")[0]


def test_sso_mints_an_httponly_session_cookie_and_redirects(db, handoff_key):
    answer = sso(f"/auth/sso?token={token(handoff_key)}&next=/products")
    assert (answer.status, answer.location) == (302, "/products")
    (raw,) = [c for c in answer.cookies if c.startswith("svc_session=")]
    assert "HttpOnly" in raw and "SameSite=Lax" in raw and "Max-Age=28800" in raw
    assert any(c.startswith("svc_sso_confirm=;") and "Max-Age=0" in c for c in answer.cookies)  # spent
    me = Client(cookie_of(answer))
    assert me.post("/api/products", {"title": "By SSO"}).status == 201
    # The claimed role only seeds a new staff row.
    assert db.one("SELECT role FROM staff WHERE email = 'new@shop.example'")["role"] == "editor"


def test_existing_staff_keep_their_managed_role(db, staff, handoff_key):
    answer = sso(f"/auth/sso?token={token(handoff_key, email='VIEWER@shop.example', role='owner')}")
    assert answer.status == 302
    assert Client(cookie_of(answer)).post("/api/products", {"title": "x"}).location == (
        "/auth/signed-out?reason=insufficient_role"
    )


@pytest.mark.parametrize(
    "case",
    [
        "replayed",
        "wrong_audience",
        "wrong_issuer",
        "too_long",
        "expired",
        "bad_role",
        "other_key",
        "hs256",
        "garbage",
        "removed",
    ],
)
def test_bad_hand_offs_redirect_to_signed_out(db, staff, handoff_key, case):
    now = time.time()
    tokens = {
        "wrong_audience": lambda: token(handoff_key, audience="https://other.example"),
        "wrong_issuer": lambda: token(handoff_key, issuer="someone"),
        "too_long": lambda: token(handoff_key, lifetime=61),
        "expired": lambda: token(handoff_key, now=now - 120),
        "bad_role": lambda: token(handoff_key, role="root"),
        "other_key": lambda: token(Ed25519PrivateKey.generate()),
        "hs256": lambda: jwt.encode(
            {
                "iss": ISSUER,
                "aud": AUDIENCE,
                "sub": "a@b.co",
                "role": "owner",
                "jti": "x" * 10,
                "iat": int(now),
                "exp": int(now) + 30,
            },
            "k" * 32,
        ),
        "garbage": lambda: "not-a-token",
        "removed": lambda: token(handoff_key, email="viewer@shop.example"),
    }
    if case == "removed":
        db.all("UPDATE staff SET removed_at = now() WHERE email = 'viewer@shop.example'")
    if case == "replayed":
        value = token(handoff_key, jti="fixed-jti-123")
        assert sso(f"/auth/sso?token={value}").location == "/"
    else:
        value = tokens[case]()
    answer = sso(f"/auth/sso?token={value}")
    assert (answer.status, answer.location) == (302, "/auth/signed-out?reason=invalid_handoff")
    assert not [c for c in answer.cookies if c.startswith("svc_session=")]


def test_sso_next_must_stay_on_site(db, handoff_key):
    for target in ("https://evil.example/", "//evil.example", "/\\evil", "/a/../b", "/%2e%2e/x"):
        query = urlencode({"token": token(handoff_key), "next": target})
        assert sso(f"/auth/sso?{query}").location == "/"


def test_handoff_public_key_may_hold_several_keys_while_the_platform_rotates(db, handoff_key, monkeypatch):
    new = Ed25519PrivateKey.generate()
    pems = {k: pem(k) for k in (new, handoff_key)}
    monkeypatch.setenv("HANDOFF_PUBLIC_KEY", pems[new] + pems[handoff_key])  # the current one first
    config.reset_settings()
    for key in (new, handoff_key):
        for kid in (handoff.key_id(pems[key]), None):
            assert sso(f"/auth/sso?token={token(key, kid=kid)}").location == "/"
    monkeypatch.setenv("HANDOFF_PUBLIC_KEY", pems[new])  # the old key retired
    config.reset_settings()
    for kid in (handoff.key_id(pems[handoff_key]), None):
        assert sso(f"/auth/sso?token={token(handoff_key, kid=kid)}").location == (
            "/auth/signed-out?reason=invalid_handoff"
        )


def test_the_sign_in_lands_on_a_page_naming_the_store_the_person_and_the_role(db, handoff_key):
    answer = sso(f"/auth/sso?token={token(handoff_key, email='lena@shop.example', role='admin')}")
    assert (answer.status, answer.location) == (302, "/")
    landing = Client(cookie_of(answer)).get("/")
    assert landing.status == 200 and landing.headers["Content-Type"].startswith("text/html")
    assert '<strong id="email">lena@shop.example</strong>' in landing.body
    assert '<strong id="role">admin</strong>' in landing.body
    # Nothing runs but the backoffice's own script and style files.
    assert landing.headers["Content-Security-Policy"].startswith("default-src 'none'; script-src 'self'")
    # Markup in the store's name is text on the page.
    db.all("UPDATE settings SET store_name = %s", ("<b>Lena's</b> shop",))
    assert "&lt;b&gt;Lena&#39;s&lt;/b&gt; shop" in Client(cookie_of(answer)).get("/").body


def test_the_landing_page_needs_a_session(db):
    answer = invoke("GET", "/")
    assert answer.status == 401 and "Open the backoffice again from your workspace" in answer.body


def test_signed_out_page_clears_the_cookie(db):
    answer = invoke("GET", "/auth/signed-out")
    assert answer.status == 200 and "signed out" in answer.body
    assert any("Max-Age=0" in c for c in answer.cookies)
    assert "does not allow" in invoke("GET", "/auth/signed-out?reason=insufficient_role").body


@pytest.mark.parametrize(
    ("member", "method", "path", "body"),
    [
        ("viewer", "POST", "/api/products", {"title": "x"}),
        (
            "viewer",
            "POST",
            "/api/inventory/adjust",
            {"product_id": str(uuid.uuid4()), "delta": 1, "reason": "r"},
        ),
        ("viewer", "PATCH", "/api/settings", {"store_name": "x"}),
        ("editor", "PATCH", "/api/settings", {"store_name": "x"}),
        ("editor", "GET", "/api/staff", None),
        ("editor", "POST", "/api/inventory/locations", {"name": "B", "code": "B"}),
    ],
)
def test_insufficient_role_redirects(as_role, member, method, path, body):
    answer = as_role(member).request(method, path, body=body)
    assert (answer.status, answer.location) == (302, "/auth/signed-out?reason=insufficient_role")


def test_missing_expired_or_forged_session_redirects_to_signed_out(db, staff):
    expired = sessions.mint(staff["owner"]["id"], now=time.time() - 9 * 3600)
    forged = jwt.encode(
        {
            "sub": staff["owner"]["id"],
            "typ": "svc_session",
            "iat": int(time.time()),
            "exp": int(time.time()) + 60,
        },
        "x" * 48,
        algorithm="HS256",
    )
    for cookie in (None, f"svc_session={expired}", f"svc_session={forged}", "svc_session=garbage"):
        answer = Client(cookie).get("/api/products")
        assert (answer.status, answer.location) == (302, "/auth/signed-out")


def test_a_removed_member_loses_access_at_once(as_role, db, staff):
    client = as_role("editor")
    db.all("UPDATE staff SET removed_at = now() WHERE id = %s", (staff["editor"]["id"],))
    assert client.get("/api/products").location == "/auth/signed-out"


def test_higher_roles_pass_lower_gates(as_role):
    for member in ("viewer", "editor", "admin", "owner"):
        assert as_role(member).get("/api/products").status == 200
    for member in ("editor", "admin", "owner"):
        assert as_role(member).post("/api/categories", {"name": f"c {member}"}).status == 201


def test_unknown_route_is_404(as_role):
    answer = as_role("owner").get("/api/nothing-here")
    assert (answer.status, answer.json()) == (404, {"error": "Not found"})


def test_expired_hand_off_rows_are_pruned_and_live_ones_still_stop_a_replay(db, handoff_key):
    db.all(
        "INSERT INTO sso_handoffs (jti, email, expires_at) VALUES "
        "('expired-long-ago', 'old@shop.example', now() - interval '1 hour'), "
        "('expired-in-leeway', 'old@shop.example', now() - interval '2 seconds')"
    )
    live = token(handoff_key, email="live@shop.example", jti="live-jti-0001")
    assert sso(f"/auth/sso?token={live}").location == "/"
    other = token(handoff_key, email="other@shop.example")
    assert sso(f"/auth/sso?token={other}").location == "/"
    kept = {row["jti"] for row in db.all("SELECT jti FROM sso_handoffs")}
    assert "expired-long-ago" not in kept
    assert {"expired-in-leeway", "live-jti-0001"} <= kept
    assert sso(f"/auth/sso?token={live}").location == "/auth/signed-out?reason=invalid_handoff"


def test_a_self_hosted_hand_off_signs_in_only_the_browser_that_confirms_it(db, handoff_key):
    """Login CSRF: a link minted for one person, opened in another's browser (sent by mail, or a page that
    navigates there or posts its form), must not sign that browser in as the first. Self-hosted, no cookie of
    the platform's reaches the backoffice, so the link opens a page naming the account, and only that page's
    own form, with the SameSite=Strict cookie it set, signs in."""
    link = f"/auth/sso?token={token(handoff_key, email='mallory@shop.example', role='admin')}&next=/orders"
    page = invoke("GET", link)
    assert page.status == 200 and not [c for c in page.cookies if c.startswith("svc_session=")]
    assert "Continue as mallory@shop.example?" in page.body and "if someone sent it to you" in page.body
    assert page.headers["X-Frame-Options"] == "DENY"  # its button cannot be framed and clicked blind
    (confirm,) = [c for c in page.cookies if c.startswith("svc_sso_confirm=")]
    assert "SameSite=Strict" in confirm and "HttpOnly" in confirm and "Path=/auth/sso" in confirm
    fields = dict(re.findall(r'<input type=hidden name=(\w+) value="([^"]*)">', page.body))
    form = urlencode({name: html.unescape(value) for name, value in fields.items()})
    posted = {"Content-Type": "application/x-www-form-urlencoded"}
    # Another site's form: the same fields, without the cookie (or with another browser's).
    for cookie in ({}, {"Cookie": "svc_sso_confirm=another-browsers-value"}):
        refused = invoke("POST", "/auth/sso", raw_body=form, headers={**posted, **cookie})
        assert refused.location == "/auth/signed-out?reason=invalid_handoff"
        assert not [c for c in refused.cookies if c.startswith("svc_session=")]
    nonce = confirm.split(";", 1)[0].split("=", 1)[1]
    signed = invoke(
        "POST", "/auth/sso", raw_body=form, headers={**posted, "Cookie": f"svc_sso_confirm={nonce}"}
    )
    assert (signed.status, signed.location) == (302, "/orders")
    assert [c for c in signed.cookies if c.startswith("svc_session=")]
