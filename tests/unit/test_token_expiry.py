"""When a stored provider token expires, from what the provider says."""


def test_provider_token_expiry_reads_any_number_and_treats_absent_as_never():
    from svc_shared.domain.connections import _expiry

    assert _expiry(1000, 86400) == 87400
    assert _expiry(1000, "3600") == 4600
    assert _expiry(1000, 7200.0) == 8200
    assert _expiry(1000, None) is None
    assert _expiry(1000, "soon") is None
    assert _expiry(1000, 0) is None
