"""Where and how the hosted backoffice serves one shop: its public URL, its own database through the db_host's
pooler, the keys of its sessions and sealed fields, and the hand-off keys it trusts, from what publishing
recorded on the project. Kept for a minute per instance, so a warm request does no storage or KMS call."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import quote

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.config import ConfigurationError
from svc_shared.core.crypto import Envelope
from svc_shared.core.errors import NotFound
from svc_shared.domain.handoff_keys import HandoffKeys
from svc_shared.domain.projects import Project, Projects

CACHE_SECONDS = 60
MAX_CACHED = 512
# What publishing records on the project (Publisher._host_triggering_build) before a shop is served.
POOLER_FIELDS = ("db_pooler_host", "db_pooler_port", "db_pooler_user", "db_pooler_database")


@dataclass(frozen=True)
class HostedShop:
    """What svc_backoffice.hosting.shops.Shop is made of (same fields)."""

    id: str
    base_url: str
    conninfo: str = field(repr=False)
    session_key: bytes = field(repr=False)
    field_key: bytes = field(repr=False)
    handoff_public_keys: tuple[str, ...] = ()
    storefront_url: str | None = None  # the live site (CORS of the storefront API, the checkout's return)
    build_hook_url: str | None = field(default=None, repr=False)  # rebuilds the site after a catalog change


def derive_key(secret: str, purpose: str, project_id: str) -> bytes:
    """A 256-bit key of one shop for one purpose: HKDF-SHA256 of the platform's backoffice secret."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    info = f"svc-backoffice/{purpose}/{project_id}".encode()
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(secret.encode())


def conninfo(project: Project, password: str) -> str:
    """libpq URL of the shop's database through the pooler publishing recorded."""
    extra = project.extra
    # A host that is a unix socket directory (a local server) is percent-encoded, as libpq reads it.
    user, host = quote(str(extra["db_pooler_user"]), safe=""), quote(str(extra["db_pooler_host"]), safe="")
    database = quote(str(extra["db_pooler_database"]), safe="")
    return f"postgresql://{user}:{quote(password, safe='')}@{host}:{int(extra['db_pooler_port'])}/{database}"


class Shops:
    def __init__(
        self,
        projects: Projects,
        envelope: Envelope,
        handoff_keys: HandoffKeys,
        clock: Clock,
        *,
        secret: Callable[[], str],
    ) -> None:
        self._projects = projects
        self._envelope = envelope
        self._handoff_keys = handoff_keys
        self._clock = clock
        self._secret = secret  # read only when a shop is resolved, so a misconfiguration names itself then
        self._cache: dict[str, tuple[float, HostedShop]] = {}
        self._lock = threading.Lock()

    def get(self, project_id: str) -> HostedShop:
        """The shop of a published project; NotFound for an unknown project or one not published yet."""
        now = self._clock.now()
        cached = self._cache.get(project_id)
        if cached is not None and now - cached[0] < CACHE_SECONDS:
            return cached[1]
        shop = self._resolve(project_id)
        with self._lock:
            if len(self._cache) >= MAX_CACHED:
                self._cache = {k: v for k, v in self._cache.items() if now - v[0] < CACHE_SECONDS}
            self._cache[project_id] = (now, shop)
        return shop

    def _resolve(self, project_id: str) -> HostedShop:
        project = self._projects.get(project_id)
        extra = project.extra
        if not extra.get("backoffice_url") or not extra.get("db_password"):
            raise NotFound(say("shops.not_found"))
        if any(extra.get(name) in (None, "") for name in POOLER_FIELDS):
            raise NotFound(say("shops.not_found"))
        password = self._envelope.decrypt_text(
            extra["db_password"], {"project_id": project.id, "kind": "db_password"}
        )
        secret = self._secret()
        return HostedShop(
            id=project.id,
            base_url=str(extra["backoffice_url"]).rstrip("/"),
            conninfo=conninfo(project, password),
            session_key=derive_key(secret, "session", project.id),
            field_key=derive_key(secret, "fields", project.id),
            handoff_public_keys=self._handoff_keys.public_keys(),
            storefront_url=_http_url(project.live_url),
            build_hook_url=_http_url(extra.get("deploy_hook")),
        )


def _http_url(value: object) -> str | None:
    return value if isinstance(value, str) and value.startswith(("https://", "http://")) else None


def backoffice_secret_reader(arn: str, client: Callable[[], object]) -> Callable[[], str]:
    """Reads the BackofficeSecret; a stack without one says so by name instead of failing somewhere deeper."""

    def read() -> str:
        if not arn:
            raise ConfigurationError(
                "invalid configuration: BACKOFFICE_SECRET_ARN is not set (the ARN of the Secrets Manager "
                "secret the hosted backoffice derives each shop's session and field keys from)"
            )
        from svc_shared.core.secrets import get_secret

        return get_secret(arn, client())

    return read
