"""Wiring: the domain services built from the settings, once per container (tests call `reset()`).

Each factory imports what it builds, so a function loads only the modules of the services it uses
(cold starts matter: cryptography, boto3 and the provider adapters stay out of functions that never
touch them)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from svc_shared.clock import Clock, system_clock
from svc_shared.config import get_settings

if TYPE_CHECKING:
    from svc_shared.accounts import Accounts
    from svc_shared.analytics import Analytics
    from svc_shared.connections import Connections
    from svc_shared.credits import Credits
    from svc_shared.crypto import Envelope
    from svc_shared.dal import Table
    from svc_shared.handoff import Handoffs
    from svc_shared.integrations import Integrations
    from svc_shared.mcpauth import McpClients
    from svc_shared.oauth.clients import Clients
    from svc_shared.oauth.grants import Grants
    from svc_shared.projects import Projects
    from svc_shared.providers.checkout import Checkout
    from svc_shared.provisioning import Provisioning
    from svc_shared.publishing import Publisher
    from svc_shared.ratelimit import RateLimiter
    from svc_shared.sessions import Sessions
    from svc_shared.signin import SignIn
    from svc_shared.workbench import Workbench

_clock_override: list[Clock] = []


def clock() -> Clock:
    return _clock_override[-1] if _clock_override else system_clock


@functools.cache
def table() -> Table:
    from svc_shared.dal import Table

    return Table(get_settings().table_name)


@functools.cache
def envelope() -> Envelope:
    import base64

    from svc_shared.crypto import Envelope, KmsKeyProvider, LocalKeyProvider

    settings = get_settings()
    if settings.local_master_key:
        return Envelope(LocalKeyProvider(base64.b64decode(settings.local_master_key)))
    assert settings.kms_key_id is not None
    return Envelope(KmsKeyProvider(settings.kms_key_id))


@functools.cache
def signing_key(purpose: str) -> bytes:
    """A key for one kind of signed value, derived from the session secret."""
    from svc_shared.secrets import derived_key

    return derived_key(get_settings().session_secret_arn, purpose)


@functools.cache
def accounts() -> Accounts:
    from svc_shared.accounts import Accounts

    return Accounts(table(), clock())


@functools.cache
def rate_limiter() -> RateLimiter:
    from svc_shared.ratelimit import RateLimiter

    return RateLimiter(table(), clock())


@functools.cache
def sessions() -> Sessions:
    from svc_shared.sessions import Sessions

    return Sessions(table(), signing_key("workspace-session"), get_settings().session_ttl_seconds, clock())


@functools.cache
def signin() -> SignIn:
    from svc_shared.signin import SignIn

    settings = get_settings()
    return SignIn(
        accounts(),
        sessions(),
        rate_limiter(),
        max_failures=settings.login_max_failures,
        ip_max_attempts=settings.login_ip_max_attempts,
        window=settings.login_window_seconds,
    )


@functools.cache
def oauth_clients() -> Clients:
    from svc_shared.oauth.clients import Clients

    return Clients(table(), clock())


@functools.cache
def grants() -> Grants:
    from svc_shared.oauth.grants import Grants
    from svc_shared.oauth.metadata import resource_url

    return Grants(
        table(), clock(), resource_url(get_settings().public_base_url), lambda: signing_key("mcp-access")
    )


@functools.cache
def mcp_clients() -> McpClients:
    """The workspace's list of authorized MCP clients, and Revoke."""
    from svc_shared.mcpauth import McpClients

    return McpClients(grants(), oauth_clients())


@functools.cache
def tokens_table() -> Table:
    from svc_shared.dal import Table

    name = get_settings().tokens_table_name
    if not name:
        from svc_shared.config import ConfigurationError

        raise ConfigurationError("invalid configuration: TOKENS_TABLE_NAME is not set")
    return Table(name, pk="user_id", sk="provider")


def _secret(arn: str) -> Callable[[], str]:
    def read() -> str:
        from svc_shared.secrets import get_secret

        if not arn:
            from svc_shared.config import ConfigurationError

            raise ConfigurationError("invalid configuration: a provider client secret ARN is not set")
        return get_secret(arn)

    return read


@functools.cache
def connections() -> Connections:
    from svc_shared.connections import Connections, ProviderApp
    from svc_shared.providers.db_host import DbHostOAuth
    from svc_shared.providers.repo_host import RepoHost, RepoHostOAuth
    from svc_shared.providers.static_host import StaticHostOAuth

    settings = get_settings()
    apps = {
        "repo_host": ProviderApp(
            RepoHostOAuth(settings.repo_host_oauth_url),
            settings.repo_host_client_id,
            _secret(settings.repo_host_client_secret_arn),
        ),
        "db_host": ProviderApp(
            DbHostOAuth(settings.db_host_api_url),
            settings.db_host_client_id,
            _secret(settings.db_host_client_secret_arn),
        ),
        "static_host": ProviderApp(
            StaticHostOAuth(settings.static_host_oauth_url, settings.static_host_token_url),
            settings.static_host_client_id,
            _secret(settings.static_host_client_secret_arn),
        ),
    }
    return Connections(
        tokens_table(),
        envelope(),
        accounts(),
        apps,
        state_key=signing_key("provider-oauth-state"),
        redirect_uri=f"{settings.public_base_url}/api/oauth/callback",
        clock=clock(),
        repo_host_api=lambda token: RepoHost(settings.repo_host_api_url, token),
    )


@functools.cache
def projects() -> Projects:
    from svc_shared.projects import Projects

    return Projects(table(), clock())


@functools.cache
def analytics() -> Analytics:
    from svc_shared.analytics import Analytics

    return Analytics(table(), clock())


@functools.cache
def credits() -> Credits:
    from svc_shared.credits import Credits

    return Credits(table(), clock())


@functools.cache
def checkout() -> Checkout:
    from svc_shared.providers.checkout import Checkout
    from svc_shared.secrets import get_secret

    settings = get_settings()
    return Checkout(settings.checkout_api_url, get_secret(settings.checkout_secret_key_arn))


@functools.cache
def integrations() -> Integrations:
    from svc_shared.integrations import Integrations
    from svc_shared.providers.db_host import DbHost
    from svc_shared.providers.repo_host import RepoHost

    settings = get_settings()
    return Integrations(
        projects(),
        connections(),
        rate_limiter(),
        envelope(),
        clock(),
        repo_host=lambda token: RepoHost(settings.repo_host_api_url, token),
        db_host=lambda token: DbHost(settings.db_host_api_url, token),
    )


@functools.cache
def workbench() -> Workbench:
    from svc_shared import aws
    from svc_shared.providers.builder import Builder
    from svc_shared.providers.repo_host import RepoHost
    from svc_shared.providers.static_host import StaticHost
    from svc_shared.secrets import get_secret
    from svc_shared.workbench import Workbench

    settings = get_settings()
    return Workbench(
        table(),
        projects(),
        accounts(),
        connections(),
        clock(),
        repo_host=lambda token: RepoHost(settings.repo_host_api_url, token),
        static_host=lambda token: StaticHost(settings.static_host_api_url, token),
        builder=lambda: Builder(settings.builder_api_url, get_secret(settings.builder_api_key_arn)),
        s3=lambda: aws.client("s3"),
        bucket=settings.uploads_bucket,
    )


@functools.cache
def publisher() -> Publisher:
    from svc_shared.providers.db_host import DbHost
    from svc_shared.providers.repo_host import RepoHost
    from svc_shared.providers.static_host import StaticHost
    from svc_shared.publishing import Adapters, Publisher

    settings = get_settings()
    adapters = Adapters(
        repo_host=lambda token: RepoHost(settings.repo_host_api_url, token),
        db_host=lambda token: DbHost(settings.db_host_api_url, token),
        static_host=lambda token: StaticHost(settings.static_host_api_url, token),
    )
    return Publisher(table(), projects(), connections(), envelope(), clock(), adapters)


@functools.cache
def provisioning() -> Provisioning:
    from svc_shared import aws
    from svc_shared.provisioning import Provisioning

    return Provisioning(
        projects(),
        clock(),
        sfn=lambda: aws.client("stepfunctions"),
        state_machine_arn=get_settings().publish_state_machine_arn,
    )


@functools.cache
def handoffs() -> Handoffs:
    from svc_shared.handoff import Handoffs
    from svc_shared.secrets import get_secret

    arn = get_settings().handoff_private_key_arn
    return Handoffs(projects(), accounts(), clock(), lambda: get_secret(arn))


def workspace_url(project_id: str) -> str:
    """Where the user opens a project in the workspace application (generation starts there)."""
    return f"{get_settings().workspace_app_url}/projects/{project_id}"


def reset() -> None:
    """Forget every built service and the settings (after the environment changes). AWS clients are kept:
    `aws.reset_clients()` drops them when the endpoint itself changes."""
    from svc_shared.config import reset_settings

    for value in list(globals().values()):
        if callable(getattr(value, "cache_clear", None)) and getattr(value, "__module__", None) == __name__:
            value.cache_clear()
    reset_settings()


def use_clock(replacement: Clock | None) -> None:
    """Build every service from now on with `replacement` (tests move time); None restores the system clock."""
    reset()
    _clock_override.clear()
    if replacement is not None:
        _clock_override.append(replacement)
