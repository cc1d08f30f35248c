"""Configuration of the backoffice functions: one validated model of the environment, read lazily."""

from __future__ import annotations

import functools

from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class ConfigurationError(RuntimeError):
    """The environment does not describe a usable configuration."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(frozen=True, extra="ignore", case_sensitive=True)

    database_url: str = Field(alias="DATABASE_URL", repr=False)
    # Cookie signing key: the secret itself (local stack, tests) or the ARN of a Secrets Manager secret.
    session_secret: str | None = Field(default=None, alias="SESSION_SECRET", repr=False)
    session_secret_arn: str | None = Field(default=None, alias="SESSION_SECRET_ARN")
    session_ttl_seconds: int = Field(default=8 * 3600, alias="SESSION_TTL_SECONDS", ge=300, le=7 * 24 * 3600)
    cookie_secure: bool = Field(default=True, alias="COOKIE_SECURE")
    # Hand-off tokens: the platform's public key (PEM, Ed25519 or P-256), who issues them, and who they are for.
    handoff_public_key: str = Field(alias="HANDOFF_PUBLIC_KEY", repr=False)
    handoff_issuer: str = Field(default="svc-platform", alias="HANDOFF_ISSUER")
    handoff_audience: str = Field(alias="HANDOFF_AUDIENCE")
    # Encryption at rest of write-only secrets (payment webhook secrets, integration tokens): one of a base64
    # 32-byte AES key, a Secrets Manager secret whose string is the key material (HKDF-SHA256), or a KMS key.
    field_encryption_key: str | None = Field(default=None, alias="FIELD_ENCRYPTION_KEY", repr=False)
    field_encryption_secret_arn: str | None = Field(default=None, alias="FIELD_ENCRYPTION_SECRET_ARN")
    field_encryption_kms_key_arn: str | None = Field(default=None, alias="FIELD_ENCRYPTION_KMS_KEY_ARN")
    # Payment webhooks: timestamp tolerance of the timestamped schemes, and the largest body accepted.
    webhook_tolerance_seconds: int = Field(default=300, alias="WEBHOOK_TOLERANCE_SECONDS", ge=30, le=3600)
    webhook_max_bytes: int = Field(default=256 * 1024, alias="WEBHOOK_MAX_BYTES", ge=1024, le=6 * 1024 * 1024)
    # Search console (Google-shaped OAuth 2.0 + PKCE). GSC_PROVIDER_BASE_URL points every provider call at one
    # base (the platform's provider sandbox); unset, the real endpoints below are used.
    gsc_client_id: str | None = Field(default=None, alias="GSC_CLIENT_ID")
    gsc_client_secret: str | None = Field(default=None, alias="GSC_CLIENT_SECRET", repr=False)
    gsc_provider_base_url: str | None = Field(default=None, alias="GSC_PROVIDER_BASE_URL")
    gsc_redirect_uri: str | None = Field(default=None, alias="GSC_REDIRECT_URI")
    gsc_return_path: str = Field(default="/integrations", alias="GSC_RETURN_PATH")

    @model_validator(mode="after")
    def _one_secret_source(self) -> Settings:
        if bool(self.session_secret) == bool(self.session_secret_arn):
            raise ValueError("set exactly one of SESSION_SECRET or SESSION_SECRET_ARN")
        if self.session_secret is not None and len(self.session_secret) < 32:
            raise ValueError("SESSION_SECRET must be at least 32 characters")
        sources = [
            self.field_encryption_key,
            self.field_encryption_secret_arn,
            self.field_encryption_kms_key_arn,
        ]
        if sum(bool(s) for s in sources) > 1:
            raise ValueError(
                "set at most one of FIELD_ENCRYPTION_KEY, FIELD_ENCRYPTION_SECRET_ARN, FIELD_ENCRYPTION_KMS_KEY_ARN"
            )
        return self


@functools.cache
def get_settings() -> Settings:
    """The process-wide settings, validated on first use."""
    try:
        return Settings()  # type: ignore[call-arg]
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'environment'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigurationError(f"invalid backoffice configuration: {problems}") from None


@functools.cache
def session_secret() -> bytes:
    """The cookie signing key, fetched once per container when it lives in Secrets Manager."""
    settings = get_settings()
    if settings.session_secret:
        return settings.session_secret.encode()
    import boto3  # provided by the Lambda runtime

    value = boto3.client("secretsmanager").get_secret_value(SecretId=settings.session_secret_arn)
    return str(value["SecretString"]).encode()


def reset_settings() -> None:
    """Forget cached settings and the keys derived from them (tests change the environment); sealers are
    per settings (svc_backoffice.sealing.sealer_for), so new settings get a new one."""
    get_settings.cache_clear()
    session_secret.cache_clear()
