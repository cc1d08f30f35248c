"""The provider sandbox's providers (GitHub, Supabase, Netlify, Stripe and the AI builder shapes), their
credentials (generated once per state directory) and the base URLs the platform's adapters use with them."""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypedDict

from svc_local.providers.builder import Builder
from svc_local.providers.github import GitHub
from svc_local.providers.gsc import Gsc
from svc_local.providers.netlify import Netlify
from svc_local.providers.stripe import Stripe
from svc_local.providers.supabase import Supabase
from svc_local.sandbox import Provider
from svc_local.state import atomic_write

__all__ = [
    "Builder",
    "GitHub",
    "Gsc",
    "Netlify",
    "SandboxCredentials",
    "Stripe",
    "Supabase",
    "base_urls",
    "build_providers",
    "platform_client_ids",
    "platform_secrets",
]


def _token(prefix: str, length: int = 40) -> str:
    return prefix + secrets.token_hex(length // 2)


class OAuthClient(TypedDict):
    """The OAuth app the platform is registered as at one provider."""

    client_id: str
    client_secret: str


@dataclass(frozen=True)
class SandboxCredentials:
    """What the platform is registered with at each provider: OAuth apps, API keys, the webhook secret."""

    repo_host_client_id: str
    repo_host_client_secret: str
    db_host_client_id: str
    db_host_client_secret: str
    static_host_client_id: str
    static_host_client_secret: str
    checkout_secret_key: str
    checkout_webhook_secret: str
    checkout_connect_client_id: str
    builder_api_key: str
    gsc_client_id: str
    gsc_client_secret: str

    @classmethod
    def generate(cls) -> SandboxCredentials:
        return cls(
            repo_host_client_id=_token("Iv1.", 16),
            repo_host_client_secret=_token("", 40),
            db_host_client_id=_token("sbx-", 32),
            db_host_client_secret=_token("sba_", 40),
            static_host_client_id=_token("", 40),
            static_host_client_secret=_token("", 40),
            checkout_secret_key=_token("sk_test_", 48),
            checkout_webhook_secret=_token("whsec_", 32),
            checkout_connect_client_id=_token("ca_", 32),
            builder_api_key=_token("bk_", 40),
            gsc_client_id=_token("", 12) + "-sandbox.apps.googleusercontent.com",
            gsc_client_secret=_token("GOCSPX-", 28),
        )

    def client(self, host: str) -> OAuthClient:
        """The platform's OAuth app at `host` ("repo_host", "db_host", "static_host" or "gsc")."""
        return OAuthClient(
            client_id=getattr(self, f"{host}_client_id"), client_secret=getattr(self, f"{host}_client_secret")
        )

    @classmethod
    def load_or_create(cls, path: Path) -> SandboxCredentials:
        """The credentials stored at `path` (mode 0600), generated on first use."""
        if path.is_file():
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            try:
                return cls(**{name: str(data[name]) for name in cls.__dataclass_fields__})
            except KeyError:
                pass  # an older file without a newer field: generate what is missing
            fresh = asdict(cls.generate())
            made = cls(**{name: str(data.get(name) or fresh[name]) for name in cls.__dataclass_fields__})
        else:
            made = cls.generate()
        atomic_write(path, json.dumps(asdict(made), indent=2).encode("utf-8"), mode=0o600)
        return made


def build_providers(
    state_dir: Path | None,
    credentials: SandboxCredentials,
    *,
    database_url: str | None = None,
    checkout_webhook_url: str | None = None,
    project_ready_delay: float = 2.0,
    build_delay: float = 1.0,
    builder_delay: float = 0.5,
    token_lifetime: float = 86400,
    rate_limit_per_minute: int | None = 60,
) -> list[Provider]:
    """Every provider, with state under `state_dir/sandbox` (None: in memory, git repos in a temp dir)."""
    root = state_dir / "sandbox" if state_dir else None
    if root is not None:
        root.mkdir(parents=True, exist_ok=True)
    github = GitHub(root, **credentials.client("repo_host"))
    return [
        github,
        Supabase(
            root,
            **credentials.client("db_host"),
            database_url=database_url,
            token_lifetime=token_lifetime,
            project_ready_delay=project_ready_delay,
            rate_limit_per_minute=rate_limit_per_minute,
        ),
        Netlify(root, **credentials.client("static_host"), github=github, build_delay=build_delay),
        Stripe(
            root,
            secret_key=credentials.checkout_secret_key,
            webhook_secret=credentials.checkout_webhook_secret,
            webhook_url=checkout_webhook_url,
            connect_client_id=credentials.checkout_connect_client_id,
        ),
        Builder(root, api_key=credentials.builder_api_key, github=github, delay=builder_delay),
        Gsc(root, **credentials.client("gsc")),
    ]


def base_urls(sandbox_url: str) -> dict[str, str]:
    """The adapters' base URL settings pointing at a sandbox."""
    return {
        "REPO_HOST_API_URL": f"{sandbox_url}/github/api",
        "REPO_HOST_OAUTH_URL": f"{sandbox_url}/github",
        "DB_HOST_API_URL": f"{sandbox_url}/supabase",
        "STATIC_HOST_API_URL": f"{sandbox_url}/netlify/api/v1",
        "STATIC_HOST_OAUTH_URL": f"{sandbox_url}/netlify",
        "STATIC_HOST_TOKEN_URL": f"{sandbox_url}/netlify/oauth/token",
        "CHECKOUT_API_URL": f"{sandbox_url}/stripe",
        "BUILDER_API_URL": f"{sandbox_url}/builder",
        "GSC_PROVIDER_BASE_URL": f"{sandbox_url}/gsc",
        "SANDBOX_URL": sandbox_url,
    }


def platform_secrets(credentials: SandboxCredentials) -> dict[str, str]:
    """The platform's provider secrets, by the setting that names the ARN of each one's stored secret."""
    return {
        "REPO_HOST_CLIENT_SECRET_ARN": credentials.repo_host_client_secret,
        "DB_HOST_CLIENT_SECRET_ARN": credentials.db_host_client_secret,
        "STATIC_HOST_CLIENT_SECRET_ARN": credentials.static_host_client_secret,
        "CHECKOUT_SECRET_KEY_ARN": credentials.checkout_secret_key,
        "CHECKOUT_WEBHOOK_SECRET_ARN": credentials.checkout_webhook_secret,
        "BUILDER_API_KEY_ARN": credentials.builder_api_key,
    }


def platform_client_ids(credentials: SandboxCredentials) -> dict[str, str]:
    """The platform's OAuth client ids, by setting."""
    return {
        "REPO_HOST_CLIENT_ID": credentials.repo_host_client_id,
        "DB_HOST_CLIENT_ID": credentials.db_host_client_id,
        "STATIC_HOST_CLIENT_ID": credentials.static_host_client_id,
    }
