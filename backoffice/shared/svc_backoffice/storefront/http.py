"""The storefront API's HTTP edge: CORS for the shop's own live origin only, JSON writes from that origin or
from no browser at all, cacheable reads (ETag, Last-Modified, Cache-Control, 304), request parsing with the
storefront's models, and the client address the checkout rate limit counts."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any, TypeVar

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.router import Router
from pydantic import BaseModel, ValidationError

from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import Forbidden, InvalidInput, UnsupportedMediaType
from svc_backoffice.domain import storefront_settings
from svc_backoffice.domain.storefront_settings import origin_of as _origin_of
from svc_backoffice.edge.gate import UNSAFE_METHODS
from svc_backoffice.edge.requests import flatten, json_value
from svc_backoffice.edge.web import answer_with

M = TypeVar("M", bound=BaseModel)

# Browsers and the site host's CDN keep a read a minute and five minutes respectively, and may serve it a
# minute stale while they revalidate (docs/decisions.md, "Storefront API caching").
CACHE_CONTROL = "public, max-age=60, s-maxage=300, stale-while-revalidate=60"
MAX_BODY_BYTES = 64 * 1024
ALLOWED_METHODS = "GET, POST, OPTIONS"


def lower_headers(app: APIGatewayRestResolver | Router) -> dict[str, str]:
    return {k.lower(): v for k, v in (app.current_event.headers or {}).items()}


def cors_gate(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response:
    """CORS headers for the live origin only; a write from any other origin (or another site's page) is 403,
    and a write must declare JSON (415)."""
    headers = lower_headers(app)
    origin = headers.get("origin")
    ours = storefront_settings.storefront_origin()
    same = origin is not None and ours is not None and _origin_of(origin) == ours
    answer_with({"Vary": "Origin"})
    if same:
        answer_with({"Access-Control-Allow-Origin": str(ours)})
    method = app.current_event.http_method.upper()
    if method in UNSAFE_METHODS:
        site = (headers.get("sec-fetch-site") or "").strip().lower()
        if (origin is not None and not same) or (site not in ("", "same-origin", "none") and not same):
            raise Forbidden(say("storefront.cross_origin"))
        kind = (headers.get("content-type") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise UnsupportedMediaType(say("request.not_json"))
    response = next_middleware(app)
    response.headers.setdefault("Vary", "Origin")
    if same:
        response.headers["Access-Control-Allow-Origin"] = str(ours)
    return response


def preflight(app: APIGatewayRestResolver | Router) -> Response:
    origin = lower_headers(app).get("origin")
    ours = storefront_settings.storefront_origin()
    headers = {"Vary": "Origin", "Cache-Control": "no-store"}
    if origin is not None and ours is not None and _origin_of(origin) == ours:
        headers |= {
            "Access-Control-Allow-Origin": ours,
            "Access-Control-Allow-Methods": ALLOWED_METHODS,
            "Access-Control-Allow-Headers": "Content-Type",
            "Access-Control-Max-Age": "600",
        }
    return Response(status_code=204, headers=headers)


def _http_date(moment: datetime) -> str:
    return format_datetime(moment.astimezone(UTC), usegmt=True)


def cached(router: Router, produce: Callable[[], Any], modified: datetime | None) -> Response:
    """A cacheable read: 304 when the client's copy is current (If-None-Match, else If-Modified-Since), else
    200 with the body, its ETag and Last-Modified."""
    headers = lower_headers(router)
    since = headers.get("if-modified-since")
    if modified is not None and since and "if-none-match" not in headers:
        try:
            if parsedate_to_datetime(since) >= modified:
                return _not_modified(None, modified)
        except (TypeError, ValueError, IndexError):
            pass
    body = json.dumps(produce(), separators=(",", ":"), default=str)
    tag = '"' + hashlib.sha256(body.encode()).hexdigest()[:32] + '"'
    wanted = headers.get("if-none-match")
    if wanted and (wanted.strip() == "*" or tag in [t.strip().removeprefix("W/") for t in wanted.split(",")]):
        return _not_modified(tag, modified)
    out = {"Cache-Control": CACHE_CONTROL, "ETag": tag}
    if modified is not None:
        out["Last-Modified"] = _http_date(modified)
    return Response(status_code=200, content_type="application/json", body=body, headers=out)


def _not_modified(tag: str | None, modified: datetime | None) -> Response:
    out = {"Cache-Control": CACHE_CONTROL}
    if tag:
        out["ETag"] = tag
    if modified is not None:
        out["Last-Modified"] = _http_date(modified)
    return Response(status_code=304, headers=out, body="")


def query(router: Router, model: type[M]) -> M:
    params = router.current_event.query_string_parameters or {}
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        raise InvalidInput(say("request.invalid_query"), flatten(exc)) from None


def body(router: Router, model: type[M]) -> M:
    value = json_value(router, MAX_BODY_BYTES)
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise InvalidInput(say("request.invalid_body"), flatten(exc)) from None


def client_address(router: Router) -> str:
    """The address the checkout limit counts: the connection's source address, or, behind
    STOREFRONT_TRUSTED_PROXY_HOPS proxies (the site host's rewrite), the address the farthest trusted proxy
    saw (from X-Forwarded-For, read from the right)."""
    event = router.current_event
    identity = (event.raw_event.get("requestContext") or {}).get("identity") or {}
    source = str(identity.get("sourceIp") or "unknown")
    hops = storefront_settings.settings().storefront_trusted_proxy_hops
    forwarded = lower_headers(router).get("x-forwarded-for") or ""
    chain = [part.strip() for part in forwarded.split(",") if part.strip()]
    if not chain or chain[-1] != source:
        chain.append(source)
    index = len(chain) - 1 - hops
    return chain[max(index, 0)][:64]
