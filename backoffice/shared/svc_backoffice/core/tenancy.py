"""Which shop this request serves. Self-hosted (the merchant's own deployment of template.yaml) there is one
shop, described by the environment, and no current Shop. Hosted (one platform deployment serving every
published shop under `{PUBLIC_BASE_URL}/shops/{project_id}`), `hosting.handle` makes the request's Shop
current; the modules that hold something per shop (database, session key, hand-off keys and audience,
field-sealing key, the paths the backoffice emits) read it from here. Imports nothing of ours."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar
from urllib.parse import urlsplit

T = TypeVar("T")
SESSION_KEY_MIN_BYTES = 32
FIELD_KEY_BYTES = 32


@dataclass(frozen=True)
class Shop:
    id: str  # the platform's project id
    base_url: str  # public base URL of this shop's backoffice, no trailing slash (https://api.example.com/shops/p_abc)
    conninfo: str = field(repr=False)  # libpq URL of the shop's own database
    session_key: bytes = field(repr=False)  # >= 32 bytes: signs this shop's svc_session cookies
    field_key: bytes = field(repr=False)  # 32 bytes: seals this shop's write-only secrets (AES-GCM)
    handoff_public_keys: tuple[str, ...] = ()  # PEM public keys that verify hand-offs now (current first)
    storefront_url: str | None = None  # the live storefront (the site host's URL): its origin alone gets CORS
    build_hook_url: str | None = field(default=None, repr=False)  # POSTed to rebuild the storefront site
    # (platform account id, its session epoch at sign-in) -> the access the account has to this shop now: a
    # hand-off role (owner, admin, editor; `invitee` when no workspace role), or None when the account is
    # gone or its sessions were ended. Asked on every request of a session (svc_backoffice.access.auth).
    account_access: Callable[[str, int], str | None] | None = field(default=None, repr=False, compare=False)
    # A shop that is not there (an unknown or unpublished project), served only its sign-in pages: they answer
    # as a shop that has invited nobody, with no database (svc_shared.routes.shops).
    absent: bool = False

    def __post_init__(self) -> None:
        # The platform builds these; a wrong one is its bug, said here rather than as a strange answer later.
        parts = urlsplit(self.base_url)
        if not self.id or not (self.conninfo or self.absent):
            raise ValueError("a Shop needs an id and a conninfo")
        if parts.scheme not in ("https", "http") or not parts.netloc or self.base_url.endswith("/"):
            raise ValueError(
                f"shop {self.id}: base_url must be an absolute http(s) URL without a trailing slash"
            )
        if parts.query or parts.fragment:
            raise ValueError(f"shop {self.id}: base_url must not have a query or fragment")
        if len(self.session_key) < SESSION_KEY_MIN_BYTES:
            raise ValueError(f"shop {self.id}: session_key must be at least {SESSION_KEY_MIN_BYTES} bytes")
        if len(self.field_key) != FIELD_KEY_BYTES:
            raise ValueError(f"shop {self.id}: field_key must be {FIELD_KEY_BYTES} bytes")
        for name in ("storefront_url", "build_hook_url"):
            value = getattr(self, name)
            if value is not None and urlsplit(value).scheme not in ("https", "http"):
                raise ValueError(f"shop {self.id}: {name} must be an absolute http(s) URL")
        if isinstance(self.handoff_public_keys, str):
            raise ValueError(f"shop {self.id}: handoff_public_keys is a tuple of PEM strings")

    def with_access(self, access: Callable[[str, int], str | None]) -> Shop:
        """This shop asking `access` of each session: a copy with only that field changed, not checked again
        (the platform attaches it per request to a Shop it checked when it built it)."""
        shop = copy.copy(self)  # the fields as they are, without __init__ and its checks
        object.__setattr__(shop, "account_access", access)
        return shop

    @cached_property
    def base_path(self) -> str:
        """The path of base_url (`/shops/p_abc`): every path the shop's backoffice emits starts with it."""
        return urlsplit(self.base_url).path

    @cached_property
    def secure(self) -> bool:
        """Cookies are Secure unless the shop is served over plain HTTP (a local stack)."""
        return urlsplit(self.base_url).scheme == "https"


_shop: ContextVar[Shop | None] = ContextVar("svc_backoffice_shop", default=None)


def current_shop() -> Shop | None:
    """The Shop this request serves when hosted; None in a self-hosted deployment."""
    return _shop.get()


@contextmanager
def bound(var: ContextVar[T], value: T) -> Iterator[T]:
    """`var` set to `value` for the duration of the block, restored afterwards even on errors."""
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)


def serving(shop: Shop) -> AbstractContextManager[Shop | None]:
    """Make `shop` current for the duration of the block, restored afterwards even on errors."""
    return bound(_shop, shop)


def path(local: str) -> str:
    """A path of this backoffice (`/auth/signed-out`) as the browser must ask for it: under the shop's base
    path when hosted, as it is when self-hosted."""
    shop = _shop.get()
    return shop.base_path + local if shop is not None else local


def cookie_path() -> str:
    """The Path of the session cookie: the shop's base path, so a browser never sends one shop's cookie to
    another; `/` self-hosted."""
    shop = _shop.get()
    return shop.base_path if shop is not None and shop.base_path else "/"
