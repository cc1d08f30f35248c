"""The cookie reader of the whole product: the backoffice's routes and the platform's (`svc_shared.edge.web`)
read a request's cookies with it. It is the backoffice's because the backoffice ships alone into merchants'
repositories (the platform may import the backoffice's lowest floor, never the other way round). Imports
nothing of ours."""

from __future__ import annotations

from http.cookies import CookieError, SimpleCookie
from typing import Any, Protocol


class HasEvent(Protocol):
    """What a cookie is read from: a resolver, or a Router included in one (its `current_event` is the
    resolver's, per request)."""

    @property
    def current_event(self) -> Any: ...


def cookie(app: HasEvent, name: str) -> str | None:
    """The value of the cookie `name` the request sent, or None. Every Cookie header is read (API Gateway
    may split them into multi-value headers); a header the standard library cannot parse is passed over."""
    event = app.current_event
    headers = event.multi_value_headers or {}
    values = [v for k, vs in headers.items() if k.lower() == "cookie" for v in (vs or [])]
    if not values and (single := (event.headers or {}).get("cookie")):
        values = [single]
    for header in values:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(header)
        except CookieError:
            continue
        if name in jar:
            return jar[name].value
    return None
