"""The public base URL read from API Gateway's request context when PUBLIC_BASE_URL is empty: what is
trusted (domainName and stage, set by API Gateway) and what is not (Host and X-Forwarded-* headers)."""

from __future__ import annotations

import pytest

from svc_local.gateway import build_event
from svc_shared.core.config import ConfigurationError, Settings
from svc_shared.wiring import baseurl
from svc_shared.wiring.services import Services

API = "abc123.execute-api.eu-west-1.amazonaws.com"
ENV = {
    "TABLE_NAME": "t",
    "SESSION_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:1:secret:s",
    "KMS_KEY_ID": "key",
}


def _event(domain: object, stage: object = "$default", **headers: str) -> dict:
    return {"headers": headers, "requestContext": {"domainName": domain, "stage": stage}}


@pytest.mark.parametrize(
    ("domain", "stage", "expected"),
    [
        (API, "$default", f"https://{API}"),  # HTTP API, $default stage: no stage path
        (API, "live", f"https://{API}/live"),  # a REST API's execute-api URL carries its stage
        ("api.shop.example", "live", "https://api.shop.example"),  # a custom domain maps the stage away
        ("API.Shop.Example.", "$default", "https://api.shop.example"),
        ("127.0.0.1:3000", "$default", "http://127.0.0.1:3000"),  # the local gateway, plain http on loopback
        ("localhost:3000", "$default", "http://localhost:3000"),
        ("[::1]:3000", "$default", "http://[::1]:3000"),
        ("127.0.0.1.evil.example", "$default", "https://127.0.0.1.evil.example"),
    ],
)
def test_the_base_url_comes_from_the_request_context(domain, stage, expected):
    assert baseurl.from_event(_event(domain, stage)) == expected


@pytest.mark.parametrize(
    "domain", [None, "", 42, "evil.example/path", "a b", "user@host", "https://host", "host:port", "x" * 300]
)
def test_an_unusable_domain_name_gives_nothing(domain):
    assert baseurl.from_event(_event(domain)) is None


def test_client_written_headers_are_never_read():
    event = _event(
        API, Host="evil.example", **{"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "http"}
    )
    assert baseurl.from_event(event) == f"https://{API}"
    assert baseurl.from_event({"headers": {"Host": "evil.example"}}) is None
    assert baseurl.from_event("not an event") is None


def test_an_odd_stage_name_adds_no_path():
    assert baseurl.from_event(_event(API, "../x")) == f"https://{API}"


def test_the_local_gateway_names_its_own_address_not_the_host_header():
    event = build_event(
        "GET", "/mcp", "/mcp", [("Host", "evil.example")], kind="http", domain_name="127.0.0.1:4000"
    )
    assert (event["version"], event["requestContext"]["stage"]) == ("1.0", "$default")
    assert baseurl.from_event(event) == "http://127.0.0.1:4000"


def test_a_configured_url_wins_over_the_request():
    services = Services(
        settings=Settings.model_validate({**ENV, "PUBLIC_BASE_URL": "https://api.shop.example/"})
    )
    baseurl.bind(_event(API))
    try:
        assert services.public_base_url == "https://api.shop.example"
    finally:
        baseurl.bind({})


def test_without_a_configured_url_the_request_names_it_and_each_request_rebinds():
    services = Services(settings=Settings.model_validate(ENV))
    try:
        baseurl.bind(_event(API))
        assert services.public_base_url == f"https://{API}"
        assert services.cookie_secure
        baseurl.bind(_event("127.0.0.1:3000"))
        assert services.public_base_url == "http://127.0.0.1:3000"
        assert not services.cookie_secure
    finally:
        baseurl.bind({})


def test_outside_a_request_and_with_nothing_recorded_the_error_says_what_is_missing():
    class NothingRecorded:
        def get(self, pk: str, sk: str, *, consistent: bool = False) -> None:
            return None

    services = Services(settings=Settings.model_validate(ENV))
    services.__dict__["table"] = NothingRecorded()  # the table answers: no CONFIG item
    baseurl.bind({})
    assert services.known_base_url is None
    with pytest.raises(ConfigurationError, match="PUBLIC_BASE_URL is empty"):
        _ = services.public_base_url
