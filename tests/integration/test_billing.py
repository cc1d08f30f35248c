"""Credits and the paid plan arrive only through the signed checkout webhook, once per checkout session."""

from __future__ import annotations

import json
import time

import pytest

from svc_shared.domain.credit_history import WELCOME_CREDITS
from svc_shared.domain.credits import PAID_PLAN_CENTS
from svc_shared.providers.checkout import sign_payload
from svc_shared.wiring import services


def event(
    user_id: str,
    session_id: str = "cs_test_1",
    event_id: str = "evt_1",
    amount_total: int = 2500,
    purpose: str = "credit_top_up",
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
                    "metadata": {"user_id": user_id, "purpose": purpose},
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
    assert services.credits().balance(demo_user.id) == WELCOME_CREDITS + 2500
    replay = deliver(api, body, signature)
    assert replay.json() == {"received": True, "credited": False}
    other_event_same_session = event(demo_user.id, event_id="evt_2")
    deliver(
        api,
        other_event_same_session,
        sign_payload(other_event_same_session, app_env["checkout_webhook_secret"], int(time.time())),
    )
    assert services.credits().balance(demo_user.id) == WELCOME_CREDITS + 2500


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
    assert services.credits().balance(demo_user.id) == WELCOME_CREDITS


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
    assert services.credits().balance(demo_user.id) == WELCOME_CREDITS


@pytest.mark.parametrize("cents", [500, 100_000])
def test_a_top_up_at_the_edges_of_the_range_is_credited(api, app_env, demo_user, cents):
    body = event(demo_user.id, amount_total=cents)
    answer = deliver(api, body, sign_payload(body, app_env["checkout_webhook_secret"], int(time.time())))
    assert answer.json() == {"received": True, "credited": True}
    assert services.credits().balance(demo_user.id) == WELCOME_CREDITS + cents


def signed(app_env, body: bytes) -> str:
    return sign_payload(body, app_env["checkout_webhook_secret"], int(time.time()))


def plan_event(user_id: str, **changes) -> bytes:
    fields = {"session_id": "cs_plan_1", "amount_total": PAID_PLAN_CENTS, **changes}
    return event(user_id, purpose="plan_upgrade", **fields)


def test_a_paid_plan_checkout_moves_the_account_to_paid_once(api, app_env, demo_user):
    services.accounts().set_plan(demo_user.id, "free")
    body = plan_event(demo_user.id)
    first = deliver(api, body, signed(app_env, body))
    assert (first.status, first.json()) == (200, {"received": True, "upgraded": True})
    assert services.accounts().get_user(demo_user.id).plan == "paid"
    assert services.credits().upgraded(demo_user.id, "cs_plan_1")
    # Moved back by the operator, the same payment replayed (even as another event) changes nothing.
    services.accounts().set_plan(demo_user.id, "free")
    for again in (body, plan_event(demo_user.id, event_id="evt_2")):
        replay = deliver(api, again, signed(app_env, again))
        assert replay.json() == {"received": True, "upgraded": False}
    assert services.accounts().get_user(demo_user.id).plan == "free"
    assert services.credits().balance(demo_user.id) == WELCOME_CREDITS  # a plan buys no credits


@pytest.mark.parametrize("forgery", ["wrong_secret", "too_old", "no_signature", "body_changed"])
def test_a_forged_plan_event_is_refused_and_the_plan_stays_free(api, app_env, demo_user, forgery):
    services.accounts().set_plan(demo_user.id, "free")
    body = plan_event(demo_user.id)
    secret, at = app_env["checkout_webhook_secret"], int(time.time())
    signature: str | None = {
        "wrong_secret": sign_payload(body, "whsec_wrong", at),
        "too_old": sign_payload(body, secret, at - 301),
        "no_signature": None,
        "body_changed": sign_payload(plan_event("someone-else"), secret, at),
    }[forgery]
    answer = deliver(api, body, signature)
    assert answer.status == 400
    assert answer.json()["error"] in ("signature_failed", "missing_signature")
    assert services.accounts().get_user(demo_user.id).plan == "free"
    assert not services.credits().upgraded(demo_user.id, "cs_plan_1")


@pytest.mark.parametrize("cents", [PAID_PLAN_CENTS - 1, 500, PAID_PLAN_CENTS * 2])
def test_a_plan_event_for_another_price_is_refused(api, app_env, demo_user, cents):
    services.accounts().set_plan(demo_user.id, "free")
    body = plan_event(demo_user.id, amount_total=cents)
    answer = deliver(api, body, signed(app_env, body))
    assert (answer.status, answer.json()) == (400, {"error": "invalid_amount"})
    assert services.accounts().get_user(demo_user.id).plan == "free"


def test_an_unpaid_or_unknown_purpose_changes_nothing(api, app_env, demo_user):
    services.accounts().set_plan(demo_user.id, "free")
    unknown = event(demo_user.id, purpose="something_else", amount_total=PAID_PLAN_CENTS)
    assert deliver(api, unknown, signed(app_env, unknown)).json() == {"received": True, "credited": False}
    assert services.accounts().get_user(demo_user.id).plan == "free"
    assert services.credits().balance(demo_user.id) == WELCOME_CREDITS
