"""Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, the MCP spec's preferred way for a
client to identify itself): the client_id is an https URL, and the document served there is the client's
registration. This module decides whether a client_id is such a URL, fetches the document safely and checks it.

The fetch is a request an anonymous party makes this server send to a URL of its choosing, so it is guarded as
such (server-side request forgery): https only; every address the host name resolves to must be public (no
private, loopback, link-local, shared or reserved ranges), and the connection goes to the address that was
checked (the TLS name stays the host's, so the certificate is verified for it); no proxy from the environment;
no redirects; a short timeout and a size cap. Local mode (`CIMD_ALLOW_LOOPBACK`) also allows loopback
addresses, over http or https, so a developer's client and the conformance suite can serve a document from
their own machine.
"""

from __future__ import annotations

import concurrent.futures
import ipaddress
import re
import socket
import ssl
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from svc_shared.core import jsonlimit
from svc_shared.core.catalogue import say
from svc_shared.core.logs import get_logger

logger = get_logger()

MAX_URL_LENGTH = 500  # the client_id travels inside every access token; claude.ai's is 48 characters
MAX_DOCUMENT_BYTES = 5 * 1024  # the draft's suggested limit
FETCH_TIMEOUT = 3.0  # seconds, for connecting and for the whole answer
DEFAULT_TTL = 300  # seconds a document without caching headers is reused
MAX_TTL = 24 * 3600
FAILURE_TTL = 30  # seconds a failed fetch is remembered by this instance, so a bad URL is not hammered
MEMORY_ENTRIES = 256
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


class DocumentError(Exception):
    """The client_id is a metadata document URL that cannot be used; `reason` is shown to a signed-in person
    (it names what to fix, in words chosen here: never the URL, its host or anything the document said, nor
    anything about this server's network)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(reason)
        self.url = url
        self.reason = reason

    @property
    def message(self) -> str:
        # The URL came from the request's query: the page never repeats it (a link could carry any words).
        return say("client_document.unusable", reason=self.reason)


@dataclass(frozen=True)
class Document:
    """A fetched document, checked against its URL, and how long it may be reused."""

    url: str
    body: dict[str, Any]
    fresh_until: float


def looks_like_document_url(client_id: object) -> bool:
    """Whether a client_id names a metadata document (rather than a registered client's random id)."""
    return isinstance(client_id, str) and client_id.startswith(("https://", "http://"))


def check_url(url: str, *, allow_loopback: bool) -> None:
    """The draft's rules for a client_id URL (§3), before anything is fetched."""
    if len(url) > MAX_URL_LENGTH:
        raise DocumentError(url[:60] + "…", say("client_document.url_too_long", max_length=MAX_URL_LENGTH))
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise DocumentError(url, say("client_document.not_a_url")) from None
    host = (parts.hostname or "").lower()
    if parts.scheme != "https" and not (allow_loopback and parts.scheme == "http" and host in LOOPBACK_NAMES):
        raise DocumentError(url, say("client_document.not_https"))
    if not host or parts.username is not None or parts.password is not None:
        raise DocumentError(url, say("client_document.no_host"))
    if parts.fragment or "#" in url:
        raise DocumentError(url, say("client_document.fragment"))
    segments = parts.path.split("/")
    if not parts.path.strip("/") or any(s in (".", "..") for s in segments):
        raise DocumentError(url, say("client_document.bad_path"))
    if any(ch.isspace() or ord(ch) < 32 for ch in url) or (port is not None and port == 0):
        raise DocumentError(url, say("client_document.not_a_url"))


def address_allowed(address: str, *, allow_loopback: bool) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if allow_loopback and ip.is_loopback:
        return True
    return ip.is_global and not ip.is_multicast


_MAX_AGE = re.compile(r"(?:^|,)\s*(?:s-maxage|max-age)\s*=\s*\"?(\d+)", re.IGNORECASE)


def cache_seconds(cache_control: str | None) -> int:
    """How long a document may be reused, by its Cache-Control (RFC 9111): no-store or no-cache mean not
    beyond this request; max-age (or s-maxage) that long, capped at a day; otherwise the default."""
    if not cache_control:
        return DEFAULT_TTL
    directives = cache_control.lower()
    if any(word in directives for word in ("no-store", "no-cache")):
        return 0
    found = _MAX_AGE.search(directives)
    if found:
        return min(int(found.group(1)), MAX_TTL)
    return DEFAULT_TTL


class DocumentFetcher:
    """Fetches documents over the guarded path above. One per container; each fetch opens its own connection
    (a pooled one could carry a TLS session made for another host name that resolved to the same address)."""

    def __init__(
        self,
        *,
        allow_loopback: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.allow_loopback = allow_loopback
        self._clock = clock
        self._tls: ssl.SSLContext | None = None
        self._dns: concurrent.futures.ThreadPoolExecutor | None = None

    def _resolve(self, host: str, port: int) -> list[str]:
        """The addresses of `host`, or none if it cannot be resolved within the fetch timeout (getaddrinfo
        has no timeout of its own, so it runs on a helper thread that is left to finish by itself)."""
        if self._dns is None:
            self._dns = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="cimd-dns")
        lookup = self._dns.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
        try:
            infos = lookup.result(timeout=FETCH_TIMEOUT)
        except (OSError, UnicodeError, concurrent.futures.TimeoutError):
            return []
        return list(dict.fromkeys(str(info[4][0]) for info in infos))

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            import certifi

            context = ssl.create_default_context(cafile=certifi.where())
            context.load_default_certs()  # the system store too (and SSL_CERT_FILE, as OpenSSL reads it)
            self._tls = context
        return self._tls

    def fetch(self, url: str) -> Document:
        check_url(url, allow_loopback=self.allow_loopback)
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = self._resolve(host, port)
        if not addresses:
            raise DocumentError(url, say("client_document.unresolved"))
        if not all(address_allowed(a, allow_loopback=self.allow_loopback) for a in addresses):
            raise DocumentError(url, say("client_document.not_public"))
        address = addresses[0]
        literal = f"[{address}]" if ":" in address else address
        target = f"{parts.scheme}://{literal}:{port}{parts.path}" + (f"?{parts.query}" if parts.query else "")
        host_header = parts.netloc.rsplit("@", 1)[-1]
        return self._get(url, target, host_header, host)

    def _get(self, url: str, target: str, host_header: str, host: str) -> Document:
        import httpx

        started = time.monotonic()
        extensions = {"sni_hostname": host} if target.startswith("https://") else {}
        headers = {"Host": host_header, "Accept": "application/json", "User-Agent": "svc-oauth/1"}
        try:
            with (
                httpx.Client(
                    verify=self._tls_context(),
                    trust_env=False,
                    follow_redirects=False,
                    timeout=httpx.Timeout(FETCH_TIMEOUT),
                ) as client,
                client.stream("GET", target, headers=headers, extensions=extensions) as answer,
            ):
                if 300 <= answer.status_code < 400:
                    raise DocumentError(url, say("client_document.redirected"))
                if answer.status_code != 200:
                    raise DocumentError(url, say("client_document.http_status", status=answer.status_code))
                declared = answer.headers.get("content-length")
                if declared and declared.isdecimal() and int(declared) > MAX_DOCUMENT_BYTES:
                    raise DocumentError(url, say("client_document.too_large", max_bytes=MAX_DOCUMENT_BYTES))
                body = bytearray()
                for chunk in answer.iter_bytes():
                    body += chunk
                    if len(body) > MAX_DOCUMENT_BYTES:
                        raise DocumentError(
                            url, say("client_document.too_large", max_bytes=MAX_DOCUMENT_BYTES)
                        )
                    if time.monotonic() - started > FETCH_TIMEOUT:
                        raise DocumentError(url, say("client_document.timeout"))
                ttl = cache_seconds(answer.headers.get("cache-control"))
        except httpx.TimeoutException:
            raise DocumentError(url, say("client_document.timeout")) from None
        except httpx.HTTPError as exc:
            logger.info(
                "client metadata document fetch failed", extra={"url": url, "error": type(exc).__name__}
            )
            raise DocumentError(url, say("client_document.unverified")) from None
        try:
            document = jsonlimit.loads(bytes(body))
        except jsonlimit.TooDeep:
            raise DocumentError(url, say("client_document.too_deep", problem=jsonlimit.too_deep())) from None
        except (UnicodeDecodeError, ValueError):
            raise DocumentError(url, say("client_document.not_json")) from None
        if not isinstance(document, dict):
            raise DocumentError(url, say("client_document.not_object"))
        return Document(url=url, body=document, fresh_until=self._clock() + ttl)


class DocumentCache:
    """The bounded per-instance memory in front of the fetcher: checked documents until they go stale, and
    failures for a short while."""

    def __init__(self, clock: Callable[[], float], entries: int = MEMORY_ENTRIES) -> None:
        self._clock = clock
        self._entries = entries
        self._items: OrderedDict[str, tuple[float, Any]] = OrderedDict()

    def get(self, url: str) -> Any:
        found = self._items.get(url)
        if found is None:
            return None
        until, value = found
        if until <= self._clock():
            del self._items[url]
            return None
        self._items.move_to_end(url)
        return value

    def put(self, url: str, value: Any, until: float) -> None:
        if until <= self._clock():
            self._items.pop(url, None)
            return
        self._items[url] = (until, value)
        self._items.move_to_end(url)
        while len(self._items) > self._entries:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)
