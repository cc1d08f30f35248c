"""Where and how the hosted backoffice serves one shop: its public URL, its own database through the db_host's
pooler, the keys of its sessions and sealed fields, and the hand-off keys it trusts, from what publishing
recorded on the project, as the backoffice's own `Shop` (svc_backoffice.core.tenancy: one type from the
gateway to the pool), with who may still be signed in to it; and the migrations each shop's database is
brought to. The project is read on every request (a deleted owner's shop stops at once, a project made
private ends its workspace members' sessions at once); the keys are kept for a minute per instance, so a
warm request does no KMS or Secrets Manager call."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from urllib.parse import quote

from svc_backoffice.core.tenancy import Shop
from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.config import ConfigurationError
from svc_shared.core.crypto import Envelope
from svc_shared.core.errors import NotFound
from svc_shared.domain.accounts import Accounts
from svc_shared.domain.handoff import INVITEE, ROLE_BY_WORKSPACE_ROLE
from svc_shared.domain.handoff_keys import HandoffKeys
from svc_shared.domain.projects import Project, Projects

CACHE_SECONDS = 60
MAX_CACHED = 512
# What publishing records on the project (PublishStages._host_triggering_build) before a shop is served.
POOLER_FIELDS = ("db_pooler_host", "db_pooler_port", "db_pooler_user", "db_pooler_database")


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
        accounts: Accounts,
        envelope: Envelope,
        handoff_keys: HandoffKeys,
        clock: Clock,
        *,
        secret: Callable[[], str],
        tree: Callable[[], Path],
    ) -> None:
        self._projects = projects
        self._accounts = accounts
        self._envelope = envelope
        self._handoff_keys = handoff_keys
        self._clock = clock
        self._secret = secret  # read only when a shop is resolved, so a misconfiguration names itself then
        self._tree = tree  # the backoffice tree this deployment publishes and hosts
        self._migrations_dir: Path | None = None
        self._cache: dict[str, tuple[float, Shop]] = {}
        self._lock = threading.Lock()

    def migrations_dir(self) -> Path:
        """The migrations of the backoffice version this deployment runs (the tree publishing pushes):
        each shop's database is brought to them when served."""
        if self._migrations_dir is None:
            from svc_shared.domain.publish_template import migrations_dir  # once per instance

            self._migrations_dir = migrations_dir(self._tree())
        return self._migrations_dir

    def get(self, project_id: str) -> Shop:
        """The shop of a published project; NotFound for an unknown project or one not published yet."""
        now = self._clock.now()
        project = self._projects.get(project_id)
        cached = self._cache.get(project_id)
        if cached is not None and now - cached[0] < CACHE_SECONDS and self._published(project):
            shop = cached[1]
        else:
            shop = self._resolve(project)
            # Before the platform's first hand-off there is no key to verify one with: kept, such a shop would
            # refuse that first hand-off for a minute (a storefront build may well be served first).
            if shop.handoff_public_keys:
                with self._lock:
                    if len(self._cache) >= MAX_CACHED:
                        self._cache = {k: v for k, v in self._cache.items() if now - v[0] < CACHE_SECONDS}
                    self._cache[project_id] = (now, shop)
        return shop.with_access(partial(self._access, project))  # the project as read for this request

    def _access(self, project: Project, account_id: str, epoch: int) -> str | None:
        """What the backoffice asks of a session on each request: the hand-off role the account would get now
        (Handoffs.sign_in_url's rule), or None when the account is gone or its sessions were ended since
        (a password change, "Sign out everywhere", deletion)."""
        try:
            user = self._accounts.get_user(account_id)
        except NotFound:
            return None
        if user.session_epoch != epoch:
            return None
        seen_as = self._projects.visible_to(user, project, self._accounts)
        return ROLE_BY_WORKSPACE_ROLE[seen_as] if seen_as is not None else INVITEE

    def absent(self, project_id: str, base_url: str) -> Shop:
        """The shop at `base_url` of a project that is unknown or not published: its sign-in pages answer as a
        shop that has invited nobody (svc_shared.routes.shops), with the platform's hand-off keys."""
        secret = self._secret()
        return Shop(
            id=project_id,
            base_url=base_url,
            conninfo="",
            session_key=derive_key(secret, "session", project_id),
            field_key=derive_key(secret, "fields", project_id),
            handoff_public_keys=self._handoff_keys.public_keys(),
            absent=True,
        )

    @staticmethod
    def _published(project: Project) -> bool:
        extra = project.extra
        return bool(extra.get("backoffice_url") and extra.get("db_password")) and all(
            extra.get(name) not in (None, "") for name in POOLER_FIELDS
        )

    def _resolve(self, project: Project) -> Shop:
        extra = project.extra
        if not self._published(project):
            raise NotFound(say("shops.not_found"))
        password = self._envelope.decrypt_text(
            extra["db_password"], {"project_id": project.id, "kind": "db_password"}
        )
        secret = self._secret()
        return Shop(
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
