"""What the storefront and the card provider read of their configuration. Hosted, the Shop brings the shop's own URLs (its live
storefront, its site's build hook) and the platform's BACKOFFICE_STRIPE_* / BACKOFFICE_STOREFRONT_* variables
the card provider and the limits; self-hosted, the same names without the prefix (STOREFRONT_URL,
STOREFRONT_BUILD_HOOK_URL, STRIPE_CLIENT_ID, ...)."""

from __future__ import annotations

import functools

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from svc_backoffice.core import config, tenancy


class StorefrontSettings(BaseSettings):
    model_config = SettingsConfigDict(frozen=True, extra="ignore", case_sensitive=False)

    # The card provider (Stripe Connect, the platform's account): its OAuth client id and secret key (the
    # value, or a Secrets Manager ARN), and base URLs (the provider sandbox locally).
    stripe_client_id: str | None = None
    stripe_secret_key: str | None = Field(default=None, repr=False)
    stripe_secret_key_arn: str | None = None
    stripe_api_base_url: str = "https://api.stripe.com"
    stripe_connect_base_url: str = "https://connect.stripe.com"
    # Self-hosted only (hosted, the Shop says): the live storefront's URL and its build hook.
    storefront_url: str | None = None
    storefront_build_hook_url: str | None = Field(default=None, repr=False)
    # How long a checkout's stock stays reserved (the provider's session lives as long; its minimum is 30).
    storefront_reservation_minutes: int = Field(default=30, ge=30, le=24 * 60)
    # An unpaid checkout is cancelled this long after its reservation ended (a payment made just before
    # the end may still be on its way).
    storefront_sweep_grace_minutes: int = Field(default=10, ge=0, le=24 * 60)
    # Successful checkouts per client address per window.
    storefront_checkout_limit: int = Field(default=10, ge=1, le=10_000)
    storefront_checkout_window_seconds: int = Field(default=600, ge=10, le=86_400)
    # Proxies in front of the storefront API whose X-Forwarded-For entry is trusted (1: the site host's
    # rewrite): the checkout limit counts the address the farthest of them saw.
    storefront_trusted_proxy_hops: int = Field(default=0, ge=0, le=5)
    # At most one build request per this many seconds; a change inside the window is built at its end.
    storefront_build_debounce_seconds: int = Field(default=20, ge=1, le=50)


class HostedStorefrontSettings(StorefrontSettings):
    model_config = SettingsConfigDict(env_prefix="BACKOFFICE_")


@functools.cache
def _self_hosted() -> StorefrontSettings:
    return StorefrontSettings()


@functools.cache
def _hosted() -> StorefrontSettings:
    return HostedStorefrontSettings()


def settings() -> StorefrontSettings:
    return _hosted() if tenancy.current_shop() is not None else _self_hosted()


def reset() -> None:
    _self_hosted.cache_clear()
    _hosted.cache_clear()


def storefront_url() -> str | None:
    """The live storefront's URL (no trailing slash): the Shop's when hosted, STOREFRONT_URL self-hosted."""
    shop = tenancy.current_shop()
    url = shop.storefront_url if shop is not None else settings().storefront_url
    return url.rstrip("/") if url else None


def origin_of(url: str) -> str | None:
    """`scheme://host[:port]` in lower case, the default port dropped; None for anything else."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    default = 443 if parts.scheme == "https" else 80
    return f"{parts.scheme}://{parts.hostname.lower()}" + (f":{port}" if port not in (None, default) else "")


def storefront_origin() -> str | None:
    url = storefront_url()
    return origin_of(url) if url else None


def build_hook_url() -> str | None:
    shop = tenancy.current_shop()
    return shop.build_hook_url if shop is not None else settings().storefront_build_hook_url


def stripe_secret_key() -> str | None:
    own = settings()
    if own.stripe_secret_key_arn:
        return config.secret_string(own.stripe_secret_key_arn)
    return own.stripe_secret_key
