"""The keys that sign backoffice hand-offs: made on first use (KMS-encrypted as the deployed stack keeps them),
one key however many instances race to make it, rotation with a grace period on the movable clock, and the
operator's `svc handoff-keys` commands. Tokens are checked with pyjwt and with the backoffice's own verifier."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
from awsadmin import admin_client
from cryptography.hazmat.primitives import serialization

from svc_backoffice.access.handoff import HandoffRejected
from svc_backoffice.access.handoff import verify as backoffice_verify
from svc_shared.core.crypto import DecryptionFailed
from svc_shared.domain.handoff import ISSUER
from svc_shared.domain.handoff_keys import CACHE_SECONDS, HandoffKeys
from svc_shared.storage import keys
from svc_shared.storage.dal import Table
from svc_shared.wiring import cli, services

DAY = 24 * 3600


def rfc7638_kid(public_pem: str) -> str:
    """The JWK thumbprint of an Ed25519 public key, computed here from the PEM (not by the code under test)."""
    raw = serialization.load_pem_public_key(public_pem.encode()).public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    x = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    member = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": x}, sort_keys=True, separators=(",", ":"))
    return base64.urlsafe_b64encode(hashlib.sha256(member.encode()).digest()).decode().rstrip("=")


def published_project(user, url_base: str = "https://api.example.com"):
    project = services.projects().create(
        owner_id=user.id,
        workspace_id=user.default_workspace_id,
        prompt="Handmade candles for cosy homes, warm tone",
        name="Candle Shop",
    )
    return services.projects().update(project, {"backoffice_url": f"{url_base}/shops/{project.id}"})


def token_of(url: str) -> str:
    return parse_qs(urlsplit(url).query)["token"][0]


def accepted(token: str, public_keys: tuple[str, ...], audience: str) -> bool:
    """What the backoffice does with a hand-off's signature: accepted if one of the shop's verifying keys checks
    it. The times are left out: the movable clock runs ahead of the wall clock pyjwt reads."""
    for key in public_keys:
        try:
            jwt.decode(
                token,
                key,
                algorithms=["EdDSA"],
                audience=audience,
                issuer=ISSUER,
                options={"verify_exp": False, "verify_iat": False},
            )
            return True
        except jwt.InvalidSignatureError:
            continue
    return False


@pytest.fixture
def kms_env(clock, monkeypatch):
    """The deployed stack's encryption: a KMS key (embedded AWS) and no local master key."""
    key_id = admin_client("kms").create_key(Description="svc data key")["KeyMetadata"]["KeyId"]
    monkeypatch.setenv("KMS_KEY_ID", key_id)
    monkeypatch.delenv("LOCAL_MASTER_KEY")
    services.wire(clock=clock)
    return key_id


def test_a_hand_off_signed_with_the_key_the_stack_makes_on_first_use_verifies_with_its_public_key(
    kms_env, demo_user, app_env
):
    project = published_project(demo_user)
    audience = project.extra["backoffice_url"]
    url = services.handoffs().sign_in_url(demo_user, project.id)
    assert url.startswith(f"{audience}/auth/sso?token=")
    token = token_of(url)

    public_keys = services.handoff_keys().public_keys()
    assert len(public_keys) == 1 and public_keys[0].startswith("-----BEGIN PUBLIC KEY-----")
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "EdDSA"
    assert header["kid"] == rfc7638_kid(public_keys[0])
    claims = jwt.decode(token, public_keys[0], algorithms=["EdDSA"], audience=audience, issuer=ISSUER)
    assert (claims["sub"], claims["role"]) == ("demo@example.com", "owner")
    assert claims["exp"] - claims["iat"] == 60
    handoff = backoffice_verify(token, public_keys=[public_keys[0]], issuer=ISSUER, audience=audience)
    assert handoff.email == "demo@example.com"

    # Stored: the private key only as a KMS envelope bound to its purpose and kid.
    item = Table(app_env["TABLE_NAME"]).get(keys.HANDOFF_KEYS, keys.KEYRING, consistent=True)
    assert item is not None and item["current"] == header["kid"]
    stored = item["keys"][header["kid"]]
    assert stored["private"].startswith("v1.") and "PRIVATE" not in json.dumps(item)
    context = {"purpose": "handoff-signing-key", "kid": header["kid"]}
    assert len(services.envelope().decrypt(stored["private"], context)) == 32
    with pytest.raises(DecryptionFailed):
        services.envelope().decrypt(stored["private"], {**context, "kid": "another-key"})

    # Another instance (no cache) signs with the same key.
    services.wire(clock=services.clock())
    again = token_of(services.handoffs().sign_in_url(demo_user, project.id))
    assert jwt.get_unverified_header(again)["kid"] == header["kid"]


def test_a_rotated_key_verifies_during_the_grace_period_and_not_after(clock, demo_user):
    project = published_project(demo_user)
    audience = project.extra["backoffice_url"]
    old_token = token_of(services.handoffs().sign_in_url(demo_user, project.id))
    old_kid = jwt.get_unverified_header(old_token)["kid"]

    new = services.handoff_keys().rotate()
    assert new.kid != old_kid
    verifying = services.handoff_keys().public_keys()
    assert [rfc7638_kid(k) for k in verifying] == [new.kid, old_kid]  # current first
    assert accepted(old_token, verifying, audience)

    # Until every instance has had time to read the new key, hand-offs are still signed with the old one.
    held = token_of(services.handoffs().sign_in_url(demo_user, project.id))
    assert jwt.get_unverified_header(held)["kid"] == old_kid
    clock.advance(CACHE_SECONDS + 1)
    new_token = token_of(services.handoffs().sign_in_url(demo_user, project.id))
    assert jwt.get_unverified_header(new_token)["kid"] == new.kid
    assert accepted(new_token, services.handoff_keys().public_keys(), audience)

    clock.advance(DAY - CACHE_SECONDS - 120)  # still inside the 24 h grace period
    services.wire(clock=clock)  # a fresh instance reads the keyring from storage
    assert accepted(old_token, services.handoff_keys().public_keys(), audience)

    clock.advance(120)  # the grace period is over
    services.wire(clock=clock)
    after = services.handoff_keys().public_keys()
    assert [rfc7638_kid(k) for k in after] == [new.kid]
    assert not accepted(old_token, after, audience)
    with pytest.raises(HandoffRejected):
        backoffice_verify(old_token, public_keys=after, issuer=ISSUER, audience=audience)
    assert accepted(new_token, after, audience)

    # The next rotation drops the expired key from storage.
    services.handoff_keys().rotate()
    assert [k["kid"] for k in services.handoff_keys().listing()][1:] == [new.kid]


def test_two_rotations_in_a_row_never_sign_with_a_key_a_shop_may_not_know_yet(clock, demo_user):
    """A shop keeps the platform's key set for CACHE_SECONDS: after two rotations within that time, hand-offs
    stay signed with the key every shop knows until the newest is that old (then with the newest), never with
    the first new key, which a shop that read its key set just before the rotations would refuse."""
    project = published_project(demo_user)
    audience = project.extra["backoffice_url"]
    first = token_of(services.handoffs().sign_in_url(demo_user, project.id))  # the platform's first key
    first_kid = jwt.get_unverified_header(first)["kid"]
    clock.advance(CACHE_SECONDS + 1)
    known = services.handoff_keys().public_keys()  # what a shop read just before the rotations
    services.handoff_keys().rotate()
    newest = services.handoff_keys().rotate()
    for _ in range(2):
        held = token_of(services.handoffs().sign_in_url(demo_user, project.id))
        assert jwt.get_unverified_header(held)["kid"] == first_kid
        assert accepted(held, known, audience)
        clock.advance(CACHE_SECONDS / 2)
    clock.advance(1)
    later = token_of(services.handoffs().sign_in_url(demo_user, project.id))
    assert jwt.get_unverified_header(later)["kid"] == newest.kid


def test_the_grace_period_is_a_setting(clock, demo_user, monkeypatch):
    monkeypatch.setenv("HANDOFF_KEY_GRACE_SECONDS", "600")
    services.wire(clock=clock)
    project = published_project(demo_user)
    old_token = token_of(services.handoffs().sign_in_url(demo_user, project.id))
    services.handoff_keys().rotate()
    clock.advance(599)
    services.wire(clock=clock)
    assert accepted(old_token, services.handoff_keys().public_keys(), project.extra["backoffice_url"])
    clock.advance(2)
    services.wire(clock=clock)
    assert not accepted(old_token, services.handoff_keys().public_keys(), project.extra["backoffice_url"])


class ReadTogether(Table):
    """Storage whose first (cached-path) read of each instance returns only when every instance has read:
    all of them find no keyring and try to make the first key, the race on first use every time."""

    def __init__(self, name: str, barrier: threading.Barrier) -> None:
        super().__init__(name, services.current().aws.client("dynamodb"))
        self._barrier = barrier

    def get(self, pk: str, sk: str, *, consistent: bool = False):
        item = super().get(pk, sk, consistent=consistent)
        if not consistent:
            self._barrier.wait(timeout=20)
        return item


def test_instances_racing_on_first_use_end_with_one_key(clock, app_env):
    racers = 6
    barrier = threading.Barrier(racers)
    envelope = services.envelope()
    results: list[tuple[str, bytes]] = []
    failures: list[BaseException] = []

    def first_use() -> None:
        try:
            store = HandoffKeys(
                ReadTogether(app_env["TABLE_NAME"], barrier), lambda: envelope, clock, grace_seconds=DAY
            )
            kid, private = store.signer()
            results.append((kid, private.public_key().public_bytes_raw()))
        except BaseException as exc:  # reported below with the test's failure
            failures.append(exc)

    threads = [threading.Thread(target=first_use) for _ in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    assert len(results) == racers
    assert len({kid for kid, _ in results}) == 1
    assert len({public for _, public in results}) == 1  # every instance signs with the stored key
    item = Table(app_env["TABLE_NAME"]).get(keys.HANDOFF_KEYS, keys.KEYRING, consistent=True)
    assert item is not None and list(item["keys"]) == [results[0][0]]


def test_operators_show_and_rotate_the_keys_without_private_material(app_env, capsys):
    table = ["--table", app_env["TABLE_NAME"]]
    assert cli.main([*table, "handoff-keys", "show"]) == 0
    assert json.loads(capsys.readouterr().out) == {"keys": []}

    assert cli.main([*table, "handoff-keys", "rotate"]) == 0  # no key yet: the first one
    first = json.loads(capsys.readouterr().out)
    assert cli.main([*table, "handoff-keys", "rotate"]) == 0
    out = capsys.readouterr().out
    second = json.loads(out)
    assert "PRIVATE" not in out and "private" not in out and "v1." not in out
    assert second["rotated"] != first["rotated"]
    listed = {k["kid"]: k for k in second["keys"]}
    assert listed[second["rotated"]]["current"] and listed[second["rotated"]]["retired_at"] is None
    old = listed[first["rotated"]]
    assert not old["current"] and old["verifying"] and old["retired_at"] is not None
    assert old["verifies_until"] == old["retired_at"] + DAY
    assert second["signs_from"] == listed[second["rotated"]]["created_at"] + CACHE_SECONDS

    assert cli.main([*table, "handoff-keys", "show"]) == 0
    shown = json.loads(capsys.readouterr().out)["keys"]
    assert [k["kid"] for k in shown] == [second["rotated"], first["rotated"]]
    assert set(shown[0]) == {
        "kid",
        "created_at",
        "retired_at",
        "verifies_until",
        "current",
        "signing",
        "verifying",
    }
