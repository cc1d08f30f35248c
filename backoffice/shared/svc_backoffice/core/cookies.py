"""What the product's two HTTP edges (the backoffice's and the platform's `svc_shared.edge.web`) share of a
request: the cookie reader, and `PerContext`, which keeps a resolver's per-request attributes. It is the backoffice's because the backoffice ships alone into merchants'
repositories (the platform may import the backoffice's lowest floor, never the other way round). Imports
nothing of ours."""

from __future__ import annotations

from contextvars import ContextVar
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


class PerContext:
    """An attribute kept in a context variable: each `contextvars` context reads what it set. Powertools keeps a
    router's current event and Lambda context as class attributes (one request per process on Lambda); a
    resolver declaring them so lets requests served side by side in one process (the local gateway) each see
    their own."""

    def __init__(self, var: ContextVar[Any]) -> None:
        self.var = var

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        return self.var.get()

    def __set__(self, instance: object, value: Any) -> None:
        self.var.set(value)
