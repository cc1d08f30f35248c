"""Wiring: one `Services` object per container (wiring.container: settings, clock, AWS clients, HTTP pool,
tables, provider apps) builds each domain service once. Handlers ask `services.accounts()`; tests wire their own
with `services.wire(clock=FrozenClock(...))`. Each domain service is declared once, by its factory below
(`@_service def accounts(s) -> Accounts`), which reaches the services it needs as `accounts.of(s)` and imports
what it builds, so a function loads only the modules of the services it uses (cold starts matter)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic

from svc_shared.core.aws import AwsClients
from svc_shared.core.clock import Clock, system_clock
from svc_shared.core.config import Settings
from svc_shared.providers.http import HttpPool
from svc_shared.wiring import baseurl
from svc_shared.wiring.container import Built, Services, services_holder
from svc_shared.wiring.container import current as current  # the container's services, `services.current()`

if TYPE_CHECKING:
    from svc_shared.core.metrics import Metrics
    from svc_shared.domain.accounts import Accounts
    from svc_shared.domain.analytics import Analytics
    from svc_shared.domain.analytics.intake import BeaconQueue, KnownSites
    from svc_shared.domain.audit import ToolAudit
    from svc_shared.domain.connections import Connections
    from svc_shared.domain.credits import Credits
    from svc_shared.domain.deletion import AccountDeletion
    from svc_shared.domain.handoff import Handoffs
    from svc_shared.domain.handoff_keys import HandoffKeys
    from svc_shared.domain.integrations import Integrations
    from svc_shared.domain.projects import Projects
    from svc_shared.domain.provisioning import Provisioning
    from svc_shared.domain.publishing import Publisher
    from svc_shared.domain.sessions import Sessions
    from svc_shared.domain.shops import Shops
    from svc_shared.domain.signin import SignIn
    from svc_shared.domain.workbench import Workbench
    from svc_shared.oauth.clients import Clients
    from svc_shared.oauth.grants import Grants
    from svc_shared.oauth.mcpauth import McpClients
    from svc_shared.providers.checkout import Checkout
    from svc_shared.storage.ratelimit import RateLimiter
    from svc_shared.wiring.origins import OriginPolicy


class Service(Generic[Built]):
    """A domain service of the container, declared once by its factory: `services.accounts()` is the one the
    container's Services built, `accounts.of(s)` the one of the Services `s`; either is built on first use.
    A service `by_base_url` is built once per public base URL (one per container on AWS: one domain)."""

    def __init__(self, build: Callable[[Services], Built], *, by_base_url: bool = False) -> None:
        self._build = build
        self._by_base_url = by_base_url
        self.__name__ = build.__name__
        self.__doc__ = build.__doc__

    def of(self, services: Services) -> Built:
        return services.built((self, services.public_base_url) if self._by_base_url else self, self._build)

    def __call__(self) -> Built:
        return self.of(current())


def _service(build: Callable[[Services], Built]) -> Service[Built]:
    return Service(build)


def _per_base_url(build: Callable[[Services], Built]) -> Service[Built]:
    return Service(build, by_base_url=True)


@_service
def accounts(s: Services) -> Accounts:
    from svc_shared.domain.accounts import Accounts

    return Accounts(s.table, s.clock)


@_service
def rate_limiter(s: Services) -> RateLimiter:
    from svc_shared.storage.ratelimit import RateLimiter

    return RateLimiter(s.table, s.clock)


@_service
def sessions(s: Services) -> Sessions:
    from svc_shared.domain.sessions import Sessions

    return Sessions(s.table, s.signing_key("workspace-session"), s.settings.session_ttl_seconds, s.clock)


@_service
def signin(s: Services) -> SignIn:
    from svc_shared.domain.signin import SignIn, user_grant_revoker

    settings = s.settings
    return SignIn(
        accounts.of(s),
        sessions.of(s),
        rate_limiter.of(s),
        max_failures=settings.login_max_failures,
        ip_max_attempts=settings.login_ip_max_attempts,
        window=settings.login_window_seconds,
        revoke_grants=user_grant_revoker(s.table, s.clock),
    )


@_service
def account_deletion(s: Services) -> AccountDeletion:
    from svc_shared.domain.deletion import AccountDeletion
    from svc_shared.domain.signin import user_grant_revoker

    return AccountDeletion(s.table, s.tokens_table, accounts.of(s), user_grant_revoker(s.table, s.clock))


@_service
def oauth_clients(s: Services) -> Clients:
    from svc_shared.oauth.clients import Clients
    from svc_shared.oauth.documents import DocumentFetcher

    documents = DocumentFetcher(allow_loopback=s.settings.cimd_allow_loopback, clock=s.clock.now)
    return Clients(s.table, s.clock, documents)


@_per_base_url
def grants(s: Services) -> Grants:
    from svc_shared.oauth.grants import Grants
    from svc_shared.oauth.metadata import resource_url

    return Grants(
        s.table,
        s.clock,
        resource_url(s.public_base_url),
        lambda: s.signing_key("mcp-access"),
        grace_seconds=s.settings.refresh_grace_seconds,
    )


@_per_base_url
def origin_policy(s: Services) -> OriginPolicy:
    from svc_shared.wiring.origins import OriginPolicy

    return OriginPolicy(s.public_base_url, s.settings.allowed_origins)


@_per_base_url
def mcp_clients(s: Services) -> McpClients:
    """The workspace's list of authorized MCP clients, and Revoke."""
    from svc_shared.oauth.mcpauth import McpClients

    return McpClients(grants.of(s), oauth_clients.of(s))


@_service
def connections(s: Services) -> Connections:
    from svc_shared.domain.connections import Connections

    return Connections(
        s.tokens_table,
        s.envelope,
        accounts.of(s),
        s.provider_apps(),
        state_key=s.signing_key("provider-oauth-state"),
        redirect_uri=lambda: f"{s.public_base_url}/api/oauth/callback",
        clock=s.clock,
        repo_host_api=s.repo_host,
    )


@_service
def projects(s: Services) -> Projects:
    from svc_shared.domain.projects import Projects

    return Projects(s.table, s.clock)


@_service
def tool_audit(s: Services) -> ToolAudit:
    from svc_shared.domain.audit import ToolAudit

    return ToolAudit(s.table, s.clock)


@_service
def analytics(s: Services) -> Analytics:
    from svc_shared.domain.analytics import Analytics

    return Analytics(s.table, s.clock)


@_service
def beacon_queue(s: Services) -> BeaconQueue:  # the analytics queue the collect route puts beacons on
    from svc_shared.domain.analytics.intake import BeaconQueue

    return BeaconQueue(lambda: s.aws.client("sqs"), s.settings.analytics_queue_url)


@_service
def known_sites(s: Services) -> KnownSites:  # the sites the aggregator knows exist, for a few minutes
    from svc_shared.domain.analytics.intake import KnownSites

    return KnownSites(projects.of(s), s.clock)


@_service
def credits(s: Services) -> Credits:
    from svc_shared.domain.credits import Credits

    return Credits(s.table, s.clock)


@_service
def checkout(s: Services) -> Checkout:
    from svc_shared.core.secrets import get_secret
    from svc_shared.providers.checkout import Checkout

    settings = s.settings
    return Checkout(settings.checkout_api_url, get_secret(settings.checkout_secret_key_arn), http=s.http)


@_service
def integrations(s: Services) -> Integrations:
    from svc_shared.domain.integrations import Integrations

    return Integrations(
        projects.of(s),
        connections.of(s),
        rate_limiter.of(s),
        s.envelope,
        s.clock,
        repo_host=s.repo_host,
        db_host=s.db_host,
    )


@_service
def workbench(s: Services) -> Workbench:
    from svc_shared.core.secrets import get_secret
    from svc_shared.domain.workbench import Workbench
    from svc_shared.providers.builder import Builder

    settings = s.settings
    return Workbench(
        s.table,
        projects.of(s),
        accounts.of(s),
        connections.of(s),
        s.clock,
        repo_host=s.repo_host,
        static_host=s.static_host,
        builder=lambda: Builder(
            settings.builder_api_url, get_secret(settings.builder_api_key_arn), http=s.http
        ),
        s3=lambda: s.aws.client("s3"),
        bucket=settings.uploads_bucket,
    )


@_service
def publisher(s: Services) -> Publisher:
    from svc_shared.domain.publish_stages import Adapters, PublishStages
    from svc_shared.domain.publish_state import PublishRecord
    from svc_shared.domain.publishing import Publisher

    settings = s.settings
    crash_points = frozenset(p for p in settings.crash_points.split(",") if p)
    stages = PublishStages(
        PublishRecord(projects.of(s), s.clock),
        connections.of(s),
        s.envelope,
        s.clock,
        Adapters(repo_host=s.repo_host, db_host=s.db_host, static_host=s.static_host),
        template=s.backoffice_tree,
        crash_points=crash_points if settings.env_name != "prod" else frozenset(),
        platform_url=lambda: s.known_base_url,
    )
    return Publisher(stages)


@_service
def provisioning(s: Services) -> Provisioning:
    from svc_shared.domain.provisioning import Provisioning

    return Provisioning(
        projects.of(s),
        s.clock,
        sfn=lambda: s.aws.client("stepfunctions"),
        state_machine_arn=s.settings.publish_state_machine_arn,
        before_launch=s.remember_public_base_url,
        metrics=metrics.of(s),
    )


@_service
def handoff_keys(s: Services) -> HandoffKeys:
    from svc_shared.domain.handoff_keys import HandoffKeys

    return HandoffKeys(
        s.table, lambda: s.envelope, s.clock, grace_seconds=s.settings.handoff_key_grace_seconds
    )


@_service
def metrics(s: Services) -> Metrics:
    from svc_shared.core.metrics import Metrics

    return Metrics(s.settings.env_name)


@_service
def handoffs(s: Services) -> Handoffs:
    from svc_shared.domain.handoff import Handoffs

    return Handoffs(projects.of(s), accounts.of(s), s.clock, handoff_keys.of(s), rate_limiter.of(s))


@_service
def shops(s: Services) -> Shops:
    from svc_shared.domain.shops import Shops, backoffice_secret_reader

    secret = backoffice_secret_reader(
        s.settings.backoffice_secret_arn, lambda: s.aws.client("secretsmanager")
    )
    needs = (projects.of(s), accounts.of(s), s.envelope, handoff_keys.of(s), s.clock)
    return Shops(*needs, secret=secret, tree=s.backoffice_tree)


def workspace_url(project_id: str) -> str:
    """Where the user opens a project in the workspace application (generation starts there)."""
    return f"{workspace_app_url()}/projects/{project_id}"


def billing_url() -> str:
    """The workspace's credits page, where a top-up's hosted checkout returns."""
    return f"{workspace_app_url()}/billing"


def workspace_app_url() -> str:
    """WORKSPACE_APP_URL, or the workspace pages this API serves."""
    return current().settings.workspace_app_url or f"{public_base_url()}/workspace"


def wire(
    *,
    settings: Settings | None = None,
    clock: Clock = system_clock,
    aws: AwsClients | None = None,
    http: HttpPool | None = None,
) -> Services:
    """Start a new wiring (tests: a fake clock, or after the environment changed); the settings are read again."""
    from svc_shared.core.config import reset_settings

    reset_settings()
    holder = services_holder()
    if holder.services is not None:
        holder.services.http.close()
    holder.services = wired = Services(settings=settings, clock=clock, aws=aws, http=http)
    return wired


# Shortcuts for handlers to what the container holds beside its domain services: `services.clock()` is
# `services.current().clock`.
def _shortcut(read: Callable[[Services], Built]) -> Callable[[], Built]:
    """A function that returns what `read` takes from the container's services."""
    return lambda: read(current())


def bind_request(event: Any) -> None:
    """Make the base URL API Gateway names in `event` the current one (handlers call it first)."""
    baseurl.bind(event)


def remember_public_base_url() -> None:
    current().remember_public_base_url()


clock = _shortcut(lambda s: s.clock)
settings = _shortcut(lambda s: s.settings)
public_base_url = _shortcut(lambda s: s.public_base_url)
cookie_secure = _shortcut(lambda s: s.cookie_secure)
table = _shortcut(lambda s: s.table)
envelope = _shortcut(lambda s: s.envelope)
tokens_table = _shortcut(lambda s: s.tokens_table)


def signing_key(purpose: str) -> bytes:
    return current().signing_key(purpose)
