"""The card provider's API as the shop uses it (Stripe Connect, Standard accounts; providers.md): the OAuth
authorize URL and code exchange, a webhook endpoint on the connected account, and Checkout Sessions created
for it (`Stripe-Account`). Base URLs are configuration (the provider sandbox locally). Errors never carry
the secret key; their text is for the log."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from svc_backoffice.domain import storefront_settings

HTTP_TIMEOUT_SECONDS = 10
WEBHOOK_EVENTS = ("checkout.session.completed", "checkout.session.expired")


class ProviderError(RuntimeError):
    """The provider refused or could not be reached; the text (for the log) names the call and status."""


class NotConfigured(RuntimeError):
    """The platform has no card provider credentials."""


def _credentials() -> tuple[storefront_settings.StorefrontSettings, str]:
    own = storefront_settings.settings()
    key = storefront_settings.stripe_secret_key()
    if not key or not own.stripe_client_id:
        raise NotConfigured()
    return own, key


def configured() -> bool:
    try:
        _credentials()
    except NotConfigured:
        return False
    return True


def form_fields(params: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Stripe's bracket notation: {"line_items": [{"quantity": 1}]} -> line_items[0][quantity]=1."""
    pairs: list[tuple[str, str]] = []
    for key, value in params.items():
        name = f"{prefix}[{key}]" if prefix else str(key)
        if isinstance(value, Mapping):
            pairs.extend(form_fields(value, name))
        elif isinstance(value, list | tuple):
            for index, item in enumerate(value):
                if isinstance(item, Mapping):
                    pairs.extend(form_fields(item, f"{name}[{index}]"))
                else:
                    pairs.append((f"{name}[{index}]", str(item)))
        elif value is not None:
            pairs.append((name, str(value).lower() if isinstance(value, bool) else str(value)))
    return pairs


def _post(url: str, params: Mapping[str, Any], key: str, headers: Mapping[str, str] | None = None) -> Any:
    data = urllib.parse.urlencode(form_fields(params)).encode()
    request = urllib.request.Request(url, data=data, method="POST")  # noqa: S310 - configured https or sandbox URL
    request.add_header("Authorization", f"Bearer {key}")
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    request.add_header("Accept", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    where = url.split("?")[0]
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_SECONDS) as answer:  # noqa: S310
            text = answer.read().decode()
    except urllib.error.HTTPError as exc:
        detail = exc.read(500).decode("utf-8", "replace")
        raise ProviderError(f"{where} answered {exc.code}: {_message(detail)}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise ProviderError(f"{where} unreachable: {exc}") from None
    try:
        return json.loads(text)
    except ValueError:
        raise ProviderError(f"{where} answered non-JSON") from None


def _message(detail: str) -> str:
    try:
        body = json.loads(detail)
    except ValueError:
        return "(no JSON error)"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error.get("type") or "")[:200]
    return str(body.get("error_description") or error or "")[:200] if isinstance(body, dict) else ""


def authorize_url(state: str, redirect_uri: str) -> str:
    own, _ = _credentials()
    query = urllib.parse.urlencode(
        {
            "response_type": "code",
            "client_id": own.stripe_client_id,
            "scope": "read_write",
            "state": state,
            "redirect_uri": redirect_uri,
        }
    )
    return f"{own.stripe_connect_base_url.rstrip('/')}/oauth/authorize?{query}"


def exchange_code(code: str) -> dict[str, Any]:
    """The connected account of an authorization code: {"stripe_user_id": "acct_...", "livemode": ...}."""
    own, key = _credentials()
    answer = _post(
        f"{own.stripe_connect_base_url.rstrip('/')}/oauth/token",
        {"grant_type": "authorization_code", "code": code},
        key,
    )
    account = answer.get("stripe_user_id") if isinstance(answer, dict) else None
    if not isinstance(account, str) or not account.startswith("acct_"):
        raise ProviderError("oauth/token answered without stripe_user_id")
    return {"account_id": account, "livemode": bool(answer.get("livemode"))}


def create_webhook_endpoint(account: str, url: str) -> str:
    """A webhook endpoint of the connected account posting its checkout events to `url`; returns its signing
    secret (given once, at creation)."""
    own, key = _credentials()
    answer = _post(
        f"{own.stripe_api_base_url.rstrip('/')}/v1/webhook_endpoints",
        {"url": url, "enabled_events": list(WEBHOOK_EVENTS), "description": "Storefront checkout"},
        key,
        {"Stripe-Account": account},
    )
    secret = answer.get("secret") if isinstance(answer, dict) else None
    if not isinstance(secret, str) or not secret:
        raise ProviderError("webhook_endpoints answered without a secret")
    return secret


def create_checkout_session(account: str, params: Mapping[str, Any], idempotency_key: str) -> dict[str, Any]:
    """A Checkout Session of the connected account: {"id": "cs_...", "url": <hosted page>}."""
    own, key = _credentials()
    answer = _post(
        f"{own.stripe_api_base_url.rstrip('/')}/v1/checkout/sessions",
        params,
        key,
        {"Stripe-Account": account, "Idempotency-Key": idempotency_key},
    )
    if not isinstance(answer, dict) or not isinstance(answer.get("url"), str) or not answer.get("id"):
        raise ProviderError("checkout/sessions answered without id and url")
    return {"id": str(answer["id"]), "url": str(answer["url"])}
