"""The container's infrastructure, what every domain service is built from: the settings, the clock, the AWS
clients, the HTTP pool, the tables, the envelope, the signing keys, the public base URL, and the provider apps
and adapters, and where the container's one Services is held. svc_shared.wiring.services builds the domain services
from it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from svc_shared.core.aws import AwsClients
from svc_shared.core.clock import Clock, system_clock
from svc_shared.core.config import Settings, get_settings
from svc_shared.providers.http import HttpPool
from svc_shared.wiring import baseurl

if TYPE_CHECKING:
    from svc_shared.core.crypto import Envelope
    from svc_shared.domain.connections import ProviderApp
    from svc_shared.providers.db_host import DbHost
    from svc_shared.providers.repo_host import RepoHost
    from svc_shared.providers.static_host import StaticHost
    from svc_shared.storage.dal import Table

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
        self._built: dict[object, Any] = {}  # the domain services built so far (see Service)

    # The public base URL: PUBLIC_BASE_URL when set (a custom domain); otherwise the one API Gateway names in
    # the request being served (svc_shared.wiring.baseurl); otherwise, where no request reaches (the publish steps),
    # the one remembered in the table when a publish was started or someone signed in.
    @property
    def public_base_url(self) -> str:
        url = self.known_base_url
        if not url:
            from svc_shared.core.config import ConfigurationError

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
        from svc_shared.core.config import is_loopback_url

        return not is_loopback_url(self.public_base_url)

    # The provider apps (OAuth clients) connections go through, and the adapters for a user's token, on the
    # container's HTTP pool.
    def provider_apps(self) -> dict[str, ProviderApp]:
        from svc_shared.domain.connections import ProviderApp
        from svc_shared.providers.db_host import DbHostOAuth
        from svc_shared.providers.repo_host import RepoHostOAuth
        from svc_shared.providers.static_host import StaticHostOAuth

        settings, http = self.settings, self.http
        return {
            "repo_host": ProviderApp(
                RepoHostOAuth(settings.repo_host_oauth_url, http=http),
                settings.repo_host_client_id,
                _secret(settings.repo_host_client_secret_arn),
            ),
            "db_host": ProviderApp(
                DbHostOAuth(settings.db_host_api_url, http=http),
                settings.db_host_client_id,
                _secret(settings.db_host_client_secret_arn),
            ),
            "static_host": ProviderApp(
                StaticHostOAuth(settings.static_host_oauth_url, settings.static_host_token_url, http=http),
                settings.static_host_client_id,
                _secret(settings.static_host_client_secret_arn),
            ),
        }

    def repo_host(self, token: str) -> RepoHost:
        from svc_shared.providers.repo_host import RepoHost

        return RepoHost(self.settings.repo_host_api_url, token, http=self.http)

    def db_host(self, token: str) -> DbHost:
        from svc_shared.providers.db_host import DbHost

        return DbHost(self.settings.db_host_api_url, token, http=self.http)

    def static_host(self, token: str) -> StaticHost:
        from svc_shared.providers.static_host import StaticHost

        return StaticHost(self.settings.static_host_api_url, token, http=self.http)

    def backoffice_tree(self) -> Path:
        """The backoffice tree this deployment publishes and hosts: BACKOFFICE_TEMPLATE_DIR, the repository's
        backoffice/ in development, or the copy `make build` bundles into the layer."""
        from svc_shared.domain.publish_template import template_root

        return template_root(self.settings.backoffice_template_dir)

    @property
    def settings(self) -> Settings:
        """Validated from the environment on first use, unless wired in."""
        if self._settings is None:
            self._settings = get_settings()
        return self._settings

    @functools.cached_property
    def table(self) -> Table:
        from svc_shared.storage.dal import Table

        return Table(self.settings.table_name, self.aws.client("dynamodb"))

    @functools.cached_property
    def envelope(self) -> Envelope:
        import base64

        from svc_shared.core.crypto import Envelope, KmsKeyProvider, LocalKeyProvider

        settings = self.settings
        if settings.local_master_key:
            return Envelope(LocalKeyProvider(base64.b64decode(settings.local_master_key)))
        assert settings.kms_key_id is not None
        return Envelope(KmsKeyProvider(settings.kms_key_id, self.aws.client("kms")))

    def signing_key(self, purpose: str) -> bytes:
        """A key for one kind of signed value, derived from the session secret."""
        if purpose not in self._signing_keys:
            from svc_shared.core.secrets import derived_key

            self._signing_keys[purpose] = derived_key(
                self.settings.session_secret_arn, purpose, self.aws.client("secretsmanager")
            )
        return self._signing_keys[purpose]

    @functools.cached_property
    def tokens_table(self) -> Table:
        from svc_shared.storage.dal import Table

        name = self.settings.tokens_table_name
        if not name:
            from svc_shared.core.config import ConfigurationError

            raise ConfigurationError("invalid configuration: TOKENS_TABLE_NAME is not set")
        return Table(name, self.aws.client("dynamodb"), pk="user_id", sk="provider")

    def built(self, key: object, build: Callable[[Services], Built]) -> Built:
        """The domain service under `key`, built by `build` on first use (see Service)."""
        if key not in self._built:
            self._built[key] = build(self)
        return cast(Built, self._built[key])


class ServicesHolder(Protocol):
    """Where the container's one Services is kept (`services.current` reads it, `services.wire` replaces it)."""

    @property
    def services(self) -> Services | None: ...

    @services.setter
    def services(self, value: Services | None) -> None: ...


class _OneServices:
    """The holder of a container on AWS: one Services for the one function the container runs."""

    services: Services | None = None


class _Holder:
    """The holder in use, kept on a class rather than a module global; `hold_services_in` swaps it."""

    holder: ServicesHolder = _OneServices()


def services_holder() -> ServicesHolder:
    return _Holder.holder


def current() -> Services:
    """The container's services, wired from the environment on first use (in the holder in use)."""
    if _Holder.holder.services is None:
        _Holder.holder.services = Services()
    return _Holder.holder.services


def hold_services_in(holder: ServicesHolder) -> ServicesHolder:
    """Keep the container's Services in `holder` from now on; returns the holder it replaces (to put back).
    The local stack runs every function in one process and gives each one its own Services this way."""
    previous, _Holder.holder = _Holder.holder, holder
    return previous


def _secret(arn: str) -> Callable[[], str]:
    """A provider app's client secret, read when first needed."""

    def read() -> str:
        from svc_shared.core.secrets import get_secret

        if not arn:
            from svc_shared.core.config import ConfigurationError

            raise ConfigurationError("invalid configuration: a provider client secret ARN is not set")
        return get_secret(arn)

    return read
