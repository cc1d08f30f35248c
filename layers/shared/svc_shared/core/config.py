"""Configuration of the platform functions, read once from the environment into a validated model."""

from __future__ import annotations

import functools
import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator


class ConfigurationError(RuntimeError):
    """The environment does not describe a usable configuration."""


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    env_name: str = Field(default="dev", alias="SVC_ENV")
    # The API's public base URL when it is fixed (a custom domain). Empty: API Gateway names it in each request
    # (svc_shared.wiring.baseurl); read it through services.public_base_url(), never from here.
    public_base_url: str = Field(default="", alias="PUBLIC_BASE_URL")
    table_name: str = Field(alias="TABLE_NAME")
    tokens_table_name: str = Field(default="", alias="TOKENS_TABLE_NAME")
    uploads_bucket: str = Field(default="", alias="UPLOADS_BUCKET")
    workspace_app_url: str = Field(default="", alias="WORKSPACE_APP_URL")
    kms_key_id: str | None = Field(default=None, alias="KMS_KEY_ID")
    local_master_key: str | None = Field(default=None, alias="LOCAL_MASTER_KEY", repr=False)
    # Only the functions that sign or verify (sessions, OAuth state, MCP tokens) are given the secret's ARN.
    session_secret_arn: str = Field(default="", alias="SESSION_SECRET_ARN")
    aws_region: str = Field(default="us-east-1", alias="AWS_REGION")
    # Sign-in throttling: failed attempts allowed per account and per client address in one window.
    login_max_failures: int = Field(default=5, alias="LOGIN_MAX_FAILURES", ge=1)
    login_ip_max_attempts: int = Field(default=30, alias="LOGIN_IP_MAX_ATTEMPTS", ge=1)
    login_window_seconds: int = Field(default=900, alias="LOGIN_WINDOW_SECONDS", ge=1)
    session_ttl_seconds: int = Field(default=14 * 24 * 3600, alias="SESSION_TTL_SECONDS", ge=60)
    # Browser origins (comma-separated) allowed to call /mcp, the discovery documents and the OAuth endpoints
    # cross-origin (svc_shared.wiring.origins); the public origin itself is always allowed.
    allowed_origins_csv: str = Field(default="", alias="ALLOWED_ORIGINS")
    # A rotated refresh token presented again within this many seconds re-issues the family's pair instead of
    # revoking it (0: any reuse revokes the family; see docs/decisions.md, "Refresh token reuse").
    refresh_grace_seconds: int = Field(default=0, alias="REFRESH_GRACE_SECONDS", ge=0, le=300)
    # Local mode only: client metadata documents (an https URL as client_id) may also be served from loopback
    # addresses, over http or https. Deployed, only public addresses over https are fetched.
    cimd_allow_loopback: bool = Field(default=False, alias="CIMD_ALLOW_LOOPBACK")

    # Providers: base URLs (the real providers by default; the local stack points them at the sandbox),
    # OAuth client ids, and the Secrets Manager ARNs of their secrets.
    repo_host_api_url: str = Field(default="https://api.github.com", alias="REPO_HOST_API_URL")
    repo_host_oauth_url: str = Field(default="https://github.com", alias="REPO_HOST_OAUTH_URL")
    repo_host_client_id: str = Field(default="", alias="REPO_HOST_CLIENT_ID")
    repo_host_client_secret_arn: str = Field(default="", alias="REPO_HOST_CLIENT_SECRET_ARN")
    db_host_api_url: str = Field(default="https://api.supabase.com", alias="DB_HOST_API_URL")
    db_host_client_id: str = Field(default="", alias="DB_HOST_CLIENT_ID")
    db_host_client_secret_arn: str = Field(default="", alias="DB_HOST_CLIENT_SECRET_ARN")
    static_host_api_url: str = Field(default="https://api.netlify.com/api/v1", alias="STATIC_HOST_API_URL")
    static_host_oauth_url: str = Field(default="https://app.netlify.com", alias="STATIC_HOST_OAUTH_URL")
    static_host_token_url: str = Field(
        default="https://api.netlify.com/oauth/token", alias="STATIC_HOST_TOKEN_URL"
    )
    static_host_client_id: str = Field(default="", alias="STATIC_HOST_CLIENT_ID")
    static_host_client_secret_arn: str = Field(default="", alias="STATIC_HOST_CLIENT_SECRET_ARN")
    checkout_api_url: str = Field(default="https://api.stripe.com", alias="CHECKOUT_API_URL")
    checkout_secret_key_arn: str = Field(default="", alias="CHECKOUT_SECRET_KEY_ARN")
    checkout_webhook_secret_arn: str = Field(default="", alias="CHECKOUT_WEBHOOK_SECRET_ARN")
    # Backoffice hand-offs: a key retired by rotation keeps verifying this long (svc_shared.domain.handoff_keys).
    handoff_key_grace_seconds: int = Field(default=24 * 3600, alias="HANDOFF_KEY_GRACE_SECONDS", ge=0)
    # The hosted backoffice: the secret each shop's session and field keys are derived from (svc_shared.domain.shops).
    backoffice_secret_arn: str = Field(default="", alias="BACKOFFICE_SECRET_ARN")
    publish_state_machine_arn: str = Field(default="", alias="PUBLISH_STATE_MACHINE_ARN")
    analytics_queue_url: str = Field(default="", alias="ANALYTICS_QUEUE_URL")
    builder_api_url: str = Field(default="", alias="BUILDER_API_URL")
    builder_api_key_arn: str = Field(default="", alias="BUILDER_API_KEY_ARN")
    # Publishing: the backoffice tree it pushes (found beside the code when unset), and fault injection for
    # the reliability tests (`db_created,template_pushed`: crash once at each point; never in production).
    backoffice_template_dir: str | None = Field(default=None, alias="BACKOFFICE_TEMPLATE_DIR")
    crash_points: str = Field(default="", alias="SVC_CRASH_POINTS")

    @field_validator("public_base_url")
    @classmethod
    def _base_url(cls, value: str) -> str:
        value = value.strip()
        if value and not value.startswith(("https://", "http://")):
            raise ValueError("must be empty or an absolute http(s) URL")
        return value.rstrip("/")

    @field_validator("workspace_app_url")
    @classmethod
    def _workspace_url(cls, value: str) -> str:
        """Empty: the workspace pages of this API (services.workspace_app_url)."""
        return value.strip().rstrip("/")

    @model_validator(mode="after")
    def _one_key_source(self) -> Settings:
        if bool(self.kms_key_id) == bool(self.local_master_key):
            raise ValueError("set exactly one of KMS_KEY_ID (AWS) or LOCAL_MASTER_KEY (local stack)")
        return self

    @property
    def allowed_origins(self) -> tuple[str, ...]:
        return tuple(o.strip() for o in self.allowed_origins_csv.split(",") if o.strip())

    @property
    def deployment(self) -> Literal["aws", "local"]:
        return "local" if self.local_master_key else "aws"


def is_loopback_url(url: str) -> bool:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.scheme == "http" and (parts.hostname or "") in {"localhost", "127.0.0.1", "::1"}


@functools.cache
def get_settings() -> Settings:
    """The process-wide settings, validated on first use."""
    try:
        return Settings.model_validate(dict(os.environ))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'environment'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigurationError(f"invalid configuration: {problems}") from None


def reset_settings() -> None:
    """Forget the cached settings (tests and the local stack change the environment)."""
    get_settings.cache_clear()
