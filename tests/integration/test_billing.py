"""Credits arrive only through the signed checkout webhook, once per checkout session."""

from __future__ import annotations

import json
import time

import pytest

from svc_shared.providers.checkout import sign_payload
from svc_shared.wiring import services


def event(
    user_id: str, session_id: str = "cs_test_1", event_id: str = "evt_1", amount_total: int = 2500
) -> bytes:
    return json.dumps(
        {
            "id": event_id,
            "type": "checkout.session.completed",
            "data": {
                "object": {
                    "id": session_id,
                    "amount_total": amount_total,
                    "payment_status": "paid",
                    "client_reference_id": user_id,
                    "metadata": {"user_id": user_id, "purpose": "credit_top_up"},
                }
            },
        }
    ).encode()


def deliver(api, body: bytes, signature: str | None):
    headers = {"Content-Type": "application/json"}
    if signature is not None:
        headers["Stripe-Signature"] = signature
    return api.post("/api/webhooks/checkout", body=body, headers=headers)


def test_paid_session_is_credited_once_even_when_replayed(api, app_env, demo_user):
    body = event(demo_user.id)
    signature = sign_payload(body, app_env["checkout_webhook_secret"], int(time.time()))
    first = deliver(api, body, signature)
    assert first.status == 200
    assert first.json() == {"received": True, "credited": True}
    assert services.credits().balance(demo_user.id) == 2500
    replay = deliver(api, body, signature)
    assert replay.json() == {"received": True, "credited": False}
    other_event_same_session = event(demo_user.id, event_id="evt_2")
    deliver(
        api,
        other_event_same_session,
        sign_payload(other_event_same_session, app_env["checkout_webhook_secret"], int(time.time())),
    )
    assert services.credits().balance(demo_user.id) == 2500


@pytest.mark.parametrize(
    ("secret", "age", "expected"),
    [
        ("whsec_wrong", 0, "signature_failed"),
        (None, 301, "signature_failed"),
    ],
)
def test_unauthenticated_events_are_refused_and_not_recorded(api, app_env, demo_user, secret, age, expected):
    body = event(demo_user.id)
    signature = sign_payload(body, secret or app_env["checkout_webhook_secret"], int(time.time()) - age)
    answer = deliver(api, body, signature)
    assert answer.status == 400
    assert answer.json() == {"error": expected}
    assert services.credits().balance(demo_user.id) == 0


def test_missing_signature_is_400(api, demo_user):
    answer = deliver(api, event(demo_user.id), None)
    assert answer.json() == {"error": "missing_signature"}


def test_truncated_body_fails_the_signature(api, app_env, demo_user):
    body = event(demo_user.id)
    signature = sign_payload(body, app_env["checkout_webhook_secret"], int(time.time()))
    assert deliver(api, body[:-5], signature).json() == {"error": "signature_failed"}


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"amount_total": -2500}, "invalid_amount"),
        ({"amount_total": 0}, "invalid_amount"),
        ({"amount_total": 10**30}, "invalid_amount"),
        ({"amount_total": 100_001}, "invalid_amount"),
        ({"session_id": "cs_" + "x" * 2000}, "invalid_event"),
        ({"event_id": "evt_" + "x" * 2000}, "invalid_event"),
        ({"user_id": "no-such-user"}, "unknown_user"),
        ({"user_id": "u" * 5000}, "invalid_event"),
    ],
)
def test_a_signed_event_no_top_up_could_send_is_refused_and_credits_nothing(
    api, app_env, demo_user, changes, expected
):
    """Signed, so the checkout provider sent it: still, a negative or absurd amount, an id no storage key can
    hold, or a user who does not exist is refused in words (never a 500) and credits no one."""
    args = {"user_id": demo_user.id, **changes}
    body = event(**args)
    answer = deliver(api, body, sign_payload(body, app_env["checkout_webhook_secret"], int(time.time())))
    assert (answer.status, answer.json()) == (400, {"error": expected})
    assert services.credits().balance(demo_user.id) == 0


@pytest.mark.parametrize("cents", [500, 100_000])
def test_a_top_up_at_the_edges_of_the_range_is_credited(api, app_env, demo_user, cents):
    body = event(demo_user.id, amount_total=cents)
    answer = deliver(api, body, sign_payload(body, app_env["checkout_webhook_secret"], int(time.time())))
    assert answer.json() == {"received": True, "credited": True}
    assert services.credits().balance(demo_user.id) == cents
