"""Configuration of the backoffice functions: one validated model of the environment per mode, read lazily.

Two modes (svc_backoffice.core.tenancy):
- self-hosted: the merchant's own deployment of template.yaml serves one shop, and its environment names it
  (database, session key, hand-off keys and audience, field-encryption key): `SelfHostedSettings`, the
  variable names of the template;
- hosted: the platform's one deployment serves every published shop; the Shop of the request brings those,
  and the environment only tunes behaviour, under the `BACKOFFICE_` prefix (`HostedSettings`), so the
  platform's own variables (its SESSION_TTL_SECONDS, SESSION_SECRET_ARN) are never read as the backoffice's.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from svc_backoffice.core import tenancy


class ConfigurationError(RuntimeError):
    """The environment does not describe a usable configuration."""


def _one_of(settings: Any, *names: str, required: bool) -> None:
    given = sum(bool(getattr(settings, name)) for name in names)
    upper = [name.upper() for name in names]
    if required and given != 1:
        raise ValueError(f"set exactly one of {' or '.join(upper)}")
    if given > 1:
        raise ValueError(f"set at most one of {', '.join(upper)}")


class Settings(BaseSettings):
    """What both modes read: behaviour, never which shop."""

    model_config = SettingsConfigDict(frozen=True, extra="ignore", case_sensitive=False)

    session_ttl_seconds: int = Field(default=8 * 3600, ge=300, le=7 * 24 * 3600)
    handoff_issuer: str = "svc-platform"
    # Payment webhooks: timestamp tolerance of the timestamped schemes, and the largest body accepted.
    webhook_tolerance_seconds: int = Field(default=300, ge=30, le=3600)
    webhook_max_bytes: int = Field(default=256 * 1024, ge=1024, le=6 * 1024 * 1024)
    # Search console (Google-shaped OAuth 2.0 + PKCE). The client secret is the value itself (local stack,
    # tests) or the ARN of a Secrets Manager secret holding it. GSC_PROVIDER_BASE_URL points every provider
    # call at one base (the platform's provider sandbox); unset, Google's endpoints are used.
    gsc_client_id: str | None = None
    gsc_client_secret: str | None = Field(default=None, repr=False)
    gsc_client_secret_arn: str | None = None
    gsc_provider_base_url: str | None = None
    gsc_return_path: str = "/settings/integrations"

    @model_validator(mode="after")
    def _one_gsc_secret_source(self) -> Settings:
        _one_of(self, "gsc_client_secret", "gsc_client_secret_arn", required=False)
        return self


class SelfHostedSettings(Settings):
    """The merchant's own deployment: one shop, named by the environment (backoffice/template.yaml)."""

    # The shop database: the URL itself (local stack, tests) or the ARN of a Secrets Manager secret holding it.
    database_url: str | None = Field(default=None, repr=False)
    database_url_secret_arn: str | None = None
    # Cookie signing key: the secret itself (local stack, tests) or the ARN of a Secrets Manager secret.
    session_secret: str | None = Field(default=None, repr=False)
    session_secret_arn: str | None = None
    cookie_secure: bool = True
    # Hand-off tokens: the platform's public keys (PEM blocks, Ed25519 or P-256, the current one first), who
    # issues them (Settings.handoff_issuer), and who they are for.
    handoff_public_key: str = Field(repr=False)
    handoff_audience: str
    # Encryption at rest of write-only secrets (payment webhook secrets, integration tokens): one of a base64
    # 32-byte AES key, a Secrets Manager secret whose string is the key material (HKDF-SHA256), or a KMS key.
    field_encryption_key: str | None = Field(default=None, repr=False)
    field_encryption_secret_arn: str | None = None
    field_encryption_kms_key_arn: str | None = None
    gsc_redirect_uri: str | None = None

    @model_validator(mode="after")
    def _one_source_each(self) -> SelfHostedSettings:
        _one_of(self, "database_url", "database_url_secret_arn", required=True)
        _one_of(self, "session_secret", "session_secret_arn", required=True)
        if self.session_secret is not None and len(self.session_secret) < 32:
            raise ValueError("SESSION_SECRET must be at least 32 characters")
        _one_of(
            self,
            "field_encryption_key",
            "field_encryption_secret_arn",
            "field_encryption_kms_key_arn",
            required=False,
        )
        return self


class HostedSettings(Settings):
    """The platform's deployment: behaviour only, from BACKOFFICE_* variables (the Shop brings the rest)."""

    model_config = SettingsConfigDict(env_prefix="BACKOFFICE_")


def _load(model: type[Settings], prefix: str = "") -> Any:
    try:
        return model()
    except ValidationError as exc:
        problems = "; ".join(
            f"{prefix}{'.'.join(str(p) for p in err['loc']).upper() or 'environment'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ConfigurationError(f"invalid backoffice configuration: {problems}") from None


@functools.cache
def self_hosted_settings() -> SelfHostedSettings:
    """The self-hosted deployment's settings, validated on first use."""
    return _load(SelfHostedSettings)


@functools.cache
def hosted_settings() -> HostedSettings:
    """The hosted deployment's behaviour settings, validated on first use."""
    return _load(HostedSettings, "BACKOFFICE_")


def get_settings() -> Settings:
    """The settings of the mode serving this request: hosted while a shop is current, self-hosted otherwise."""
    return hosted_settings() if tenancy.current_shop() is not None else self_hosted_settings()


@functools.cache
def secret_string(arn: str) -> str:
    """A Secrets Manager secret's string, fetched once per container (secrets are never environment values
    of a deployed function: the template passes their ARNs)."""
    import boto3  # provided by the Lambda runtime

    value = boto3.client("secretsmanager").get_secret_value(SecretId=arn)
    return str(value["SecretString"])


def own_url(path: str) -> str:
    """An absolute URL of this backoffice: under the shop's base URL when hosted, HANDOFF_AUDIENCE's
    self-hosted (the address the platform's hand-offs are made for)."""
    shop = tenancy.current_shop()
    base = shop.base_url if shop is not None else self_hosted_settings().handoff_audience.rstrip("/")
    return base + path


def database_url() -> str:
    """The self-hosted shop's database URL."""
    settings = self_hosted_settings()
    if settings.database_url:
        return settings.database_url
    assert settings.database_url_secret_arn is not None
    return secret_string(settings.database_url_secret_arn)


def session_secret() -> bytes:
    """The self-hosted cookie signing key."""
    settings = self_hosted_settings()
    if settings.session_secret:
        return settings.session_secret.encode()
    assert settings.session_secret_arn is not None
    return secret_string(settings.session_secret_arn).encode()


def gsc_client_secret(settings: Settings) -> str | None:
    """The search-console client secret of `settings`, read from Secrets Manager when given by ARN."""
    if settings.gsc_client_secret_arn:
        return secret_string(settings.gsc_client_secret_arn)
    return settings.gsc_client_secret


def reset_settings() -> None:
    """Forget cached settings and secrets (tests change the environment); sealers are per settings
    (svc_backoffice.data.sealing.sealer_for), so new settings get a new one."""
    self_hosted_settings.cache_clear()
    hosted_settings.cache_clear()
    secret_string.cache_clear()
