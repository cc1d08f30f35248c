"""Wiring: one `Services` object per container holds the settings, the clock, the AWS clients and the HTTP
pool, and builds each domain service from them once. Handlers ask `services.current()` (or the shortcuts
below); tests wire their own with `services.wire(clock=FrozenClock(...))`.

Each factory imports what it builds, so a function loads only the modules of the services it uses
(cold starts matter: cryptography, boto3 and the provider adapters stay out of functions that never
touch them)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from svc_shared import baseurl
from svc_shared.aws import AwsClients
from svc_shared.clock import Clock, system_clock
from svc_shared.config import Settings, get_settings
from svc_shared.providers.http import HttpPool

if TYPE_CHECKING:
    from svc_shared.accounts import Accounts
    from svc_shared.analytics import Analytics
    from svc_shared.analytics.intake import BeaconQueue, KnownSites
    from svc_shared.audit import ToolAudit
    from svc_shared.connections import Connections
    from svc_shared.credits import Credits
    from svc_shared.crypto import Envelope
    from svc_shared.dal import Table
    from svc_shared.deletion import AccountDeletion
    from svc_shared.handoff import Handoffs
    from svc_shared.handoff_keys import HandoffKeys
    from svc_shared.integrations import Integrations
    from svc_shared.mcpauth import McpClients
    from svc_shared.metrics import Metrics
    from svc_shared.oauth.clients import Clients
    from svc_shared.oauth.grants import Grants
    from svc_shared.origins import OriginPolicy
    from svc_shared.projects import Projects
    from svc_shared.providers.checkout import Checkout
    from svc_shared.providers.db_host import DbHost
    from svc_shared.providers.repo_host import RepoHost
    from svc_shared.providers.static_host import StaticHost
    from svc_shared.provisioning import Provisioning
    from svc_shared.publishing import Publisher
    from svc_shared.ratelimit import RateLimiter
    from svc_shared.sessions import Sessions
    from svc_shared.shops import Shops
    from svc_shared.signin import SignIn
    from svc_shared.workbench import Workbench

Built = TypeVar("Built")


class Services:
    """The wiring of one container. Everything is built on first use, so a function loads only what it asks for."""

    def __init__(
        self,
        *,
        settings: Settings | None = None,
        clock: Clock = system_clock,
        aws: AwsClients | None = None,
        http: HttpPool | None = None,
    ) -> None:
        self._settings = settings
        self.clock = clock
        self.aws = aws or AwsClients()
        self.http = http or HttpPool()
        self._signing_keys: dict[str, bytes] = {}
        self._by_base_url: dict[tuple[str, str], Any] = {}

    # The public base URL: PUBLIC_BASE_URL when set (a custom domain); otherwise the one API Gateway names in
    # the request being served (svc_shared.baseurl); otherwise, where no request reaches (the publish steps),
    # the one remembered in the table when a publish was started or someone signed in.
    @property
    def public_base_url(self) -> str:
        url = self.known_base_url
        if not url:
            from svc_shared.config import ConfigurationError

            raise ConfigurationError(
                "invalid configuration: PUBLIC_BASE_URL is empty and the API's address is not known yet "
                "(it is learnt from the first sign-in or publish through the API)"
            )
        return url

    @property
    def known_base_url(self) -> str | None:
        """The public base URL, or None where it is not configured and not known yet."""
        return self.settings.public_base_url or baseurl.current() or self.recorded_base_url.get()

    @functools.cached_property
    def recorded_base_url(self) -> baseurl.RecordedBaseUrl:
        return baseurl.RecordedBaseUrl(self.table)

    def remember_public_base_url(self) -> None:
        """Record the request's base URL for the functions no request reaches (nothing to do when it is
        configured, or outside a request)."""
        url = baseurl.current()
        if url and not self.settings.public_base_url:
            self.recorded_base_url.remember(url)

    @property
    def cookie_secure(self) -> bool:
        """Secure cookies everywhere except plain-HTTP loopback development."""
        from svc_shared.config import is_loopback_url

        return not is_loopback_url(self.public_base_url)

    def _for_base_url(self, name: str, build: Callable[[str], Built]) -> Built:
        """A service built from the base URL, once per base URL (one per container on AWS: one domain)."""
        url = self.public_base_url
        key = (name, url)
        if key not in self._by_base_url:
            self._by_base_url[key] = build(url)
        built: Built = self._by_base_url[key]
        return built

    # Provider adapters for a user's token, on the container's HTTP pool.
    def repo_host(self, token: str) -> RepoHost:
        from svc_shared.providers.repo_host import RepoHost

        return RepoHost(self.settings.repo_host_api_url, token, http=self.http)

    def db_host(self, token: str) -> DbHost:
        from svc_shared.providers.db_host import DbHost

        return DbHost(self.settings.db_host_api_url, token, http=self.http)

    def static_host(self, token: str) -> StaticHost:
        from svc_shared.providers.static_host import StaticHost

        return StaticHost(self.settings.static_host_api_url, token, http=self.http)

    @property
    def settings(self) -> Settings:
        """Validated from the environment on first use, unless wired in."""
        if self._settings is None:
            self._settings = get_settings()
        return self._settings

    @functools.cached_property
    def table(self) -> Table:
        from svc_shared.dal import Table

        return Table(self.settings.table_name, self.aws.client("dynamodb"))

    @functools.cached_property
    def envelope(self) -> Envelope:
        import base64

        from svc_shared.crypto import Envelope, KmsKeyProvider, LocalKeyProvider

        settings = self.settings
        if settings.local_master_key:
            return Envelope(LocalKeyProvider(base64.b64decode(settings.local_master_key)))
        assert settings.kms_key_id is not None
        return Envelope(KmsKeyProvider(settings.kms_key_id, self.aws.client("kms")))

    def signing_key(self, purpose: str) -> bytes:
        """A key for one kind of signed value, derived from the session secret."""
        if purpose not in self._signing_keys:
            from svc_shared.secrets import derived_key

            self._signing_keys[purpose] = derived_key(
                self.settings.session_secret_arn, purpose, self.aws.client("secretsmanager")
            )
        return self._signing_keys[purpose]

    @functools.cached_property
    def accounts(self) -> Accounts:
        from svc_shared.accounts import Accounts

        return Accounts(self.table, self.clock)

    @functools.cached_property
    def rate_limiter(self) -> RateLimiter:
        from svc_shared.ratelimit import RateLimiter

        return RateLimiter(self.table, self.clock)

    @functools.cached_property
    def sessions(self) -> Sessions:
        from svc_shared.sessions import Sessions

        return Sessions(
            self.table, self.signing_key("workspace-session"), self.settings.session_ttl_seconds, self.clock
        )

    @functools.cached_property
    def signin(self) -> SignIn:
        from svc_shared.signin import SignIn, user_grant_revoker

        settings = self.settings
        return SignIn(
            self.accounts,
            self.sessions,
            self.rate_limiter,
            max_failures=settings.login_max_failures,
            ip_max_attempts=settings.login_ip_max_attempts,
            window=settings.login_window_seconds,
            revoke_grants=user_grant_revoker(self.table, self.clock),
        )

    @functools.cached_property
    def account_deletion(self) -> AccountDeletion:
        from svc_shared.deletion import AccountDeletion
        from svc_shared.signin import user_grant_revoker

        return AccountDeletion(
            self.table, self.tokens_table, self.accounts, user_grant_revoker(self.table, self.clock)
        )

    @functools.cached_property
    def oauth_clients(self) -> Clients:
        from svc_shared.oauth.clients import Clients
        from svc_shared.oauth.documents import DocumentFetcher

        documents = DocumentFetcher(allow_loopback=self.settings.cimd_allow_loopback, clock=self.clock.now)
        return Clients(self.table, self.clock, documents)

    @property
    def grants(self) -> Grants:
        from svc_shared.oauth.grants import Grants
        from svc_shared.oauth.metadata import resource_url

        return self._for_base_url(
            "grants",
            lambda base: Grants(
                self.table,
                self.clock,
                resource_url(base),
                lambda: self.signing_key("mcp-access"),
                grace_seconds=self.settings.refresh_grace_seconds,
            ),
        )

    @property
    def origin_policy(self) -> OriginPolicy:
        from svc_shared.origins import OriginPolicy

        return self._for_base_url("origins", lambda base: OriginPolicy(base, self.settings.allowed_origins))

    @property
    def mcp_clients(self) -> McpClients:
        """The workspace's list of authorized MCP clients, and Revoke."""
        from svc_shared.mcpauth import McpClients

        return self._for_base_url("mcp_clients", lambda _: McpClients(self.grants, self.oauth_clients))

    @functools.cached_property
    def tokens_table(self) -> Table:
        from svc_shared.dal import Table

        name = self.settings.tokens_table_name
        if not name:
            from svc_shared.config import ConfigurationError

            raise ConfigurationError("invalid configuration: TOKENS_TABLE_NAME is not set")
        return Table(name, self.aws.client("dynamodb"), pk="user_id", sk="provider")

    @staticmethod
    def _secret(arn: str) -> Callable[[], str]:
        def read() -> str:
            from svc_shared.secrets import get_secret

            if not arn:
                from svc_shared.config import ConfigurationError

                raise ConfigurationError("invalid configuration: a provider client secret ARN is not set")
            return get_secret(arn)

        return read

    @functools.cached_property
    def connections(self) -> Connections:
        from svc_shared.connections import Connections, ProviderApp
        from svc_shared.providers.db_host import DbHostOAuth
        from svc_shared.providers.repo_host import RepoHostOAuth
        from svc_shared.providers.static_host import StaticHostOAuth

        settings = self.settings
        apps = {
            "repo_host": ProviderApp(
                RepoHostOAuth(settings.repo_host_oauth_url, http=self.http),
                settings.repo_host_client_id,
                self._secret(settings.repo_host_client_secret_arn),
            ),
            "db_host": ProviderApp(
                DbHostOAuth(settings.db_host_api_url, http=self.http),
                settings.db_host_client_id,
                self._secret(settings.db_host_client_secret_arn),
            ),
            "static_host": ProviderApp(
                StaticHostOAuth(
                    settings.static_host_oauth_url, settings.static_host_token_url, http=self.http
                ),
                settings.static_host_client_id,
                self._secret(settings.static_host_client_secret_arn),
            ),
        }
        return Connections(
            self.tokens_table,
            self.envelope,
            self.accounts,
            apps,
            state_key=self.signing_key("provider-oauth-state"),
            redirect_uri=lambda: f"{self.public_base_url}/api/oauth/callback",
            clock=self.clock,
            repo_host_api=self.repo_host,
        )

    @functools.cached_property
    def projects(self) -> Projects:
        from svc_shared.projects import Projects

        return Projects(self.table, self.clock)

    @functools.cached_property
    def tool_audit(self) -> ToolAudit:
        from svc_shared.audit import ToolAudit

        return ToolAudit(self.table, self.clock)

    @functools.cached_property
    def analytics(self) -> Analytics:
        from svc_shared.analytics import Analytics

        return Analytics(self.table, self.clock)

    @functools.cached_property
    def beacon_queue(self) -> BeaconQueue:
        """The analytics queue the collect route puts beacons on."""
        from svc_shared.analytics.intake import BeaconQueue

        return BeaconQueue(lambda: self.aws.client("sqs"), self.settings.analytics_queue_url)

    @functools.cached_property
    def known_sites(self) -> KnownSites:
        """Which sites exist, as the analytics aggregator remembers them for a few minutes."""
        from svc_shared.analytics.intake import KnownSites

        return KnownSites(self.projects, self.clock)

    @functools.cached_property
    def credits(self) -> Credits:
        from svc_shared.credits import Credits

        return Credits(self.table, self.clock)

    @functools.cached_property
    def checkout(self) -> Checkout:
        from svc_shared.providers.checkout import Checkout
        from svc_shared.secrets import get_secret

        settings = self.settings
        return Checkout(
            settings.checkout_api_url, get_secret(settings.checkout_secret_key_arn), http=self.http
        )

    @functools.cached_property
    def integrations(self) -> Integrations:
        from svc_shared.integrations import Integrations

        return Integrations(
            self.projects,
            self.connections,
            self.rate_limiter,
            self.envelope,
            self.clock,
            repo_host=self.repo_host,
            db_host=self.db_host,
        )

    @functools.cached_property
    def workbench(self) -> Workbench:
        from svc_shared.providers.builder import Builder
        from svc_shared.secrets import get_secret
        from svc_shared.workbench import Workbench

        settings = self.settings
        return Workbench(
            self.table,
            self.projects,
            self.accounts,
            self.connections,
            self.clock,
            repo_host=self.repo_host,
            static_host=self.static_host,
            builder=lambda: Builder(
                settings.builder_api_url, get_secret(settings.builder_api_key_arn), http=self.http
            ),
            s3=lambda: self.aws.client("s3"),
            bucket=settings.uploads_bucket,
        )

    @functools.cached_property
    def publisher(self) -> Publisher:
        from svc_shared.publishing import Adapters, Publisher, template_root

        settings = self.settings
        adapters = Adapters(
            repo_host=self.repo_host,
            db_host=self.db_host,
            static_host=self.static_host,
        )
        crash_points = frozenset(p for p in settings.crash_points.split(",") if p)
        return Publisher(
            self.table,
            self.projects,
            self.connections,
            self.envelope,
            self.clock,
            adapters,
            template=lambda: template_root(settings.backoffice_template_dir),
            crash_points=crash_points if settings.env_name != "prod" else frozenset(),
            platform_url=lambda: self.known_base_url,
        )

    @functools.cached_property
    def provisioning(self) -> Provisioning:
        from svc_shared.provisioning import Provisioning

        return Provisioning(
            self.projects,
            self.clock,
            sfn=lambda: self.aws.client("stepfunctions"),
            state_machine_arn=self.settings.publish_state_machine_arn,
            before_launch=self.remember_public_base_url,
            metrics=self.metrics,
        )

    @functools.cached_property
    def handoff_keys(self) -> HandoffKeys:
        from svc_shared.handoff_keys import HandoffKeys

        return HandoffKeys(
            self.table,
            lambda: self.envelope,
            self.clock,
            grace_seconds=self.settings.handoff_key_grace_seconds,
        )

    @functools.cached_property
    def metrics(self) -> Metrics:
        from svc_shared.metrics import Metrics

        return Metrics(self.settings.env_name)

    @functools.cached_property
    def handoffs(self) -> Handoffs:
        from svc_shared.handoff import Handoffs

        return Handoffs(self.projects, self.accounts, self.clock, self.handoff_keys)

    @functools.cached_property
    def shops(self) -> Shops:
        from svc_shared.shops import Shops, backoffice_secret_reader

        secret = backoffice_secret_reader(
            self.settings.backoffice_secret_arn, lambda: self.aws.client("secretsmanager")
        )
        return Shops(self.projects, self.envelope, self.handoff_keys, self.clock, secret=secret)


def workspace_url(project_id: str) -> str:
    """Where the user opens a project in the workspace application (generation starts there)."""
    return f"{workspace_app_url()}/projects/{project_id}"


def billing_url() -> str:
    """The workspace's credits page, where a top-up's hosted checkout returns."""
    return f"{workspace_app_url()}/billing"


def workspace_app_url() -> str:
    """WORKSPACE_APP_URL, or the workspace pages this API serves."""
    return current().settings.workspace_app_url or f"{public_base_url()}/workspace"


class _Container:
    """The container's one Services, kept on a class rather than a module global; `wire` replaces it."""

    services: Services | None = None


def current() -> Services:
    """The container's services, wired from the environment on first use."""
    if _Container.services is None:
        _Container.services = Services()
    return _Container.services


def wire(
    *,
    settings: Settings | None = None,
    clock: Clock = system_clock,
    aws: AwsClients | None = None,
    http: HttpPool | None = None,
) -> Services:
    """Start a new wiring (tests: a fake clock, or after the environment changed); the settings are read again."""
    from svc_shared.config import reset_settings

    reset_settings()
    if _Container.services is not None:
        _Container.services.http.close()
    _Container.services = Services(settings=settings, clock=clock, aws=aws, http=http)
    return _Container.services


# Shortcuts for handlers: `services.accounts()` is `services.current().accounts`.
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
origin_policy = _shortcut(lambda s: s.origin_policy)
grants = _shortcut(lambda s: s.grants)
mcp_clients = _shortcut(lambda s: s.mcp_clients)
table = _shortcut(lambda s: s.table)
envelope = _shortcut(lambda s: s.envelope)
accounts = _shortcut(lambda s: s.accounts)
rate_limiter = _shortcut(lambda s: s.rate_limiter)
sessions = _shortcut(lambda s: s.sessions)
signin = _shortcut(lambda s: s.signin)
oauth_clients = _shortcut(lambda s: s.oauth_clients)
tokens_table = _shortcut(lambda s: s.tokens_table)
connections = _shortcut(lambda s: s.connections)
projects = _shortcut(lambda s: s.projects)
analytics = _shortcut(lambda s: s.analytics)
beacon_queue = _shortcut(lambda s: s.beacon_queue)
known_sites = _shortcut(lambda s: s.known_sites)
tool_audit = _shortcut(lambda s: s.tool_audit)
credits = _shortcut(lambda s: s.credits)
checkout = _shortcut(lambda s: s.checkout)
integrations = _shortcut(lambda s: s.integrations)
workbench = _shortcut(lambda s: s.workbench)
publisher = _shortcut(lambda s: s.publisher)
provisioning = _shortcut(lambda s: s.provisioning)
metrics = _shortcut(lambda s: s.metrics)
handoffs = _shortcut(lambda s: s.handoffs)
handoff_keys = _shortcut(lambda s: s.handoff_keys)
shops = _shortcut(lambda s: s.shops)
account_deletion = _shortcut(lambda s: s.account_deletion)


def signing_key(purpose: str) -> bytes:
    return current().signing_key(purpose)
