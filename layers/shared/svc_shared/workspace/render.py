"""HTML of the workspace: Jinja2 templates with autoescaping, CSRF tokens bound to the session, and the
headers every page carries (a Content-Security-Policy that allows only our own script and style files)."""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from svc_backoffice.core.pagefiles import folder_version, read_static, template_environment
from svc_shared.workspace.chart import day_label

HERE = Path(__file__).parent
STATIC = HERE / "static"
STATIC_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
# A live site's origin as a CSP source: an http(s) scheme and a host name or address with an optional port.
ORIGIN = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?")
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


def frame_origin(url: str | None) -> str | None:
    """The origin of `url` (a project's live site) when it is one a page may frame, else None."""
    if not url:
        return None
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    return origin if ORIGIN.fullmatch(origin) else None


def page_headers(frame_src: str | None = None) -> dict[str, str]:
    """The headers of a page; `frame_src` (an origin checked by frame_origin) is the one site it may frame, as
    the builder page frames its project's live site: the policy is per response, so only that page, for that
    project, allows it."""
    headers = dict(PAGE_HEADERS)
    if frame_src:
        headers["Content-Security-Policy"] = f"{CSP}; frame-src {frame_src}"
    return headers


def _when(ts: float | int | None) -> str:
    if ts is None:
        return "never"
    moment = datetime.fromtimestamp(float(ts), UTC)
    return f"{moment.day} {moment:%b %Y, %H:%M} UTC"  # as day_label writes a day: 7 Nov 2026


@functools.lru_cache(maxsize=1)
def environment() -> Any:
    """The template environment (built once per container; templates are compiled on first use)."""
    return template_environment(HERE / "templates", {"when": _when, "day": day_label})


def render(template: str, **context: Any) -> str:
    return str(environment().get_template(template).render(**context))


def page(template: str, *, base: str, user: Any, csrf: str = "", nav: str = "", **context: Any) -> str:
    """A page of the workspace's layout (base.html) with what every page needs besides its own context."""
    return render(
        template,
        base=base,
        version=asset_version(),
        csrf=csrf,
        user=user,
        nav=nav,
        notice=context.pop("notice", None),
        notice_kind=context.pop("notice_kind", None),
        **context,
    )


@functools.lru_cache(maxsize=8)
def static_file(name: str) -> tuple[bytes, str, str] | None:
    """(content, content type, etag) of a file of static/, or None for anything else."""
    return read_static(STATIC, STATIC_TYPES, name)


@functools.lru_cache(maxsize=1)
def asset_version() -> str:
    """Part of the static URLs, so a new deployment's files are fetched afresh."""
    return folder_version(STATIC, static_file)


def csrf_token(key: bytes, session_cookie: str) -> str:
    """A token bound to this session: a form from another site cannot know it."""
    return hmac.new(key, session_cookie.encode(), hashlib.sha256).hexdigest()[:40]


def csrf_valid(key: bytes, session_cookie: str | None, token: str | None) -> bool:
    if not session_cookie or not token:
        return False
    return hmac.compare_digest(csrf_token(key, session_cookie), token)
