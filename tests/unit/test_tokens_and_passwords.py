import pytest

from svc_shared.core.passwords import hash_password, verify_password
from svc_shared.core.tokens import BadSignature, hash_token, new_token, sign, unsign

KEY = b"k" * 32


def test_password_hash_verifies_only_the_same_password():
    encoded = hash_password("correct horse battery")
    assert encoded.startswith("scrypt$16384$8$1$")
    assert verify_password("correct horse battery", encoded)
    assert not verify_password("correct horse batterY", encoded)


def test_password_hashes_are_salted():
    assert hash_password("same-password") != hash_password("same-password")


@pytest.mark.parametrize(
    "stored", ["", "plain", "bcrypt$1$2$3$4$5", "scrypt$x$8$1$AA$AA", "scrypt$16384$8$1$!!$??"]
)
def test_malformed_stored_hash_never_verifies(stored):
    assert not verify_password("anything", stored)


def test_token_hash_is_sha256_hex_and_not_the_token():
    token = new_token()
    assert len(token) >= 43
    assert hash_token(token) != token
    assert len(hash_token(token)) == 64
    assert hash_token(token) == hash_token(token)


def test_signed_payload_round_trips():
    assert unsign(sign({"a": 1, "b": "x"}, KEY, "p"), KEY, "p") == {"a": 1, "b": "x"}


@pytest.mark.parametrize(
    "mutate",
    [
        lambda v: v[:-2] + ("A" if v[-2] != "A" else "B") + v[-1],  # signature changed
        lambda v: "eyJhIjoyfQ" + v[v.index(".") :],  # payload swapped
        lambda v: v.split(".")[0],  # signature removed
        lambda v: "." + v.split(".")[1],  # payload removed
        lambda v: v + "x",
    ],
)
def test_tampered_signed_payload_is_rejected(mutate):
    value = sign({"a": 1}, KEY, "p")
    with pytest.raises(BadSignature):
        unsign(mutate(value), KEY, "p")


def test_signature_for_one_purpose_does_not_serve_another():
    with pytest.raises(BadSignature):
        unsign(sign({"a": 1}, KEY, "session"), KEY, "oauth-state")


def test_signature_under_another_key_is_rejected():
    with pytest.raises(BadSignature):
        unsign(sign({"a": 1}, KEY, "p"), b"z" * 32, "p")
