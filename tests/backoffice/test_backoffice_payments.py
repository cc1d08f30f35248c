"""Payment providers (webhook secrets sealed at rest, write-only) and the four signed webhooks: only
authenticated events are recorded, each once."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import time
import uuid

import pytest
from bohelpers import Client

from svc_backoffice.core import config
from svc_backoffice.data import sealing

SECRET = "whsec_" + "k" * 32
WRONG = "whsec_" + "x" * 32


@pytest.fixture
def admin(as_role):
    return as_role("admin")


def configure(admin, kind: str, secret: str | None = SECRET, enabled: bool = True):
    body = {"kind": kind, "display_name": kind.title(), "enabled": enabled}
    if secret:
        body["webhook_secret"] = secret
    answer = admin.post("/api/payments/providers", body)
    assert answer.status == 201, answer.body
    return answer.json()


def event_for(kind: str, event_id: str, order_id: str | None = None) -> dict:
    order = order_id or str(uuid.uuid4())
    return {
        "card": {
            "id": event_id,
            "type": "payment_intent.succeeded",
            "data": {"object": {"amount": 1250, "metadata": {"order_id": order}}},
        },
        "wallet-a": {
            "event_id": event_id,
            "event_type": "PAYMENT.CAPTURE.COMPLETED",
            "resource": {"amount_cents": 1250, "order_id": order},
        },
        "wallet-b": {"id": event_id, "type": "payment.completed", "amount_cents": 1250, "order_id": order},
        "mobile-money": {
            "event": "charge.success",
            "data": {"reference": event_id, "amount": 1250, "metadata": {"order_id": order}},
        },
    }[kind]


def sign(kind: str, body: bytes, secret: str = SECRET, at: int | None = None) -> dict[str, str]:
    t = str(int(time.time()) if at is None else at)
    if kind == "card":
        digest = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
        return {"card-signature": f"t={t},v1={digest}"}
    if kind == "wallet-a":
        digest = hmac.new(secret.encode(), f"{t}:".encode() + body, hashlib.sha256).hexdigest()
        return {"wallet-a-signature": f"sha256={digest}", "wallet-a-timestamp": t}
    if kind == "wallet-b":
        return {
            "wallet-b-signature": base64.b64encode(
                hmac.new(secret.encode(), body, hashlib.sha256).digest()
            ).decode()
        }
    return {"mobile-money-signature": hmac.new(secret.encode(), body, hashlib.sha512).hexdigest()}


def deliver(kind: str, body: bytes, headers: dict[str, str], content_type: str = "application/json"):
    return Client(None).request(
        "POST",
        f"/api/payments/webhooks/{kind}",
        raw_body=body.decode("utf-8", "surrogateescape"),
        headers={"Content-Type": content_type, **headers},
    )


def events(db) -> int:
    return db.one("SELECT count(*) AS n FROM payment_events")["n"]


KINDS = ["card", "wallet-a", "wallet-b", "mobile-money"]


def test_webhook_secret_is_sealed_and_write_only(admin, db, caplog):
    provider = configure(admin, "card")
    assert "webhook_secret" not in provider and provider["webhook_secret_set"] is True
    listed = admin.get("/api/payments/providers")
    assert SECRET not in listed.body and listed.json()["items"][0]["webhook_secret_set"] is True
    stored = bytes(db.one("SELECT webhook_secret_encrypted AS s FROM payment_providers")["s"])
    assert SECRET.encode() not in stored and stored[:1] == b"\x01"
    assert sealing.unseal(stored, "payment_providers.webhook_secret:card") == SECRET
    with pytest.raises(sealing.SealError):
        sealing.unseal(stored, "payment_providers.webhook_secret:wallet-a")  # bound to its row
    rotated = admin.patch(
        f"/api/payments/providers/{provider['id']}", {"webhook_secret": WRONG, "enabled": False}
    )
    assert (rotated.status, rotated.json()["enabled"]) == (200, False)
    assert WRONG not in rotated.body
    cleared = admin.patch(f"/api/payments/providers/{provider['id']}", {"webhook_secret": None})
    assert cleared.json()["webhook_secret_set"] is False
    assert admin.post("/api/payments/providers", {"kind": "card", "display_name": "Again"}).status == 409
    for refused in (
        {"kind": "card", "display_name": "x", "webhook_secret": "short"},
        {"kind": "paper", "display_name": "x"},
    ):
        assert admin.post("/api/payments/providers", refused).status == 400, refused
    assert admin.patch(f"/api/payments/providers/{uuid.uuid4()}", {"enabled": True}).status == 404
    assert admin.delete(f"/api/payments/providers/{provider['id']}").json() == {"ok": True}
    assert admin.delete(f"/api/payments/providers/{provider['id']}").status == 404
    assert SECRET not in caplog.text and WRONG not in caplog.text


def test_kms_sealing_uses_the_configured_key(db, monkeypatch):
    calls = []

    class FakeKms:
        def encrypt(self, KeyId, Plaintext, EncryptionContext):
            calls.append(("encrypt", KeyId, EncryptionContext))
            return {"CiphertextBlob": b"kms:" + Plaintext[::-1]}

        def decrypt(self, CiphertextBlob, EncryptionContext):
            calls.append(("decrypt", EncryptionContext))
            return {"Plaintext": CiphertextBlob[4:][::-1]}

    monkeypatch.delenv("FIELD_ENCRYPTION_KEY")
    monkeypatch.setenv("FIELD_ENCRYPTION_KMS_KEY_ARN", "arn:aws:kms:eu-central-1:123456789012:key/abc")
    config.reset_settings()
    sealer = sealing.Sealer(config.get_settings(), kms=FakeKms())
    sealed = sealer.seal("s3cret", "p")
    assert sealed[:1] == b"\x02" and sealer.unseal(sealed, "p") == "s3cret"
    assert calls[0] == ("encrypt", "arn:aws:kms:eu-central-1:123456789012:key/abc", {"purpose": "p"})


@pytest.mark.parametrize("kind", KINDS)
def test_signed_event_is_recorded_once_and_replays_are_acknowledged(admin, editor, db, kind):
    configure(admin, kind)
    order = editor.post(
        "/api/orders",
        {"email": "p@shop.example", "items": [{"title": "A", "quantity": 1, "unit_price_cents": 1250}]},
    ).json()
    body = json.dumps(event_for(kind, f"evt_{kind}_1", order["id"])).encode()
    headers = sign(kind, body)
    first = deliver(kind, body, headers)
    assert (first.status, first.json()["ok"], first.json()["duplicate"]) == (200, True, False)
    for _ in range(2):
        replay = deliver(kind, body, headers)
        assert (replay.status, replay.json()) == (
            200,
            {"ok": True, "duplicate": True, "event": f"evt_{kind}_1"},
        )
    assert events(db) == 1
    row = db.one("SELECT order_id::text, amount_cents, kind FROM payment_events")
    assert (row["order_id"], row["amount_cents"]) == (order["id"], 1250)
    # The payment moved the pending order to paid, once.
    assert editor.get(f"/api/orders/{order['id']}").json()["status"] == "paid"


@pytest.mark.parametrize("kind", KINDS)
def test_wrong_secret_missing_signature_and_tampering_are_refused(admin, db, kind):
    configure(admin, kind)
    body = json.dumps(event_for(kind, "evt_bad")).encode()
    cases = [
        (sign(kind, body, secret=WRONG), body, "signature_failed"),
        ({}, body, "missing_signature"),
        (sign(kind, body), body[:-7], "signature_failed"),  # truncated after signing
        (sign(kind, body), body.replace(b"1250", b"9999"), "signature_failed"),
    ]
    for headers, sent, error in cases:
        answer = deliver(kind, sent, headers)
        assert (answer.status, answer.json()) == (400, {"ok": False, "error": error}), (headers, error)
    assert events(db) == 0


@pytest.mark.parametrize("kind", ["card", "wallet-a"])
def test_stale_or_future_timestamps_are_refused(admin, db, kind):
    configure(admin, kind)
    body = json.dumps(event_for(kind, "evt_old")).encode()
    # Just past the 300 s tolerance either way; the future stamp keeps 2 s of slack for a slow machine.
    for at in (math.floor(time.time()) - 301, math.ceil(time.time()) + 302):
        answer = deliver(kind, body, sign(kind, body, at=at))
        assert (answer.status, answer.json()) == (400, {"ok": False, "error": "signature_failed"})
    assert deliver(kind, body, sign(kind, body, at=int(time.time()) - 200)).status == 200
    assert events(db) == 1


def test_card_signature_header_variants(admin, db):
    configure(admin, "card")
    body = json.dumps(event_for("card", "evt_multi")).encode()
    good = sign("card", body)["card-signature"]
    t = good.split(",")[0]
    # Several v1 values (secret rotation at the provider): any match authenticates.
    assert deliver("card", body, {"card-signature": f"{t},v1={'0' * 64},{good.split(',')[1]}"}).status == 200
    for header in ("garbage", f"{t}", "t=abc,v1=00", f"v1={good.split('v1=')[1]}"):
        answer = deliver("card", body, {"card-signature": header})
        assert answer.json() == {"ok": False, "error": "signature_failed"}, header
    assert events(db) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_bad_deliveries_get_clear_400s_and_record_nothing(admin, db, kind):
    configure(admin, kind)
    huge = json.dumps({**event_for(kind, "evt_huge"), "pad": "x" * 300_000}).encode()
    answer = deliver(kind, huge, sign(kind, huge))
    assert (answer.status, answer.json()) == (400, {"ok": False, "error": "payload_too_large"})
    body = json.dumps(event_for(kind, "evt_ct")).encode()
    for content_type in ("text/plain", "application/x-www-form-urlencoded", ""):
        answer = deliver(kind, body, sign(kind, body), content_type=content_type)
        assert (answer.status, answer.json()) == (400, {"ok": False, "error": "unsupported_media_type"})
    assert deliver(kind, body, sign(kind, body), content_type="application/json; charset=utf-8").status == 200
    for raw in (b'{"id": "evt_trunc', b"[]", b'{"id": 1}', b"NaN", b'{"id": "a\\u0000b", "type": "x"}'):
        answer = deliver(kind, raw, sign(kind, raw))
        assert (answer.status, answer.json()) == (400, {"ok": False, "error": "invalid_payload"}), raw
    assert events(db) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_an_unconfigured_provider_answers_as_a_bad_signature_does(admin, db, kind):
    """The answer never tells whether a shop has payments set up: with no provider of that kind (none,
    disabled, or without a webhook secret) each delivery gets what a configured provider gives a signature
    made with another secret, check by check."""
    body = json.dumps(event_for(kind, "evt_nc")).encode()
    forged = sign(kind, body, secret="whsec_someone_elses")
    deliveries = [
        (body, forged, "application/json"),  # a well-formed delivery, signed with a guess
        (body, {}, "application/json"),  # no signature header
        (body, forged, "text/plain"),  # signed, but not JSON
    ]

    def answers() -> list[tuple[int, object]]:
        return [
            (a.status, a.json())
            for a in (deliver(kind, raw, headers, content_type=ct) for raw, headers, ct in deliveries)
        ]

    unconfigured = answers()
    assert unconfigured[0] == (400, {"ok": False, "error": "signature_failed"})
    provider = configure(admin, kind, enabled=False)
    assert answers() == unconfigured
    admin.patch(f"/api/payments/providers/{provider['id']}", {"enabled": True, "webhook_secret": None})
    assert answers() == unconfigured
    admin.patch(f"/api/payments/providers/{provider['id']}", {"webhook_secret": SECRET})
    assert answers() == unconfigured  # configured now: the same answers to the same deliveries
    assert (deliver(kind, body, sign(kind, body)).status) == 200  # and the right secret is let in
    assert events(db) == 1
