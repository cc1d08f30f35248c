"""The live sites: each site's published deploy served at /sites/{name}/ with content types, pretty URLs,
its redirect and rewrite rules (a proxy rule fetches from its origin and keeps the answer as a CDN does, for
the origin's s-maxage, revalidating with its ETag) and its 404 page."""

from __future__ import annotations

import mimetypes
import re
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from svc_local.providers.common import html
from svc_local.providers.netlify.redirects import Rule
from svc_local.sandbox import SandboxRequest, SandboxResponse

NOT_FOUND = "<h1>Page not found</h1><p>Looks like you followed a broken link or entered a URL that doesn't exist on this site.</p>"
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".webp": "image/webp",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
    ".xml": "application/xml",
    ".woff2": "font/woff2",
}
# What a proxy does not pass on to the origin (the rest of the request's headers go, as on the real host).
_HOP = {
    "host",
    "connection",
    "keep-alive",
    "content-length",
    "transfer-encoding",
    "te",
    "upgrade",
    "proxy-authorization",
}
_PASS_BACK = ("content-type", "cache-control", "etag", "last-modified", "location", "vary", "retry-after")
_SMAXAGE = re.compile(r"(?:^|,)\s*s-maxage=(\d+)")
_MAXAGE = re.compile(r"(?:^|,)\s*max-age=(\d+)")


def content_type(path: Path) -> str:
    return TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"


MAX_KEPT_FILE = 1024 * 1024  # files up to this size are kept in memory once read


class LiveDeploy:
    """A published deploy as the edge serves it: its files, listed once (a deploy's files never change after
    its build, as on the real host) and read once each, and its redirect rules."""

    def __init__(self, root: Path, rules: list[Rule]) -> None:
        self.root = root
        self.rules = rules
        self.files = frozenset(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
        self._bodies: dict[str, bytes] = {}

    def find(self, path: str) -> str | None:
        """The file a path names in the publish directory: itself, its index.html, or path.html (pretty
        URLs); its path relative to the deploy's root."""
        parts = [part for part in path.split("/") if part]
        if any(part in ("..", ".") for part in parts):
            return None
        relative = "/".join(parts)
        if not relative:
            return "index.html" if "index.html" in self.files else None
        for candidate in (relative, relative + "/index.html", relative + ".html"):
            if candidate in self.files:
                return candidate
        return None

    def answer(self, relative: str, status: int) -> SandboxResponse:
        body = self._bodies.get(relative)
        if body is None:
            body = (self.root / relative).read_bytes()
            if len(body) <= MAX_KEPT_FILE:
                self._bodies[relative] = body
        kind = content_type(Path(relative))
        return SandboxResponse(
            status, body, {"Content-Type": kind, "Cache-Control": "public, max-age=0, must-revalidate"}
        )


@dataclass
class _Cached:
    status: int
    body: bytes
    headers: dict[str, str]  # the origin's, lower-case names
    stored_at: float
    ttl: float
    sent: dict[str, str] = field(init=False)  # the origin's headers as the edge passes them on

    def __post_init__(self) -> None:
        self.sent = {k.title(): v for k, v in self.headers.items()}


def _ttl(cache_control: str) -> float | None:
    """How long a shared cache keeps an answer: s-maxage, else a public max-age; None: not stored."""
    value = cache_control.lower()
    if any(word in value for word in ("private", "no-store", "no-cache")):
        return None
    found = _SMAXAGE.search(value) or (_MAXAGE.search(value) if "public" in value else None)
    return float(found.group(1)) if found else None


class EdgeCache:
    """Proxy answers kept per upstream URL (GET only), as the host's CDN keeps them."""

    def __init__(self) -> None:
        self._entries: dict[str, _Cached] = {}
        self._lock = threading.Lock()
        self.origin_requests = 0

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def fetch(self, request: SandboxRequest, url: str) -> SandboxResponse:
        cacheable = request.method in ("GET", "HEAD") and "authorization" not in request.headers
        with self._lock:
            entry = self._entries.get(url) if cacheable else None
        age = time.time() - entry.stored_at if entry else 0.0
        if entry is not None and age < entry.ttl:
            return self._answer(request, entry, "hit", age)
        headers = {k: v for k, v in request.headers.items() if k not in _HOP}
        if entry is not None:  # stale: revalidate with the origin's validators
            headers.pop("if-none-match", None)
            headers.pop("if-modified-since", None)
            if "etag" in entry.headers:
                headers["If-None-Match"] = entry.headers["etag"]
            if "last-modified" in entry.headers:
                headers["If-Modified-Since"] = entry.headers["last-modified"]
        status, body, answer_headers = self._upstream(request, url, headers)
        if entry is not None and status == 304:
            kept = _ttl(answer_headers.get("cache-control", "")) or entry.ttl
            entry = _Cached(entry.status, entry.body, {**entry.headers, **answer_headers}, time.time(), kept)
            with self._lock:
                self._entries[url] = entry
            return self._answer(request, entry, "revalidated", 0.0)
        fresh = _Cached(status, body, answer_headers, time.time(), 0.0)
        ttl = _ttl(answer_headers.get("cache-control", "")) if cacheable and status == 200 else None
        if ttl:
            fresh.ttl = ttl
            with self._lock:
                self._entries[url] = fresh
        return self._answer(request, fresh, "miss", 0.0)

    def _upstream(
        self, request: SandboxRequest, url: str, headers: dict[str, str]
    ) -> tuple[int, bytes, dict[str, str]]:
        self.origin_requests += 1
        outgoing = urllib.request.Request(  # noqa: S310 - the site's own proxy rule (http or https)
            url,
            data=request.body if request.method not in ("GET", "HEAD") else None,
            method=request.method,
            headers={
                **headers,
                "X-Forwarded-Host": request.headers.get("host", ""),
                "Accept-Encoding": "identity",
            },
        )
        try:
            with urllib.request.urlopen(outgoing, timeout=30) as answer:  # noqa: S310 - see above
                return answer.status, answer.read(), _kept(answer.headers.items())
        except urllib.error.HTTPError as failed:
            return failed.code, failed.read(), _kept(failed.headers.items())
        except (urllib.error.URLError, OSError, TimeoutError):
            return (
                502,
                b'{"error": "The site\'s backend could not be reached."}',
                {"content-type": "application/json"},
            )

    @staticmethod
    def _answer(request: SandboxRequest, entry: _Cached, outcome: str, age: float) -> SandboxResponse:
        headers = dict(entry.sent)
        headers["Cache-Status"] = f'"Netlify Edge"; {"hit" if outcome == "hit" else "fwd=" + outcome}'
        headers["Age"] = str(int(age))
        tag = entry.headers.get("etag")
        if entry.status == 200 and tag and request.headers.get("if-none-match") == tag:
            return SandboxResponse(304, b"", {k: v for k, v in headers.items() if k != "Content-Type"})
        return SandboxResponse(entry.status, entry.body, headers)


def _kept(items: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in items if k.lower() in _PASS_BACK}


def serve_deploy(request: SandboxRequest, live: LiveDeploy, base: str, cache: EdgeCache) -> SandboxResponse:
    """Answer `request` for the site path `/{path}` from a deploy's files and rules (`base`: the site's
    prefix on the sandbox, for redirects to site paths)."""
    path = "/" + request.params.get("path", "").lstrip("/")
    found = live.find(path)
    for rule in live.rules:
        target = rule.match(path)
        if target is None or (found is not None and not rule.force):
            continue
        if rule.proxy:
            query = urlencode([(k, v) for k, vs in request.query.items() for v in vs])
            return cache.fetch(request, f"{target}?{query}" if query else target)
        if rule.status in (301, 302, 303, 307, 308):
            location = base + target if target.startswith("/") else target
            return SandboxResponse(rule.status, b"", {"Location": location})
        rewritten = live.find(target.split("?", 1)[0])
        if rewritten is not None:
            return live.answer(rewritten, rule.status if rule.status in (200, 404) else 200)
    if found is not None:
        if request.method not in ("GET", "HEAD"):
            return SandboxResponse(405, b"Method Not Allowed", {"Content-Type": "text/plain"})
        return live.answer(found, 200)
    if "404.html" in live.files:
        return live.answer("404.html", 404)
    return html(NOT_FOUND, 404)
