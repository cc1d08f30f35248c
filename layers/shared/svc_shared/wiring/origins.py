"""One Host/Origin policy for the endpoints MCP clients call (/mcp, the discovery documents, /oauth/register,
/oauth/token): the same list decides a CORS preflight and the request that follows it.

- Host: the public host only (loopback aliases of it in local runs), against DNS rebinding.
- Origin: absent (a client that is not a browser), the public origin itself, or one of the configured
  browser origins (`ALLOWED_ORIGINS`; the local stack allows the MCP Inspector's http://localhost:6274).
  An allowed cross-origin request gets its origin echoed (never `*`), so a browser may read the answer; any
  other origin is refused before the request does anything.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from svc_shared.core.catalogue import say
from svc_shared.core.config import is_loopback_url

ALLOW_HEADERS = (
    "Authorization,Content-Type,MCP-Protocol-Version,Mcp-Method,Mcp-Name,Mcp-Session-Id,Last-Event-ID"
)
EXPOSE_HEADERS = "WWW-Authenticate,Retry-After,Mcp-Session-Id"
MAX_AGE = "86400"
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def normalize_origin(origin: str) -> str | None:
    """`scheme://host[:port]` in lower case with the default port dropped, or None if it is not an origin."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
        return None
    if parts.query or parts.fragment or parts.username or parts.password:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    default = 443 if parts.scheme == "https" else 80
    return f"{parts.scheme}://{host}" + (f":{port}" if port not in (None, default) else "")


class OriginPolicy:
    def __init__(self, public_base_url: str, allowed_origins: tuple[str, ...] = ()) -> None:
        public = urlsplit(public_base_url)
        hosts = {public.netloc.lower()}
        own = normalize_origin(f"{public.scheme}://{public.netloc}")
        origins = {own} if own else set()
        if is_loopback_url(public_base_url):
            # Local runs: the same gateway answers on every loopback name.
            hosts |= {f"{name}:{public.port}" if public.port else name for name in _LOOPBACK_NAMES}
            origins |= {f"http://{host}" for host in hosts}
        self.public_origin = own
        self._hosts = frozenset(hosts)
        self._origins = frozenset(
            origins | {o for o in (normalize_origin(a) for a in allowed_origins if a.strip()) if o}
        )

    def host_allowed(self, host: str | None) -> bool:
        return (host or "").strip().lower() in self._hosts

    def origin_allowed(self, origin: str | None) -> bool:
        """No Origin (not a browser) or an allowed one; `null` and malformed origins are refused."""
        if origin is None:
            return True
        return normalize_origin(origin) in self._origins

    def cors_headers(self, origin: str | None) -> dict[str, str]:
        """The headers that let a browser at an allowed origin read the answer; none for anyone else."""
        if origin is None or not self.origin_allowed(origin):
            return {}
        return {
            "Access-Control-Allow-Origin": origin.strip(),
            "Access-Control-Expose-Headers": EXPOSE_HEADERS,
            "Vary": "Origin",
        }

    def preflight_headers(self, origin: str | None, methods: str) -> dict[str, str]:
        return {
            **self.cors_headers(origin),
            "Access-Control-Allow-Methods": methods,
            "Access-Control-Allow-Headers": ALLOW_HEADERS,
            "Access-Control-Max-Age": MAX_AGE,
        }


def refused_origin_message(origin: str) -> str:
    return say("origins.refused", origin=repr(origin[:100]))


def cross_site_reason(headers: dict[str, str], own_origin: str | None) -> str | None:
    """Why a state-changing request riding a session cookie must be refused as cross-site, or None.

    `headers` are lower-cased. A browser always sends `Sec-Fetch-Site` (current browsers) or `Origin` (every
    browser, on every POST) with a cross-site or same-site write, so:
    - `Sec-Fetch-Site`, when sent, must be `same-origin`;
    - `Origin`, when sent, must be `own_origin`; `null` (what a page with `Referrer-Policy: no-referrer` or a
      sandboxed frame sends) passes only with `Sec-Fetch-Site: same-origin`;
    - neither header: a client that is not a browser (curl, the tests), which no other site can drive.
    """
    site = headers.get("sec-fetch-site")
    origin = headers.get("origin")
    if site is not None and site.strip().lower() != "same-origin":
        return f"Sec-Fetch-Site is {site.strip()[:40]!r}"
    if origin is None:
        return None
    if origin.strip().lower() == "null":
        return None if site is not None else "Origin is 'null'"
    if own_origin is None or normalize_origin(origin) != own_origin:
        return f"Origin {origin.strip()[:100]!r} is not this site's"
    return None
