import os

import pytest

from svc_shared.core.crypto import DecryptionFailed, Envelope, LocalKeyProvider

CONTEXT = {"provider": "repo_host", "user_id": "u1"}


@pytest.fixture
def envelope():
    return Envelope(LocalKeyProvider(os.urandom(32)))


def test_encrypted_value_decrypts_with_its_context(envelope):
    blob = envelope.encrypt("gho_secret-token", CONTEXT)
    assert "gho_secret-token" not in blob
    assert blob.startswith("v1.")
    assert envelope.decrypt_text(blob, CONTEXT) == "gho_secret-token"


def test_each_encryption_uses_a_fresh_data_key_and_nonce(envelope):
    assert envelope.encrypt("same", CONTEXT) != envelope.encrypt("same", CONTEXT)


def test_ciphertext_moved_to_another_row_does_not_decrypt(envelope):
    blob = envelope.encrypt("secret", CONTEXT)
    with pytest.raises(DecryptionFailed):
        envelope.decrypt(blob, {"provider": "repo_host", "user_id": "u2"})


@pytest.mark.parametrize("blob", ["", "v1.a.b", "v2.a.b.c", "v1.!!.??.##"])
def test_malformed_ciphertext_is_a_clear_error(envelope, blob):
    with pytest.raises(DecryptionFailed):
        envelope.decrypt(blob, CONTEXT)


def test_tampered_ciphertext_is_rejected(envelope):
    version, wrapped, nonce, sealed = envelope.encrypt("secret", CONTEXT).split(".")
    flipped = ("B" if sealed[0] != "B" else "C") + sealed[1:]
    with pytest.raises(DecryptionFailed):
        envelope.decrypt(".".join([version, wrapped, nonce, flipped]), CONTEXT)


def test_another_master_key_cannot_decrypt(envelope):
    blob = envelope.encrypt("secret", CONTEXT)
    with pytest.raises(DecryptionFailed):
        Envelope(LocalKeyProvider(os.urandom(32))).decrypt(blob, CONTEXT)


def test_local_master_key_must_be_256_bits():
    with pytest.raises(ValueError, match="32 bytes"):
        LocalKeyProvider(b"short")
