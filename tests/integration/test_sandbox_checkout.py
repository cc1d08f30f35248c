"""Hosted-checkout sandbox (Stripe shape) through the platform's adapter: sessions with idempotent retries,
the hosted page's Pay button, and signed `checkout.session.completed` webhooks checked with verify_signature."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest
from localhttp import PostRecorder

from svc_local.providers import SandboxCredentials, base_urls, build_providers
from svc_local.sandbox import Sandbox
from svc_shared.providers.checkout import Checkout, CheckoutSession, SignatureError, verify_signature
from svc_shared.providers.http import ProviderAuthError


@pytest.fixture(scope="module")
def receiver() -> Iterator[PostRecorder]:
    """The platform's checkout webhook: records what it receives."""
    with PostRecorder("/webhooks/checkout") as running:
        yield running


@pytest.fixture(scope="module")
def sandbox(creds: SandboxCredentials, receiver: PostRecorder) -> Iterator[Sandbox]:
    providers = build_providers(None, creds, checkout_webhook_url=receiver.url)
    with Sandbox("127.0.0.1", 0, providers, quiet=True) as running:
        yield running


@pytest.fixture(scope="module")
def checkout(sandbox: Sandbox, creds: SandboxCredentials) -> Checkout:
    return Checkout(base_urls(sandbox.url)["CHECKOUT_API_URL"], creds.checkout_secret_key)


def new_session(checkout: Checkout, key: str, amount: int = 1500) -> CheckoutSession:
    return checkout.create_session(
        amount_cents=amount,
        product_name="1,000 credits",
        success_url="http://127.0.0.1:9/credits?session={CHECKOUT_SESSION_ID}",
        cancel_url="http://127.0.0.1:9/credits",
        client_reference_id="ws_123",
        metadata={"workspace_id": "ws_123", "credits": "1000"},
        idempotency_key=key,
    )


def test_session_and_idempotent_replay(checkout: Checkout):
    session = new_session(checkout, "key-1")
    assert session.id.startswith("cs_")
    stored = checkout.request("GET", f"/v1/checkout/sessions/{session.id}")
    assert (stored["status"], stored["amount_total"], stored["client_reference_id"]) == (
        "open",
        1500,
        "ws_123",
    )
    assert stored["metadata"] == {"workspace_id": "ws_123", "credits": "1000"}
    assert (stored["url"], stored["expires_at"]) == (session.url, session.expires_at)
    assert session.expires_at is not None and session.expires_at > time.time()
    assert new_session(checkout, "key-1") == session
    assert new_session(checkout, "key-2").id != session.id
    page = httpx.get(session.url)
    assert page.status_code == 200
    assert "Pay 15.00 USD" in page.text


def test_wrong_secret_key_is_401(sandbox: Sandbox):
    with pytest.raises(ProviderAuthError):
        new_session(Checkout(base_urls(sandbox.url)["CHECKOUT_API_URL"], "sk_test_wrong"), "k")


def test_pay_button_delivers_a_signed_webhook(checkout: Checkout, receiver: PostRecorder, creds):
    receiver.received.clear()
    session = new_session(checkout, "key-pay", amount=900)
    paid = httpx.post(session.url)
    assert paid.status_code == 303
    assert paid.headers["location"] == f"http://127.0.0.1:9/credits?session={session.id}"
    assert receiver.wait_for(1, 5) == 1
    body, headers = receiver.received[0]
    signature = headers["Stripe-Signature"]
    verify_signature(body, signature, creds.checkout_webhook_secret, now=time.time())
    with pytest.raises(SignatureError):
        verify_signature(body, signature, "whsec_other", now=time.time())
    event = json.loads(body)
    assert event["type"] == "checkout.session.completed"
    completed = event["data"]["object"]
    assert (completed["id"], completed["status"], completed["payment_status"]) == (
        session.id,
        "complete",
        "paid",
    )
    assert completed["metadata"]["credits"] == "1000"


def test_admin_completion_and_redelivery_of_the_same_event(
    sandbox: Sandbox, checkout: Checkout, receiver, creds
):
    receiver.received.clear()
    session = new_session(checkout, "key-admin")
    done = httpx.post(f"{sandbox.url}/__admin/stripe/sessions/{session.id}/complete").json()
    assert done["delivery"]["status"] == 200
    again = httpx.post(f"{sandbox.url}/__admin/stripe/events/{done['event_id']}/deliver").json()
    assert again["delivery"]["status"] == 200
    ids = [json.loads(body)["id"] for body, _headers in receiver.received]
    assert ids == [done["event_id"], done["event_id"]]
    for body, headers in receiver.received:
        verify_signature(body, headers["Stripe-Signature"], creds.checkout_webhook_secret, now=time.time())
    # A completed session is not completed twice.
    assert httpx.post(f"{sandbox.url}/__admin/stripe/sessions/{session.id}/complete").status_code == 409
