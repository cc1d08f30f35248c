"""The public base URL of the API when PUBLIC_BASE_URL is empty (a stack deployed without a custom domain):
read from the request API Gateway hands the function, and remembered in the table for the functions that
no request reaches (the publish steps).

What is trusted: `requestContext.domainName` (with `requestContext.stage`), which API Gateway sets to the
domain the API is served on; it routes by that domain, so a request whose Host names anything else never
reaches this API. The Host and X-Forwarded-* headers, which a client writes, are never read here. Only the
local gateway serves loopback addresses, which are the only ones given plain http.
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from svc_shared.storage.dal import Table

# A host name (or IPv4 address) with an optional port, as API Gateway writes domainName; [::1] locally.
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_DOMAIN = re.compile(rf"(?:{_LABEL}(?:\.{_LABEL})*\.?|\[::1\])(?::\d{{1,5}})?")
_MAX_DOMAIN = 253 + 6
_STAGE = re.compile(r"[A-Za-z0-9_-]{1,128}")
_LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "[::1]"}
DEFAULT_STAGE = "$default"  # an HTTP API's default stage, served at the root of its URL

_request_base_url: ContextVar[str | None] = ContextVar("svc_request_base_url", default=None)


def from_event(event: Any) -> str | None:
    """The base URL clients used for this request, from API Gateway's request context; None when the event
    names no usable domain (a direct invocation, a test event without one)."""
    context = event.get("requestContext") if isinstance(event, dict) else None
    if not isinstance(context, dict):
        return None
    domain = context.get("domainName")
    if not isinstance(domain, str) or len(domain) > _MAX_DOMAIN or not _DOMAIN.fullmatch(domain):
        return None
    domain = domain.lower().rstrip(".")
    host = domain.rsplit(":", 1)[0] if not domain.endswith("]") else domain
    scheme = "http" if host in _LOOPBACK_HOSTS else "https"
    path = ""
    stage = context.get("stage")
    # A REST API's stage is a path segment of its execute-api URL (a custom domain maps it away); an HTTP
    # API's $default stage is served at the root.
    if (
        ".execute-api." in domain
        and isinstance(stage, str)
        and stage != DEFAULT_STAGE
        and _STAGE.fullmatch(stage)
    ):
        path = f"/{stage}"
    return f"{scheme}://{domain}{path}"


def bind(event: Any) -> str | None:
    """Make this request's base URL the current one (until the next request); returns it."""
    url = from_event(event)
    _request_base_url.set(url)
    return url


def current() -> str | None:
    """The base URL of the request being served, if any."""
    return _request_base_url.get()


class RecordedBaseUrl:
    """The base URL remembered in the table: written when a publish is started and at sign-in (the moments
    that come before any publish step), read by the functions no request reaches. One write per container
    and URL; a read per container until it finds one."""

    def __init__(self, table: Table) -> None:
        self._table = table
        self._written: str | None = None
        self._read: str | None = None

    def remember(self, url: str) -> None:
        if url == self._written:
            return
        from contextlib import suppress

        from svc_shared.storage import keys
        from svc_shared.storage.dal import ConditionFailed, attr, item_absent

        # The condition keeps the common case (already there, unchanged) from rewriting the item.
        with suppress(ConditionFailed):
            self._table.put(
                {"pk": keys.CONFIG, "sk": keys.PUBLIC_BASE_URL, "url": url},
                when=item_absent() | attr("url").ne(url),
            )
        self._written = self._read = url

    def get(self) -> str | None:
        if self._read is None:
            from svc_shared.storage import keys

            item = self._table.get(keys.CONFIG, keys.PUBLIC_BASE_URL, consistent=True)
            url = item.get("url") if item else None
            self._read = url if isinstance(url, str) and url else None
        return self._read
