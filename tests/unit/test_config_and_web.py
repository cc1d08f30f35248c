import base64
import logging

import pytest

from svc_shared.core import errors
from svc_shared.core.config import ConfigurationError, Settings, get_settings, reset_settings
from svc_shared.core.logs import REDACTED, get_logger, redact
from svc_shared.edge.web import STATUS_BY_ERROR, safe_next, status_for
from svc_shared.wiring.services import Services

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


def _services(url: str) -> Services:
    return Services(settings=Settings.model_validate({**BASE_ENV, "PUBLIC_BASE_URL": url}))


@pytest.mark.parametrize("url", ["http://127.0.0.1:3000", "http://localhost:3000", "http://[::1]:3000"])
def test_cookies_are_not_secure_only_on_plain_http_loopback(url):
    assert not _services(url).cookie_secure


def test_plain_http_on_a_real_host_still_gets_secure_cookies():
    assert _services("http://example.com").cookie_secure


def test_relative_base_url_is_rejected():
    with pytest.raises(ValueError, match="absolute"):
        Settings.model_validate({**BASE_ENV, "PUBLIC_BASE_URL": "example.com"})


def test_an_empty_base_url_means_derive_it_and_the_workspace_url_follows():
    settings = Settings.model_validate({**BASE_ENV, "PUBLIC_BASE_URL": ""})
    assert settings.public_base_url == "" and settings.workspace_app_url == ""
    assert (
        Settings.model_validate({k: v for k, v in BASE_ENV.items() if k != "PUBLIC_BASE_URL"}).public_base_url
        == ""
    )


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


def _domain_errors() -> set[type[errors.DomainError]]:
    """Every DomainError subclass the platform package defines (its modules imported, none left out)."""
    import importlib
    import pkgutil

    import svc_shared

    for module in pkgutil.walk_packages(svc_shared.__path__, "svc_shared."):
        importlib.import_module(module.name)
    found: set[type[errors.DomainError]] = set()
    todo = [errors.DomainError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("svc_shared.") and sub not in found:
                found.add(sub)
                todo.append(sub)
    return found


# The status a client sees for each domain error. Those marked "default" have no row of their own in
# STATUS_BY_ERROR and are answered 400 (their own channel reports them: OAuth error pages and JSON, MCP tool
# results, the publish state machine, connection pages). A new error class fails this test until it is placed.
EXPECTED_STATUS = {
    "InvalidInput": 400,
    "UnsupportedMediaType": 415,
    "NotFound": 404,
    "AlreadyExists": 409,
    "Conflict": 409,
    "NotPublished": 409,
    "Unauthenticated": 401,
    "Forbidden": 403,
    "PaymentRequired": 402,
    "CreditsShort": 402,
    "PayloadTooLarge": 413,
    "RateLimited": 429,
    "UpstreamError": 502,
    "ProviderUnavailable": 502,
    "ConnectionFailed": "default",
    "ReconnectRequired": "default",
    "DecryptionFailed": "default",
    "OAuthError": "default",
    "AuthorizeRequestError": "default",
    "RedirectError": "default",
    "ProviderError": "default",
    "ProviderAuthError": "default",
    "ProviderNotFound": "default",
    "ProviderConflict": "default",
    "PublishBusy": "default",
    "PublishTransient": "default",
    "PublishFailed": "default",
    "PublishStopped": "default",
    "QuotaExceeded": "default",
}


def test_every_domain_error_is_placed_in_the_status_table():
    placed = {}
    for error in _domain_errors():
        row = next((STATUS_BY_ERROR[c] for c in error.__mro__ if c in STATUS_BY_ERROR), "default")
        placed[error.__qualname__] = row
    assert placed == EXPECTED_STATUS


def test_the_status_table_answers_each_kind_of_error():
    assert status_for(errors.InvalidInput("x")) == 400
    assert status_for(errors.Unauthenticated("x")) == 401
    assert status_for(errors.PaymentRequired("x")) == 402
    assert status_for(errors.Forbidden("x")) == 403
    assert status_for(errors.NotFound("x")) == 404
    assert status_for(errors.AlreadyExists("x")) == 409
    assert status_for(errors.PayloadTooLarge("x")) == 413
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


def test_the_backoffices_log_never_writes_secret_extras_either():
    import io

    from svc_backoffice.core.logs import logger as backoffice_logger

    written = io.StringIO()  # its own handler holds the stdout of its first import: read a second one
    handler = logging.StreamHandler(written)
    handler.setFormatter(backoffice_logger.registered_formatter)
    backoffice_logger._logger.addHandler(handler)
    try:
        backoffice_logger.info("webhook received", extra={"provider": "card", "signature": "t=1,v1=deadbeef"})
    finally:
        backoffice_logger._logger.removeHandler(handler)
    out = written.getvalue()
    assert '"provider":"card"' in out
    assert "deadbeef" not in out and REDACTED in out
