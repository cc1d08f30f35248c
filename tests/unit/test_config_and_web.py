import base64
import logging

import pytest

from svc_shared import errors
from svc_shared.config import ConfigurationError, Settings, get_settings, reset_settings
from svc_shared.logs import REDACTED, get_logger, redact
from svc_shared.web import safe_next, status_for

BASE_ENV = {
    "PUBLIC_BASE_URL": "https://api.example.com/",
    "TABLE_NAME": "t",
    "SESSION_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:1:secret:s",
    "KMS_KEY_ID": "key",
}


def test_settings_are_read_from_the_environment(monkeypatch):
    for name, value in BASE_ENV.items():
        monkeypatch.setenv(name, value)
    reset_settings()
    settings = get_settings()
    assert settings.public_base_url == "https://api.example.com"
    assert settings.cookie_secure
    assert settings.deployment == "aws"
    reset_settings()


def test_missing_settings_name_the_variable(monkeypatch):
    monkeypatch.delenv("TABLE_NAME", raising=False)
    for name, value in BASE_ENV.items():
        if name != "TABLE_NAME":
            monkeypatch.setenv(name, value)
    reset_settings()
    with pytest.raises(ConfigurationError, match="TABLE_NAME"):
        get_settings()
    reset_settings()


def test_exactly_one_key_source_is_required():
    env = {**BASE_ENV, "LOCAL_MASTER_KEY": base64.b64encode(b"k" * 32).decode()}
    with pytest.raises(ValueError, match="exactly one of KMS_KEY_ID"):
        Settings.model_validate(env)


@pytest.mark.parametrize("url", ["http://127.0.0.1:3000", "http://localhost:3000", "http://[::1]:3000"])
def test_cookies_are_not_secure_only_on_plain_http_loopback(url):
    assert not Settings.model_validate({**BASE_ENV, "PUBLIC_BASE_URL": url}).cookie_secure


def test_plain_http_on_a_real_host_still_gets_secure_cookies():
    assert Settings.model_validate({**BASE_ENV, "PUBLIC_BASE_URL": "http://example.com"}).cookie_secure


def test_relative_base_url_is_rejected():
    with pytest.raises(ValueError, match="absolute"):
        Settings.model_validate({**BASE_ENV, "PUBLIC_BASE_URL": "example.com"})


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/oauth/authorize?client_id=x&state=y", "/oauth/authorize?client_id=x&state=y"),
        ("/", "/"),
        (None, "/"),
        ("", "/"),
        ("https://evil.example/", "/"),
        ("//evil.example/", "/"),
        ("/\\evil.example", "/"),
        ("javascript:alert(1)", "/"),
        ("/ok\r\nSet-Cookie: x=y", "/"),
    ],
)
def test_next_is_never_an_open_redirect(target, expected):
    assert safe_next(target) == expected


def test_every_domain_error_has_a_status():
    assert status_for(errors.InvalidInput("x")) == 400
    assert status_for(errors.Unauthenticated("x")) == 401
    assert status_for(errors.PaymentRequired("x")) == 402
    assert status_for(errors.NotFound("x")) == 404
    assert status_for(errors.AlreadyExists("x")) == 409
    assert status_for(errors.RateLimited("x", retry_after=3)) == 429
    assert status_for(errors.UpstreamError("x")) == 502


def test_redaction_hides_secret_fields_at_any_depth():
    record = {
        "user": "u1",
        "password": "p",
        "nested": {"access_token": "t", "list": [{"client_secret": "s"}]},
    }
    assert redact(record) == {
        "user": "u1",
        "password": REDACTED,
        "nested": {"access_token": REDACTED, "list": [{"client_secret": REDACTED}]},
    }


def test_logger_never_writes_secret_extras(capsys):
    logger = get_logger("redaction-test")
    logger.info("signing in", extra={"email": "a@b.c", "password": "hunter2-secret"})
    out = capsys.readouterr().out
    assert "a@b.c" in out
    assert "hunter2-secret" not in out
    assert logging.getLogger("redaction-test").filters
