"""Checkout on a hosted shop served over HTTP, with the card provider sandbox over real HTTP: the merchant
connects Stripe (OAuth, Allow button), a shopper checks out (prices from the catalog, stock reserved, the
hosted payment page), pays, and the signed webhook marks the order paid exactly once; abandoned checkouts
give their stock back; 20 shoppers racing for the last 5 items never take stock below zero."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from storefronthelpers import LIVE, StoreShop, connect_card, fresh_database, make_shop, use_stripe

from svc_shared.providers.checkout import sign_payload

ADDRESS = {"name": "Ana Diaz", "line1": "1 Rue X", "city": "Lyon", "postal_code": "69001", "country": "FR"}


@pytest.fixture(scope="module")
def shop_url() -> Iterator[str]:
    yield from fresh_database("bo_sf_checkout")


@pytest.fixture
def store(hosted_env, shop_url, front, stripe_sandbox, creds) -> StoreShop:
    hosted_env.setenv("BACKOFFICE_STOREFRONT_CHECKOUT_LIMIT", "1000")
    use_stripe(hosted_env, stripe_sandbox, creds)
    made = make_shop(hosted_env, shop_url, base=front.url, storefront_url=LIVE)
    front.shops[made.shop.id] = made.shop
    return made


@pytest.fixture
def connected(store, stripe_sandbox) -> StoreShop:
    store.extra["account"] = connect_card(store, stripe_sandbox)
    return store


def checkout_body(slug: str, method: str, quantity: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "email": "ana@example.com",
        "items": [{"slug": slug, "quantity": quantity}],
        "shipping_method_id": method,
        "shipping_address": ADDRESS,
        **extra,
    }


def http_checkout(store: StoreShop, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(
        f"{store.shop.base_url}/api/storefront/checkout",
        json=body,
        headers={"Origin": LIVE, **headers},
        timeout=30,
    )


def order_of(store: StoreShop, token: str) -> dict[str, Any]:
    answer = httpx.get(f"{store.shop.base_url}/api/storefront/orders/{token}")
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def session_of(sandbox, creds, store: StoreShop, url: str) -> dict[str, Any]:
    session_id = url.rsplit("/", 1)[1]
    answer = httpx.get(
        f"{sandbox.url}/stripe/v1/checkout/sessions/{session_id}",
        headers={
            "Authorization": f"Bearer {creds.checkout_secret_key}",
            "Stripe-Account": store.extra["account"],
        },
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_checkout_is_closed_until_the_merchant_connects_stripe(store, stripe_sandbox):
    slug = f"closed-{uuid.uuid4().hex[:6]}"
    store.product(slug)
    method = store.shipping()
    assert store.call("GET", "/api/storefront/store").json()["checkout_open"] is False
    closed = store.call("POST", "/api/storefront/checkout", body=checkout_body(slug, method))
    assert (closed.status, closed.json()) == (
        503,
        {"error": "Checkout is not open yet: this shop does not take payments yet."},
    )
    account = connect_card(store, stripe_sandbox)
    assert account.startswith("acct_")
    assert store.call("GET", "/api/storefront/store").json()["checkout_open"] is True
    # The provider's webhook endpoint of that account points at this shop's card webhook.
    endpoints = httpx.get(f"{stripe_sandbox.url}/__admin/stripe/accounts").json()["endpoints"]
    assert any(
        e["account"] == account and e["url"] == f"{store.shop.base_url}/api/payments/webhooks/card"
        for e in endpoints
    )


def test_the_connect_callback_refuses_a_state_it_did_not_give_this_member(store, stripe_sandbox):
    started = store.call("POST", "/api/payments/providers/card/connect", cookie=store.admin_cookie, body={})
    state = httpx.URL(started.json()["url"]).params["state"]
    unknown = store.call(
        "GET", "/api/payments/providers/card/callback?code=ac_x&state=forged", cookie=store.admin_cookie
    )
    assert (unknown.status, unknown.json()) == (
        400,
        {"error": "The card provider's answer could not be verified. Start the connection again."},
    )
    (other,) = store.sql(
        "INSERT INTO staff (email, role, joined_at) VALUES (%s, 'admin', now()) RETURNING id::text",
        (f"other-{uuid.uuid4().hex[:6]}@shop.example",),
    )
    from svc_backoffice.access import sessions
    from svc_backoffice.core import tenancy

    with tenancy.serving(store.shop):
        other_cookie = f"{sessions.SESSION_COOKIE}={sessions.mint(other[0])}"
    foreign = store.call(
        "GET", f"/api/payments/providers/card/callback?code=ac_x&state={state}", cookie=other_cookie
    )
    assert foreign.status == 400
    assert store.sql("SELECT count(*) FROM payment_providers WHERE kind = 'card' AND enabled") in (
        [(0,)],
        [(1,)],
    )
    viewer_refused = store.call("POST", "/api/payments/providers/card/connect", body={})
    assert viewer_refused.status == 302


def test_prices_come_from_the_catalog_and_a_tampered_line_changes_nothing(connected, stripe_sandbox, creds):
    slug = f"priced-{uuid.uuid4().hex[:6]}"
    product = connected.product(slug, price=1450, stock=10)
    method = connected.shipping(price=490)
    body = checkout_body(slug, method, quantity=2)
    body["items"][0] |= {"unit_price_cents": 1, "price_cents": 1, "title": "Free"}
    body |= {"total_cents": 1, "tax_cents": 0, "shipping_cents": 0}
    answer = http_checkout(connected, body)
    assert answer.status_code == 400  # an unknown top-level field is refused, the line's extras ignored
    del body["total_cents"], body["tax_cents"], body["shipping_cents"]
    answer = http_checkout(connected, body)
    assert answer.status_code == 201, answer.text
    made = answer.json()
    assert made["order"] | {"number": 0} == {
        "number": 0,
        "status": "pending",
        "currency": "EUR",
        "subtotal_cents": 2900,
        "discount_cents": 0,
        "shipping_cents": 490,
        "tax_cents": 0,
        "total_cents": 3390,
    }
    assert made["payment_url"].startswith(f"{stripe_sandbox.url}/stripe/pay/cs_test_")
    session = session_of(stripe_sandbox, creds, connected, made["payment_url"])
    assert session["amount_total"] == 3390 and session["metadata"]["order_id"]
    assert session["success_url"] == f"{LIVE}/order/?token={made['token']}"
    assert connected.stock(product) == 8  # reserved
    for bad in ("2", 0, -1, 101, 1.5):
        body["items"][0]["quantity"] = bad
        assert http_checkout(connected, body).status_code == 400, bad


def test_unknown_product_over_stock_and_expired_coupon_are_refused_in_words(connected):
    slug = f"few-{uuid.uuid4().hex[:6]}"
    connected.product(slug, stock=3)
    method = connected.shipping()
    unknown = http_checkout(connected, checkout_body("no-such-bean", method))
    assert (unknown.status_code, unknown.json()) == (
        404,
        {"error": "There is no product no-such-bean in this shop."},
    )
    over = http_checkout(connected, checkout_body(slug, method, quantity=5))
    assert over.status_code == 409
    assert (
        over.json()["error"]
        == f"Not enough stock for {slug.replace('-', ' ').title()}: 3 available, 5 ordered."
    )
    code = f"OLD{uuid.uuid4().hex[:6].upper()}"
    connected.sql(
        "INSERT INTO coupons (code, kind, value, starts_at, ends_at) VALUES "
        "(%s, 'percent', 10, now() - interval '2 days', now() - interval '1 day')",
        (code,),
    )
    expired = http_checkout(connected, checkout_body(slug, method, coupon_code=code))
    assert (expired.status_code, expired.json()) == (422, {"error": f"The coupon {code} has expired."})
    abroad = http_checkout(
        connected, checkout_body(slug, method) | {"shipping_address": ADDRESS | {"country": "JP"}}
    )
    assert (abroad.status_code, abroad.json()) == (422, {"error": "Standard does not ship to JP."})
    assert connected.sql(
        "SELECT count(*) FROM orders WHERE email = 'ana@example.com' AND status = 'pending' "
        "AND id IN (SELECT order_id FROM order_items i JOIN products p ON p.id = i.product_id "
        "WHERE p.slug = %s)",
        (slug,),
    ) == [(0,)]


def times_paid(shop, number: int) -> int:
    """How many moves to paid the order's status history records."""
    ((count,),) = shop.sql(
        "SELECT count(*) FROM order_status_history h JOIN orders o ON o.id = h.order_id "
        "WHERE o.number = %s AND h.to_status = 'paid'",
        (number,),
    )
    return int(count)


def test_paying_marks_the_order_paid_once_and_replays_change_nothing(connected, stripe_sandbox):
    slug = f"paid-{uuid.uuid4().hex[:6]}"
    product = connected.product(slug, stock=4)
    made = http_checkout(connected, checkout_body(slug, connected.shipping(), quantity=1)).json()
    assert order_of(connected, made["token"])["status"] == "pending"
    session_id = made["payment_url"].rsplit("/", 1)[1]
    paid = httpx.post(f"{stripe_sandbox.url}/__admin/stripe/sessions/{session_id}/complete").json()
    assert paid["delivery"]["status"] == 200, paid
    confirmation = order_of(connected, made["token"])
    assert confirmation["status"] == "paid" and confirmation["number"] == made["order"]["number"]
    assert confirmation["email"] == "a***@example.com" and confirmation["items"][0]["slug"] == slug
    for _ in range(3):
        again = httpx.post(f"{stripe_sandbox.url}/__admin/stripe/events/{paid['event_id']}/deliver").json()
        assert json.loads(again["delivery"]["body"])["duplicate"] is True
    assert times_paid(connected, made["order"]["number"]) == 1
    assert connected.stock(product) == 3


def test_the_webhook_applies_an_event_once_under_concurrent_deliveries(connected, stripe_sandbox):
    slug = f"race-{uuid.uuid4().hex[:6]}"
    connected.product(slug, stock=4)
    made = http_checkout(connected, checkout_body(slug, connected.shipping())).json()
    session_id = made["payment_url"].rsplit("/", 1)[1]
    # Record the completion without delivering it, then deliver it ten times at once.
    paid = httpx.post(
        f"{stripe_sandbox.url}/__admin/stripe/sessions/{session_id}/complete?deliver=false"
    ).json()
    results: list[dict[str, Any]] = []
    start = threading.Barrier(10)

    def deliver() -> None:
        start.wait()
        answer = httpx.post(
            f"{stripe_sandbox.url}/__admin/stripe/events/{paid['event_id']}/deliver", timeout=30
        )
        results.append(answer.json()["delivery"])

    threads = [threading.Thread(target=deliver) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    bodies = [json.loads(r["body"]) for r in results]
    assert all(r["status"] == 200 for r in results)
    assert sum(1 for b in bodies if b["duplicate"] is False) == 1
    assert times_paid(connected, made["order"]["number"]) == 1


def test_a_forged_event_changes_nothing(connected):
    slug = f"forged-{uuid.uuid4().hex[:6]}"
    connected.product(slug, stock=2)
    made = http_checkout(connected, checkout_body(slug, connected.shipping())).json()
    (order_id,) = connected.sql("SELECT id::text FROM orders WHERE number = %s", (made["order"]["number"],))[
        0
    ]
    event = {
        "id": f"evt_forged_{uuid.uuid4().hex[:8]}",
        "type": "checkout.session.completed",
        "account": connected.extra["account"],
        "data": {
            "object": {"amount_total": made["order"]["total_cents"], "metadata": {"order_id": order_id}}
        },
    }
    payload = json.dumps(event).encode()
    import time

    forged = httpx.post(
        f"{connected.shop.base_url}/api/payments/webhooks/card",
        content=payload,
        headers={
            "Content-Type": "application/json",
            "Stripe-Signature": sign_payload(payload, "whsec_guess", int(time.time())),
        },
    )
    assert (forged.status_code, forged.json()) == (400, {"ok": False, "error": "signature_failed"})
    assert order_of(connected, made["token"])["status"] == "pending"


def test_an_abandoned_checkout_gives_its_stock_back(connected, stripe_sandbox):
    slug = f"gone-{uuid.uuid4().hex[:6]}"
    product = connected.product(slug, stock=3)
    method = connected.shipping()
    made = http_checkout(connected, checkout_body(slug, method, quantity=2)).json()
    assert connected.stock(product) == 1
    session_id = made["payment_url"].rsplit("/", 1)[1]
    expired = httpx.post(f"{stripe_sandbox.url}/__admin/stripe/sessions/{session_id}/expire").json()
    assert expired["delivery"]["status"] == 200, expired
    assert order_of(connected, made["token"])["status"] == "cancelled"
    assert connected.stock(product) == 3
    # A checkout nobody finished and whose session never told us: the next checkout's sweep releases it.
    stale = http_checkout(connected, checkout_body(slug, method, quantity=3)).json()
    assert connected.stock(product) == 0
    connected.sql(
        "UPDATE storefront_checkouts SET expires_at = now() - interval '1 hour' WHERE order_id = "
        "(SELECT id FROM orders WHERE number = %s)",
        (stale["order"]["number"],),
    )
    fresh = http_checkout(connected, checkout_body(slug, method, quantity=1))
    assert fresh.status_code == 201, fresh.text
    assert order_of(connected, stale["token"])["status"] == "cancelled"
    assert connected.stock(product) == 2


def test_twenty_concurrent_checkouts_of_the_last_five_items(connected):
    slug = f"last-{uuid.uuid4().hex[:6]}"
    product = connected.product(slug, stock=5)
    method = connected.shipping()
    answers: list[httpx.Response] = []
    start = threading.Barrier(20)

    def buy() -> None:
        start.wait()
        answers.append(http_checkout(connected, checkout_body(slug, method)))

    threads = [threading.Thread(target=buy) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [201] * 5 + [409] * 15, [a.text for a in answers if a.status_code not in (201, 409)]
    assert all(a.json()["error"].startswith("Not enough stock for") for a in answers if a.status_code == 409)
    assert connected.stock(product) == 0
    assert connected.sql("SELECT min(quantity) FROM stock_levels WHERE product_id = %s", (product,)) == [(0,)]


def test_checkouts_per_address_are_limited_at_the_edge(connected, hosted_env):
    hosted_env.setenv("BACKOFFICE_STOREFRONT_CHECKOUT_LIMIT", "3")
    hosted_env.setenv("BACKOFFICE_STOREFRONT_TRUSTED_PROXY_HOPS", "1")
    from svc_backoffice.domain import storefront_settings

    storefront_settings.reset()
    slug = f"limit-{uuid.uuid4().hex[:6]}"
    connected.product(slug, stock=50)
    method = connected.shipping()
    shopper = {"X-Forwarded-For": f"203.0.113.{uuid.uuid4().int % 200 + 1}"}
    for _ in range(3):
        assert http_checkout(connected, checkout_body(slug, method), **shopper).status_code == 201
    refused = http_checkout(connected, checkout_body(slug, method), **shopper)
    assert refused.status_code == 429
    assert refused.json() == {"error": "Too many checkouts from your address. Try again in a few minutes."}
    assert 1 <= int(refused.headers["Retry-After"]) <= 600
    other = {"X-Forwarded-For": "198.51.100.7"}
    assert http_checkout(connected, checkout_body(slug, method), **other).status_code == 201


def test_an_order_is_read_only_through_its_own_token(connected):
    slug = f"mine-{uuid.uuid4().hex[:6]}"
    connected.product(slug, stock=5)
    method = connected.shipping()
    mine = http_checkout(connected, checkout_body(slug, method)).json()
    theirs = http_checkout(connected, checkout_body(slug, method, quantity=2)).json()
    assert order_of(connected, mine["token"])["number"] == mine["order"]["number"]
    assert order_of(connected, theirs["token"])["number"] == theirs["order"]["number"]
    forged = "oc_" + "A" * 43
    assert httpx.get(f"{connected.shop.base_url}/api/storefront/orders/{forged}").status_code == 404
    assert (
        httpx.get(f"{connected.shop.base_url}/api/storefront/orders/{mine['order']['number']}").status_code
        == 404
    )


def test_only_an_admin_connects_the_card_provider(store):
    (editor,) = store.sql(
        "INSERT INTO staff (email, role, joined_at) VALUES (%s, 'editor', now()) RETURNING id::text",
        (f"editor-{uuid.uuid4().hex[:6]}@shop.example",),
    )
    from svc_backoffice.access import sessions
    from svc_backoffice.core import tenancy

    with tenancy.serving(store.shop):
        cookie = f"{sessions.SESSION_COOKIE}={sessions.mint(editor[0])}"
    refused = store.call("POST", "/api/payments/providers/card/connect", cookie=cookie, body={})
    assert (refused.status, refused.location) == (
        302,
        f"/shops/{store.shop.id}/auth/signed-out?reason=insufficient_role",
    )
    anonymous = store.call("POST", "/api/payments/providers/card/connect", body={})
    assert (anonymous.status, anonymous.location) == (302, f"/shops/{store.shop.id}/auth/signed-out")


def test_a_signed_payment_of_another_amount_leaves_the_order_pending(connected):
    from svc_backoffice.core import tenancy
    from svc_backoffice.data import sealing
    from svc_backoffice.domain import payments

    slug = f"amount-{uuid.uuid4().hex[:6]}"
    connected.product(slug, stock=2)
    made = http_checkout(connected, checkout_body(slug, connected.shipping())).json()
    (order_id,) = connected.sql("SELECT id::text FROM orders WHERE number = %s", (made["order"]["number"],))[
        0
    ]
    (sealed,) = connected.sql("SELECT webhook_secret_encrypted FROM payment_providers WHERE kind = 'card'")[0]
    with tenancy.serving(connected.shop):
        secret = sealing.unseal(sealed, payments._purpose("card"))
    import time

    def deliver(amount: int) -> httpx.Response:
        event = {
            "id": f"evt_{uuid.uuid4().hex[:12]}",
            "type": "checkout.session.completed",
            "account": connected.extra["account"],
            "data": {"object": {"amount_total": amount, "metadata": {"order_id": order_id}}},
        }
        payload = json.dumps(event).encode()
        signature = sign_payload(payload, secret, int(time.time()))
        return httpx.post(
            f"{connected.shop.base_url}/api/payments/webhooks/card",
            content=payload,
            headers={"Content-Type": "application/json", "Stripe-Signature": signature},
        )

    assert deliver(1).status_code == 200
    assert order_of(connected, made["token"])["status"] == "pending"
    assert deliver(made["order"]["total_cents"]).status_code == 200
    assert order_of(connected, made["token"])["status"] == "paid"
