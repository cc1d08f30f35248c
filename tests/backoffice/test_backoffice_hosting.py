"""The hosted backoffice: two shops on two PostgreSQL databases served by one deployment through
`hosting.handle`, each under its own base path, with its own data, sessions, hand-off audience, keys and
sealing key, and nothing of one request left behind for the next."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import importlib
import json
import os
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import psycopg
import pytest
from bohelpers import ADMIN_URL, Answer, LambdaContext, answer_of, build_event, migrated_database
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from svc_backoffice.access import handoff
from svc_backoffice.core import config, tenancy
from svc_backoffice.data import db, sealing
from svc_backoffice.hosting import shops as hosting
from svc_backoffice.hosting.shops import Shop

# The routers are shared by every resolver a process builds: load a group's function as well as the hosted
# resolver (as this suite and a local stack do), so the hosted one is shown to serve with its own context.
importlib.import_module("backoffice.functions.catalog.app")

ISSUER = "svc-platform"
PLATFORM = "https://api.example.com"
# What a merchant's own deployment reads; the platform's environment has none of them.
SELF_HOSTED_VARIABLES = (
    "DATABASE_URL",
    "DATABASE_URL_SECRET_ARN",
    "SESSION_SECRET",
    "SESSION_SECRET_ARN",
    "HANDOFF_PUBLIC_KEY",
    "HANDOFF_AUDIENCE",
    "FIELD_ENCRYPTION_KEY",
    "FIELD_ENCRYPTION_SECRET_ARN",
    "FIELD_ENCRYPTION_KMS_KEY_ARN",
    "COOKIE_SECURE",
    "GSC_CLIENT_ID",
    "GSC_CLIENT_SECRET",
    "GSC_PROVIDER_BASE_URL",
)


def public_pem(key: Ed25519PrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


@pytest.fixture(scope="session")
def shop_databases() -> Iterator[tuple[str, str]]:
    with migrated_database("bo_shop_a") as a, migrated_database("bo_shop_b") as b:
        yield a, b


@pytest.fixture
def hosted(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The platform's process: none of the self-hosted variables, a warm instance's pool emptied after."""
    for name in SELF_HOSTED_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    # The platform's own session lifetime (14 days) is no business of the backoffice's.
    monkeypatch.setenv("SESSION_TTL_SECONDS", str(14 * 24 * 3600))
    config.reset_settings()
    yield
    db.POOL.close()
    config.reset_settings()


def make_shop(project_id: str, conninfo: str, *keys: Ed25519PrivateKey) -> Shop:
    return Shop(
        id=project_id,
        base_url=f"{PLATFORM}/shops/{project_id}",
        conninfo=conninfo,
        session_key=os.urandom(32),
        field_key=os.urandom(32),
        handoff_public_keys=tuple(public_pem(k) for k in keys),
    )


@pytest.fixture
def shops(hosted, shop_databases, handoff_key) -> tuple[Shop, Shop]:
    """Two shops the platform signs hand-offs for with the same key (the audience tells them apart)."""
    a, b = shop_databases
    return make_shop("p_alpha", a, handoff_key), make_shop("p_beta", b, handoff_key)


# The hand-off binding cookie the platform gives the browser that asks for a hand-off (hosted shops require
# it): these tests' browser asked for every hand-off token_for mints.
BROWSER_BINDING = "this-browser-asked-for-the-hand-off"


def call(shop: Shop, method: str, path: str, *, cookie: str | None = None, **kwargs: Any) -> Answer:
    headers = dict(kwargs.pop("headers", None) or {})
    if cookie:
        headers["Cookie"] = cookie
    elif path.startswith("/auth/sso"):
        headers.setdefault("Cookie", f"{handoff.BINDING_COOKIE}={BROWSER_BINDING}")
    return answer_of(
        hosting.handle(build_event(method, path, headers=headers, **kwargs), LambdaContext(), shop)
    )


def token_for(
    key: Ed25519PrivateKey,
    audience: str,
    *,
    email: str,
    role: str = "owner",
    kid: bool = True,
) -> str:
    return handoff.encode(
        key,
        issuer=ISSUER,
        audience=audience,
        email=email,
        role=role,
        jti=uuid.uuid4().hex,
        kid=handoff.key_id(public_pem(key)) if kid else None,
        binding=BROWSER_BINDING,
    )


def session_of(answer: Answer) -> tuple[str, str]:
    """(the Cookie header value, the whole Set-Cookie) of a sign-in answer."""
    (raw,) = [c for c in answer.cookies if c.startswith("svc_session=")]
    return raw.split(";")[0], raw


def sign_in(shop: Shop, key: Ed25519PrivateKey, *, role: str = "owner") -> str:
    email = f"{role}-{uuid.uuid4().hex[:8]}@{shop.id}.example"
    answer = call(shop, "GET", f"/auth/sso?token={token_for(key, shop.base_url, email=email, role=role)}")
    assert (answer.status, answer.location) == (302, f"/shops/{shop.id}/"), answer.body
    return session_of(answer)[0]


def test_a_product_created_in_one_shop_is_not_listed_by_the_other(shops, handoff_key, shop_databases):
    a, b = shops
    title = f"Alpha mug {uuid.uuid4().hex[:6]}"
    owner_a, owner_b = sign_in(a, handoff_key), sign_in(b, handoff_key)
    created = call(a, "POST", "/api/products", cookie=owner_a, body={"title": title})
    assert created.status == 201, created.body
    assert title in [p["title"] for p in call(a, "GET", "/api/products", cookie=owner_a).json()["items"]]
    listed_b = call(b, "GET", "/api/products", cookie=owner_b)
    assert listed_b.status == 200 and title not in listed_b.body
    assert call(b, "GET", f"/api/products/{created.json()['id']}", cookie=owner_b).status == 404
    # And the row really lives in shop A's own database only.
    for url, expected in zip(shop_databases, (1, 0), strict=True):
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM products WHERE title = %s", (title,)).fetchone() == (
                expected,
            )


def test_a_session_of_one_shop_is_refused_at_the_other(shops, handoff_key):
    a, b = shops
    answer = call(a, "GET", f"/auth/sso?token={token_for(handoff_key, a.base_url, email='o@alpha.example')}")
    cookie, raw = session_of(answer)
    assert "Path=/shops/p_alpha" in raw and "HttpOnly" in raw and "Secure" in raw and "SameSite=Lax" in raw
    assert call(a, "GET", "/api/products", cookie=cookie).status == 200
    refused = call(b, "GET", "/api/products", cookie=cookie)
    assert (refused.status, refused.location) == (302, "/shops/p_beta/auth/signed-out")
    # The cookie names its shop: even a shop that (wrongly) shared A's key refuses it.
    same_key = dataclasses.replace(b, session_key=a.session_key)
    assert call(same_key, "GET", "/api/products", cookie=cookie).location == "/shops/p_beta/auth/signed-out"


def test_a_hand_off_for_one_shop_is_refused_by_the_other(shops, handoff_key):
    a, b = shops
    for_a = token_for(handoff_key, a.base_url, email="x@alpha.example")
    answer = call(b, "GET", f"/auth/sso?token={for_a}")
    assert (answer.status, answer.location) == (302, "/shops/p_beta/auth/signed-out?reason=invalid_handoff")
    assert not [c for c in answer.cookies if c.startswith("svc_session=")]  # the binding alone is cleared
    # Unused at B, it still signs in at A (B refused it before recording its jti).
    assert call(a, "GET", f"/auth/sso?token={for_a}").status == 302
    assert (
        call(a, "GET", f"/auth/sso?token={for_a}").location
        == "/shops/p_alpha/auth/signed-out?reason=invalid_handoff"
    )


def test_redirects_and_links_stay_under_the_shops_base_path(shops, handoff_key, monkeypatch):
    a, _ = shops
    email = f"nav-{uuid.uuid4().hex[:6]}@alpha.example"
    for target, expected in [
        ("/products?status=active", "/shops/p_alpha/products?status=active"),
        ("https://evil.example/", "/shops/p_alpha/"),
        ("//evil.example", "/shops/p_alpha/"),
        ("/../p_beta/products", "/shops/p_alpha/"),
        ("/%2e%2E/p_beta", "/shops/p_alpha/"),
        ("/a/./b", "/shops/p_alpha/"),
    ]:
        token = token_for(handoff_key, a.base_url, email=email)
        answer = call(a, "GET", "/auth/sso?" + urlencode({"token": token, "next": target}))
        assert (answer.status, answer.location) == (302, expected), target
    viewer = sign_in(a, handoff_key, role="viewer")
    assert call(a, "GET", "/api/settings").location == "/shops/p_alpha/auth/signed-out"
    assert call(a, "PATCH", "/api/settings", cookie=viewer, body={"store_name": "x"}).location == (
        "/shops/p_alpha/auth/signed-out?reason=insufficient_role"
    )
    signed_out = call(a, "GET", "/auth/signed-out")
    assert signed_out.status == 200
    assert any(c.startswith("svc_session=;") and "Path=/shops/p_alpha" in c for c in signed_out.cookies)
    document = call(a, "GET", "/openapi.json").json()
    assert document["servers"] == [{"url": "https://api.example.com/shops/p_alpha"}]
    # The search console sends the browser back to this shop's callback, and the callback back into the shop.
    monkeypatch.setenv("BACKOFFICE_GSC_CLIENT_ID", "platform-gsc-client")
    monkeypatch.setenv("BACKOFFICE_GSC_CLIENT_SECRET", "platform-gsc-secret")
    config.reset_settings()
    admin = sign_in(a, handoff_key, role="admin")
    connect = call(a, "POST", "/api/gsc/connect", cookie=admin)
    assert connect.status == 200, connect.body
    params = parse_qs(urlsplit(connect.json()["authorize_url"]).query)
    assert params["redirect_uri"] == ["https://api.example.com/shops/p_alpha/api/gsc/callback"]
    back = call(a, "GET", f"/api/gsc/callback?state={params['state'][0]}&error=access_denied", cookie=admin)
    assert (back.status, back.location) == (
        302,
        "/shops/p_alpha/settings/integrations?gsc=error&reason=access_denied",
    )


def test_a_rotated_key_set_accepts_both_keys_and_dropping_the_old_one_refuses_it(shops, handoff_key):
    a, _ = shops
    new = Ed25519PrivateKey.generate()
    rotating = make_shop("p_alpha", a.conninfo, new, handoff_key)  # current first, the old one kept
    rotated = make_shop("p_alpha", a.conninfo, new)

    def signs_in(shop: Shop, key: Ed25519PrivateKey, *, kid: bool) -> bool:
        token = token_for(key, shop.base_url, email=f"r-{uuid.uuid4().hex[:6]}@alpha.example", kid=kid)
        answer = call(shop, "GET", f"/auth/sso?token={token}")
        assert answer.status == 302
        return answer.location == "/shops/p_alpha/"

    for kid in (True, False):
        assert signs_in(rotating, new, kid=kid) and signs_in(rotating, handoff_key, kid=kid)
        assert signs_in(rotated, new, kid=kid) and not signs_in(rotated, handoff_key, kid=kid)
    # A kid naming no key of the set is refused, whatever key signed.
    forged_kid = handoff.encode(
        new,
        issuer=ISSUER,
        audience=a.base_url,
        email="k@alpha.example",
        role="owner",
        jti=uuid.uuid4().hex,
        kid=handoff.key_id(public_pem(Ed25519PrivateKey.generate())),
    )
    assert call(rotating, "GET", f"/auth/sso?token={forged_kid}").location.endswith("reason=invalid_handoff")


def test_key_id_is_the_rfc_8037_thumbprint():
    # RFC 8037 appendix A.1 (the Ed25519 public key) and A.3 (its RFC 7638 thumbprint).
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    x = base64.urlsafe_b64decode("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo=")
    pem = (
        Ed25519PublicKey.from_public_bytes(x)
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    assert handoff.key_id(pem) == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"


def test_an_unreachable_shop_database_answers_503_without_a_secret(hosted, handoff_key, caplog):
    down = make_shop("p_down", "postgresql://shopuser:hunter2-very-secret@127.0.0.1:1/shop_down", handoff_key)
    missing = make_shop(
        "p_gone",
        ADMIN_URL.rsplit("/", 1)[0].replace("postgres@", "postgres:hunter3-secret@") + "/no_such_db",
        handoff_key,
    )
    for shop in (down, missing):
        for method, path in [
            ("GET", "/api/products"),
            ("GET", "/auth/sso?token=x"),
            ("POST", "/api/payments/webhooks/card"),
        ]:
            answer = call(shop, method, path, body={} if method == "POST" else None)
            assert answer.status == 503, (shop.id, path, answer.body)
            assert answer.json() == {
                "error": "The shop's database cannot be reached right now. Try again in a moment."
            }
            assert "hunter" not in answer.body
    # Every record with its structured fields (`reason`), as the log shows them.
    logged = "\n".join(json.dumps(r.__dict__, default=str) for r in caplog.records)
    assert "dependency unavailable" in logged and "port 1 failed" in logged  # the reason is in the log ...
    assert "hunter" not in logged  # ... without the password
    # Nothing of the failed request stays current.
    assert tenancy.current_shop() is None


def test_connections_are_kept_per_shop_and_a_broken_one_is_reopened(shops, handoff_key):
    a, b = shops
    owner = sign_in(a, handoff_key)
    sign_in(b, handoff_key)
    assert len(db.POOL) == 2
    kept = db.POOL.checkout(a.conninfo)
    pid = kept.connection.info.backend_pid
    db.POOL.checkin(kept)
    assert call(a, "GET", "/api/products", cookie=owner).status == 200
    kept = db.POOL.checkout(a.conninfo)
    assert kept.connection.info.backend_pid == pid  # the same connection served the second request
    db.POOL.checkin(kept)
    # The server drops the idle connection (a restart, an idle timeout): the next request opens a new one.
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    time.sleep(0.2)
    assert call(a, "GET", "/api/products", cookie=owner).status == 200
    kept = db.POOL.checkout(a.conninfo)
    assert kept.connection.info.backend_pid != pid
    db.POOL.checkin(kept)


def test_the_pool_closes_the_least_recently_used_connection_beyond_its_size(shop_databases):
    pool = db.Pool(size=2)
    urls = [shop_databases[0], shop_databases[1], shop_databases[0] + "?application_name=third"]
    opened = []
    for url in urls:
        with pool.lease(url) as database:
            opened.append(database.connection)
    assert len(pool) == 2
    assert opened[0].closed and not opened[1].closed and not opened[2].closed
    pool.close()
    assert opened[1].closed and opened[2].closed


def test_secrets_are_sealed_with_the_shops_own_key(shops, handoff_key):
    a, b = shops
    secret = "whsec_" + "q" * 32
    admin = sign_in(a, handoff_key, role="admin")
    configured = call(
        a,
        "POST",
        "/api/payments/providers",
        cookie=admin,
        body={"kind": "card", "display_name": "Card", "enabled": True, "webhook_secret": secret},
    )
    assert configured.status == 201, configured.body
    with psycopg.connect(a.conninfo) as conn:
        (sealed,) = conn.execute(
            "SELECT webhook_secret_encrypted FROM payment_providers WHERE kind = 'card'"
        ).fetchone()
    purpose = "payment_providers.webhook_secret:card"
    assert sealing.Sealer(key=a.field_key).unseal(sealed, purpose) == secret
    with pytest.raises(sealing.SealError):
        sealing.Sealer(key=b.field_key).unseal(sealed, purpose)
    # A provider's signed call reaches shop A's webhook; shop B has no such provider.
    body = json.dumps(
        {
            "id": f"evt_{uuid.uuid4().hex[:8]}",
            "type": "payment_intent.succeeded",
            "data": {"object": {"amount": 100}},
        }
    )
    t = str(int(time.time()))
    signature = hmac.new(secret.encode(), f"{t}.{body}".encode(), hashlib.sha256).hexdigest()
    headers = {"card-signature": f"t={t},v1={signature}"}
    assert call(a, "POST", "/api/payments/webhooks/card", raw_body=body, headers=headers).status == 200
    assert call(b, "POST", "/api/payments/webhooks/card", raw_body=body, headers=headers).status == 400
    # Another shop's key cannot open A's secret, so A's provider is unusable under it.
    other_key = dataclasses.replace(a, field_key=b.field_key)
    assert (
        call(other_key, "POST", "/api/payments/webhooks/card", raw_body=body, headers=headers).status == 400
    )


def test_cached_suggestions_are_per_shop(shops, handoff_key):
    a, b = shops
    request = {"task": "rewrite_title", "title": f"Mug {uuid.uuid4().hex[:6]}"}
    viewers = sign_in(a, handoff_key, role="viewer"), sign_in(b, handoff_key, role="viewer")
    assert call(a, "POST", "/api/ai/suggest", cookie=viewers[0], body=request).headers["x-cache"] == "miss"
    assert call(a, "POST", "/api/ai/suggest", cookie=viewers[0], body=request).headers["x-cache"] == "hit"
    assert call(b, "POST", "/api/ai/suggest", cookie=viewers[1], body=request).headers["x-cache"] == "miss"


def test_nothing_of_a_request_outlives_it(shops, handoff_key):
    a, _ = shops
    before = db._current.get()
    call(a, "GET", "/api/products")
    assert tenancy.current_shop() is None and db._current.get() is before
    # A failing request too (no database behind the shop).
    broken = dataclasses.replace(a, conninfo="postgresql://nobody@127.0.0.1:1/none")
    assert call(broken, "GET", "/api/products").status == 503
    assert tenancy.current_shop() is None and db._current.get() is before


def test_hosted_settings_read_only_backoffice_variables(hosted, monkeypatch):
    # The platform's SESSION_TTL_SECONDS (14 days, over the backoffice's limit) is ignored ...
    assert config.hosted_settings().session_ttl_seconds == 8 * 3600
    # ... and the backoffice's own, prefixed, is validated with a message naming it.
    monkeypatch.setenv("BACKOFFICE_SESSION_TTL_SECONDS", "10")
    config.reset_settings()
    with pytest.raises(config.ConfigurationError, match="BACKOFFICE_SESSION_TTL_SECONDS"):
        config.hosted_settings()


def test_a_shop_is_refused_when_built_wrong(handoff_key):
    good: dict[str, Any] = {
        "id": "p_x",
        "base_url": "https://api.example.com/shops/p_x",
        "conninfo": "postgresql://u@h/d",
        "session_key": b"k" * 32,
        "field_key": b"f" * 32,
    }
    Shop(**good)
    for change in (
        {"base_url": "https://api.example.com/shops/p_x/"},
        {"base_url": "/shops/p_x"},
        {"session_key": b"short"},
        {"field_key": b"f" * 16},
        {"handoff_public_keys": public_pem(handoff_key)},
    ):
        with pytest.raises(ValueError, match="p_x"):
            Shop(**{**good, **change})
    assert "conninfo" not in repr(Shop(**good)) and "postgresql" not in repr(Shop(**good))


def test_a_shop_asked_of_each_session_is_the_shop_it_was_built():
    """The platform attaches who may still be signed in to the Shop it built, per request: a copy with that
    question alone, the keys, URLs and paths as they were, and the built Shop left without it."""
    shop = Shop(
        id="p_x",
        base_url="https://api.example.com/shops/p_x",
        conninfo="postgresql://u@h/d",
        session_key=b"k" * 32,
        field_key=b"f" * 32,
        handoff_public_keys=("pem",),
    )
    assert shop.base_path == "/shops/p_x"
    asked = shop.with_access(lambda account_id, epoch: "owner" if epoch == 0 else None)
    assert asked.account_access is not None and shop.account_access is None
    assert (asked.account_access("a", 0), asked.account_access("a", 1)) == ("owner", None)
    assert asked == shop  # every field but the question (which equality leaves out)
    assert (asked.base_path, asked.secure, asked.absent) == ("/shops/p_x", True, False)


def test_a_shop_database_behind_the_code_is_brought_up_to_date_when_first_served(hosted, handoff_key):
    """A platform upgrade that adds a migration rolls across shops as each is next served: the database of a
    shop published with an older template gets the migrations it lacks, once per warm instance."""
    from svc_backoffice.data import migrate

    everything = migrate.load()
    # Published two versions ago.
    with migrated_database("bo_shop_old", everything[:-2]) as url:
        shop = make_shop(f"p_{uuid.uuid4().hex[:8]}", url, handoff_key)
        cookie = sign_in(shop, handoff_key)
        assert call(shop, "GET", "/api/products", cookie=cookie).status == 200
        with psycopg.connect(url, autocommit=True) as conn:
            versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
        assert versions == [m.version for m in everything]
        # Checked once per warm instance: a later request sends no migration query.
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DELETE FROM schema_migrations WHERE version = %s", (everything[-1].version,))
        assert call(shop, "GET", "/api/products", cookie=cookie).status == 200
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(everything) - 1
        db.POOL.close()


def test_a_hosted_shop_takes_writes_from_its_base_urls_origin_only(shops, handoff_key):
    a, _ = shops
    owner = sign_in(a, handoff_key)
    body = {"title": f"Origin mug {uuid.uuid4().hex[:6]}"}
    other = call(
        a, "POST", "/api/products", cookie=owner, body=body, headers={"Origin": "https://shop.example"}
    )
    assert other.status == 403
    plain = call(
        a,
        "POST",
        "/api/products",
        cookie=owner,
        raw_body='{"title": "x"}',
        headers={"Content-Type": "text/plain"},
    )
    assert plain.status == 415
    own = call(a, "POST", "/api/products", cookie=owner, body=body, headers={"Origin": PLATFORM})
    assert own.status == 201, own.body
    out = call(a, "POST", "/auth/sign-out", cookie=owner, headers={"Origin": PLATFORM})
    assert (out.status, out.location) == (302, f"/shops/{a.id}/auth/signed-out")
    assert call(a, "GET", "/api/products", cookie=owner).status == 302


def test_a_hand_off_signs_in_only_the_browser_that_asked_for_it(shops, handoff_key):
    """Login CSRF: a person who obtained a hand-off (for their own account) sends the link to someone else;
    that browser lacks the binding cookie the platform gave the asker, so it is not signed in as them."""
    a, _ = shops
    link = f"/auth/sso?token={token_for(handoff_key, a.base_url, email='attacker@example.com')}"
    for other_browser in ("", f"{handoff.BINDING_COOKIE}=a-cookie-of-its-own"):
        answer = call(
            a, "GET", link, headers={"Cookie": other_browser} if other_browser else {"Cookie": "x=1"}
        )
        assert answer.location == "/shops/p_alpha/auth/signed-out?reason=invalid_handoff"
        assert not [c for c in answer.cookies if c.startswith("svc_session=")]
    asker = call(a, "GET", link)  # the browser that asked: still signed in (the refusals spent nothing)
    assert asker.location == "/shops/p_alpha/"
    (spent,) = [c for c in asker.cookies if c.startswith(f"{handoff.BINDING_COOKIE}=")]
    assert "Max-Age=0" in spent and "Path=/shops/p_alpha/auth/sso" in spent
