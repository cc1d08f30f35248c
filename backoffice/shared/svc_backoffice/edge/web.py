"""The HTTP surface shared by the backoffice functions: the resolver factory (one transaction per request,
domain errors mapped in one table), the Router that registers a route with the gate its route-table row
names, and request parsing with pydantic models."""

from __future__ import annotations

import base64
import binascii
import functools
import json
import sys
import uuid
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any, TypeVar

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.router import Router
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from aws_lambda_powertools.shared.cookies import Cookie, SameSite
from pydantic import TypeAdapter, ValidationError

from svc_backoffice import auth, config, route_table, tenancy
from svc_backoffice.catalogue import say
from svc_backoffice.db import database
from svc_backoffice.errors import (
    Conflict,
    DomainError,
    Forbidden,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    Unavailable,
    Unprocessable,
    UnsupportedMediaType,
    WebhookNotConfigured,
    WebhookRejected,
)
from svc_backoffice.route_table import ROLE_RANK
from svc_backoffice.sessions import SESSION_COOKIE


class _PerContextKeys(LambdaPowertoolsFormatter):
    """Powertools' formatter with its appended keys kept per `contextvars` context instead of per process
    (the same thing on Lambda): requests served side by side in one process (the local gateway) never show
    each other's keys."""

    def __init__(self, **kwargs: Any) -> None:
        self._keys: ContextVar[dict[str, Any] | None] = ContextVar("backoffice_log_keys", default=None)
        self._base: dict[str, Any] = {}
        super().__init__(**kwargs)
        self._base = self.log_format

    @property
    def log_format(self) -> dict[str, Any]:
        keys = self._keys.get()
        if keys is None:
            keys = dict(self._base)
            self._keys.set(keys)
        return keys

    @log_format.setter
    def log_format(self, value: dict[str, Any]) -> None:
        self._keys.set(value)

    def start_context(self, **keys: Any) -> None:
        """Fresh keys for this context (a hosted request run in a copied context), so keys appended while
        serving it never reach the context it was copied from."""
        self._keys.set({**self._base, **keys})


_formatter = _PerContextKeys()
logger = Logger(service="svc-backoffice", logger_formatter=_formatter)


def start_log_context(**keys: Any) -> None:
    """Log keys of their own for the current context (see _PerContextKeys.start_context)."""
    _formatter.start_context(**keys)


_current_event: ContextVar[Any] = ContextVar("backoffice_current_event", default=None)
_lambda_context: ContextVar[Any] = ContextVar("backoffice_lambda_context", default=None)
_request_context: ContextVar[dict[str, Any] | None] = ContextVar("backoffice_request_context", default=None)


class _PerContext:
    """An attribute kept in a context variable: each `contextvars` context reads what it set."""

    def __init__(self, var: ContextVar[Any]) -> None:
        self.var = var

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        return self.var.get()

    def __set__(self, instance: object, value: Any) -> None:
        self.var.set(value)


class _RequestLocalResolver(APIGatewayRestResolver):
    """Powertools keeps the current event as a class attribute of its routers (one request per process on
    Lambda) and the request's context (`append_context`) on the resolver that last included a router; this
    resolver keeps both per `contextvars` context, so requests served side by side in one process each see
    their own, and a router included by two resolvers in one process (a group's function and the hosted
    one) reads the context of the resolver serving the request."""

    @property
    def context(self) -> dict[str, Any]:
        value = _request_context.get()
        if value is None:
            value = {}
            _request_context.set(value)
        return value

    @context.setter
    def context(self, value: dict[str, Any]) -> None:
        _request_context.set(value)

    current_event = _PerContext(_current_event)
    lambda_context = _PerContext(_lambda_context)

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        _request_context.set({})
        if isinstance(event, dict):
            _current_event.set(self._to_proxy_event(event))
        _lambda_context.set(context)
        return super().resolve(event, context)


M = TypeVar("M")

# A JSON body larger than this is refused before it is parsed (the largest a route keeps is a blog post of
# 200,000 characters, up to 800 KB of UTF-8).
MAX_BODY_BYTES = 1024 * 1024
SIGNED_OUT = "/auth/signed-out"
OK = {"ok": True}
INSUFFICIENT_ROLE = "/auth/signed-out?reason=insufficient_role"

# The one table from domain error to HTTP status.
STATUS_BY_ERROR: dict[type[DomainError], int] = {
    InvalidInput: 400,
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    PayloadTooLarge: 413,
    UnsupportedMediaType: 415,
    Unprocessable: 422,
    Unavailable: 503,
    WebhookRejected: 400,
    WebhookNotConfigured: 401,
}


def json_response(status: int, body: Any, *, headers: dict[str, str] | None = None) -> Response:
    return Response(
        status_code=status,
        content_type="application/json",
        body=json.dumps(body, separators=(",", ":"), default=str),
        headers={"Cache-Control": "no-store", **(headers or {})},
    )


def redirect(location: str, *, cookies: list[Cookie] | None = None) -> Response:
    """A 302 to `location`. A path (`/auth/signed-out`) is one of this backoffice's: under the shop's base
    path when hosted (tenancy.path), as it is when self-hosted; an absolute URL (a configured return URL) is
    sent as it is."""
    if location.startswith("/") and not location.startswith("//"):
        location = tenancy.path(location)
    return Response(
        status_code=302, headers={"Location": location, "Cache-Control": "no-store"}, cookies=cookies
    )


def session_cookie(value: str, *, max_age: int) -> Cookie:
    """The svc_session cookie: Path is the shop's base path when hosted (`/` self-hosted), so a browser never
    sends one shop's session to another; Secure unless the shop (or COOKIE_SECURE=false) says plain HTTP."""
    shop = tenancy.current_shop()
    return Cookie(
        name=SESSION_COOKIE,
        value=value,
        path=tenancy.cookie_path(),
        secure=shop.secure if shop is not None else config.self_hosted_settings().cookie_secure,
        http_only=True,
        max_age=max_age,
        same_site=SameSite.LAX_MODE,
    )


def _error_body(exc: DomainError) -> dict[str, Any]:
    if isinstance(exc, WebhookRejected):
        return {"ok": False, "error": exc.message}
    if isinstance(exc, InvalidInput) and exc.issues is not None:
        return {"error": exc.issues}
    return {"error": exc.message}


def _transaction(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response:
    with database().transaction():
        return next_middleware(app)


def create_app(*routers: ApiRouter) -> APIGatewayRestResolver:
    """A resolver serving `routers`, each request in one database transaction."""
    app = _RequestLocalResolver()
    app.use(middlewares=[_transaction])

    @app.exception_handler(DomainError)
    def _domain_error(exc: DomainError) -> Response:
        if isinstance(exc, Unavailable):
            logger.warning("dependency unavailable", extra={"reason": exc.reason})
        status = next((STATUS_BY_ERROR[c] for c in type(exc).__mro__ if c in STATUS_BY_ERROR), 400)
        return json_response(status, _error_body(exc))

    @app.not_found
    def _not_found(_: Exception) -> Response:
        return json_response(404, {"error": say("request.not_found")})

    @app.exception_handler(Exception)
    def _unexpected(exc: Exception) -> Response:
        # The detail (which may name tables, values or settings) stays in the log, found by the request id.
        request_id = app.current_event.request_context.request_id
        logger.exception("unhandled error", extra={"request_id": request_id})
        return json_response(500, {"error": say("request.internal_error"), "request_id": request_id})

    for router in routers:
        app.include_router(router, prefix=router.prefix)
    return app


# -- CSRF: writes authenticated by the session cookie ------------------------------------------------------
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _origin_of(url: str) -> str | None:
    """`scheme://host[:port]` in lower case, the default port dropped; None for anything else."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    default = 443 if parts.scheme == "https" else 80
    return f"{parts.scheme}://{parts.hostname.lower()}" + (f":{port}" if port not in (None, default) else "")


def own_origin() -> str | None:
    """This backoffice's origin: its shop's base URL's when hosted, HANDOFF_AUDIENCE's self-hosted."""
    shop = tenancy.current_shop()
    return _origin_of(shop.base_url if shop is not None else config.self_hosted_settings().handoff_audience)


def check_same_origin(app: APIGatewayRestResolver) -> None:
    """Forbidden unless the request comes from this backoffice's origin or from no browser at all: a
    `Sec-Fetch-Site` other than same-origin, or an `Origin` other than ours, is another site's page (`null`
    passes only with Sec-Fetch-Site: same-origin). The platform applies the same rule
    (svc_shared.wiring.origins.cross_site_reason)."""
    headers = {k.lower(): v for k, v in (app.current_event.headers or {}).items()}
    site, origin = headers.get("sec-fetch-site"), headers.get("origin")
    refused = site is not None and site.strip().lower() != "same-origin"
    if origin is not None and not refused:
        if origin.strip().lower() == "null":
            refused = site is None
        else:
            refused = _origin_of(origin) is None or _origin_of(origin) != own_origin()
    if refused:
        logger.info("cross-site request refused", extra={"path": app.current_event.path})
        raise Forbidden(say("request.cross_site"))


def check_write(app: APIGatewayRestResolver) -> None:
    """A write of a signed-in staff member: from this backoffice's origin (403) with a JSON body type (415;
    a DELETE without a body needs none, as no form or `no-cors` request can send a DELETE)."""
    event = app.current_event
    method = event.http_method.upper()
    if method not in UNSAFE_METHODS:
        return
    check_same_origin(app)
    headers = {k.lower(): v for k, v in (event.headers or {}).items()}
    kind = (headers.get("content-type") or "").split(";")[0].strip().lower()
    if kind != "application/json" and (method != "DELETE" or event.body):
        raise UnsupportedMediaType(say("request.not_json"))


# -- role gate -----------------------------------------------------------------------------------------------
def role_gate(minimum: str) -> Callable[[APIGatewayRestResolver, NextMiddleware], Response]:
    needed = ROLE_RANK[minimum]

    def gate(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response:
        staff = auth.current_staff(database(), cookie(app, SESSION_COOKIE))
        if staff is None:
            return redirect(SIGNED_OUT)
        check_write(app)
        if staff.rank < needed:
            return redirect(INSUFFICIENT_ROLE)
        app.append_context(staff=staff)
        return next_middleware(app)

    gate.__name__ = f"role_gate_{minimum}"
    return gate


class ApiRouter(Router):
    """A Router for one resource under `prefix`. `api(...)` is where a route is declared, once: its method and
    rule, minimum role (None: no role gate), body and query models (by name in svc_backoffice.models), answers
    and summary. The route table (route_table.ROUTES), docs/routes.md, the OpenAPI document and the template
    check are all read from these declarations. A resource's standard operations (`lists`, `reads`: the
    `reader` role at least; `creates`, `updates`, `deletes`, `reorders`: the `writer` role) are declared by
    one call each, served by the one handler of their kind."""

    def __init__(self, prefix: str, *, reader: str | None = None, writer: str | None = None) -> None:
        super().__init__()
        self.prefix = prefix
        self.reader, self.writer = reader, writer
        self.declared: list[route_table.Route] = []

    def api(
        self,
        method: str,
        rule: str = "/",
        *,
        role: str | None,
        body: str | None = None,
        query: str | None = None,
        answers: str = "200",
        summary: str = "",
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        path = (self.prefix if rule == "/" else f"{self.prefix}{rule}").replace("<", "[").replace(">", "]")
        for name in (body, query):
            if name is not None and name not in _models():
                raise LookupError(f"{method} {path}: no request model named {name}")
        if role is not None and role not in ROLE_RANK:
            raise LookupError(f"{method} {path}: no role named {role}")
        route = route_table.Route(
            method, path, role, route_table.resource_of(path), body, query, answers, summary
        )
        self.declared.append(route)
        middlewares = [_declare(route)] + ([role_gate(role)] if role else [])
        return self.route(rule, method, middlewares=middlewares)

    def staff(self) -> auth.Staff:
        return self.context["staff"]

    # -- a resource's standard operations ------------------------------------------------------------------
    # Each declares its route as api() does, behind the router's reader or writer role, with the answers every
    # such route gives (its status, 302 behind the role gate, 400 for a body or query, 404 for an id, 500)
    # plus `also`, and serves it with the one handler of its kind, which calls the domain `operation` with the
    # database and what the route reads.
    def lists(self, operation: Callable[..., Any], *, query: str | None = None, summary: str) -> None:
        """GET `prefix`: `operation(db, query)` when the route has a query model (a page), else
        `{"items": operation(db)}`."""
        operation = _late(operation)

        def handler() -> Response:
            if query is None:
                return json_response(200, {"items": operation(database())})
            return json_response(200, operation(database(), _query(self)))

        self._standard("GET", "/", handler, 200, role=self.reader, query=query, summary=summary)

    def creates(self, operation: Callable[..., Any], *, body: str, also: str = "", summary: str) -> None:
        """POST `prefix`: 201 with `operation(db, body)`."""
        operation = _late(operation)

        def handler() -> Response:
            return json_response(201, operation(database(), _body(self)))

        self._standard("POST", "/", handler, 201, role=self.writer, body=body, also=also, summary=summary)

    def reads(self, operation: Callable[..., Any], *, summary: str) -> None:
        """GET `prefix/<id>`: `operation(db, id)`."""
        operation = _late(operation)

        def handler(id: str) -> Response:
            return json_response(200, operation(database(), path_id(id)))

        self._standard("GET", "/<id>", handler, 200, role=self.reader, summary=summary)

    def updates(self, operation: Callable[..., Any], *, body: str, also: str = "", summary: str) -> None:
        """PATCH `prefix/<id>`: `operation(db, id, body)`."""
        operation = _late(operation)

        def handler(id: str) -> Response:
            row_id = path_id(id)
            return json_response(200, operation(database(), row_id, _body(self)))

        self._standard(
            "PATCH", "/<id>", handler, 200, role=self.writer, body=body, also=also, summary=summary
        )

    def deletes(self, operation: Callable[..., Any], *, also: str = "", summary: str) -> None:
        """DELETE `prefix/<id>`: `operation(db, id)`, answered `{"ok": true}`."""
        operation = _late(operation)

        def handler(id: str) -> Response:
            operation(database(), path_id(id))
            return json_response(200, OK)

        self._standard("DELETE", "/<id>", handler, 200, role=self.writer, also=also, summary=summary)

    def reorders(self, operation: Callable[..., Any], *, summary: str) -> None:
        """POST `prefix/reorder` with the ordered ids (ReorderBody): `operation(db, ids)`; 422 for an unknown
        id."""
        operation = _late(operation)

        def handler() -> Response:
            operation(database(), _body(self).ids)
            return json_response(200, OK)

        self._standard(
            "POST",
            "/reorder",
            handler,
            200,
            role=self.writer,
            body="ReorderBody",
            also="422",
            summary=summary,
        )

    def _standard(
        self,
        method: str,
        rule: str,
        handler: Callable[..., Response],
        status: int,
        *,
        role: str | None,
        body: str | None = None,
        query: str | None = None,
        also: str = "",
        summary: str,
    ) -> None:
        if role is None:
            raise LookupError(f"{method} {self.prefix}{rule}: the router names no role for this operation")
        codes = {status, 302, 500, *(int(code) for code in also.split())}
        codes |= {400} if body or query else set()
        codes |= {404} if "<id>" in rule else set()
        answers = " ".join(str(code) for code in sorted(codes))
        self.api(method, rule, role=role, body=body, query=query, answers=answers, summary=summary)(handler)


def _late(operation: Callable[..., Any]) -> Callable[..., Any]:
    """`operation` looked up in its module on each call, as a handler naming `module.function` would: the
    function a test puts in its place is the one called."""
    module, name = sys.modules[operation.__module__], operation.__name__
    return lambda *args: getattr(module, name)(*args)


def _declare(route: route_table.Route) -> Callable[[APIGatewayRestResolver, NextMiddleware], Response]:
    """Makes the serving route's declaration available to the handler (its body and query models)."""

    def declare(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response:
        app.append_context(route=route)
        return next_middleware(app)

    return declare


def _models() -> dict[str, Any]:
    from svc_backoffice.models import REQUEST_MODELS

    return REQUEST_MODELS


@functools.cache
def _adapter(name: str) -> TypeAdapter[Any]:
    return TypeAdapter(_models()[name])


# -- request parsing -----------------------------------------------------------------------------------------
def flatten(exc: ValidationError) -> dict[str, Any]:
    """pydantic issues in the flattened shape: messages for the whole body, and per field path."""
    form: list[str] = []
    fields: dict[str, list[str]] = {}
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        if loc:
            fields.setdefault(".".join(loc), []).append(err["msg"])
        else:
            form.append(err["msg"])
    return {"formErrors": form, "fieldErrors": fields}


def body(router: Router) -> Any:
    """The JSON body validated by the serving route's body model; 400 when malformed or invalid, 413 over
    MAX_BODY_BYTES."""
    try:
        raw = router.current_event.decoded_body
    except (UnicodeDecodeError, binascii.Error, ValueError):
        raise InvalidInput(say("request.not_utf8")) from None
    if raw and len(raw) > MAX_BODY_BYTES // 4 and len(raw.encode()) > MAX_BODY_BYTES:
        raise PayloadTooLarge(say("request.too_large", kilobytes=MAX_BODY_BYTES // 1024))
    try:
        value = json.loads(raw) if raw else None
    except RecursionError:
        raise InvalidInput(say("request.nested_too_deeply")) from None
    except ValueError:
        raise InvalidInput(say("request.invalid_json")) from None
    name = router.context["route"].body
    assert name is not None, "the route declares no body model"
    try:
        return _adapter(name).validate_python(value)
    except ValidationError as exc:
        raise InvalidInput(say("request.invalid_body"), flatten(exc)) from None


def query(router: Router) -> Any:
    """The query string validated by the serving route's query model; 400 naming what is wrong."""
    params = router.current_event.query_string_parameters or {}
    name = router.context["route"].query
    assert name is not None, "the route declares no query model"
    try:
        return _models()[name].model_validate(params)
    except ValidationError as exc:
        raise InvalidInput(say("request.invalid_query"), flatten(exc)) from None


# The same two, for ApiRouter's standard operations, whose parameters `body` and `query` name the models.
_body, _query = body, query


def raw_body(router: Router) -> bytes:
    """The request body exactly as sent (what a webhook signature covers)."""
    event = router.current_event
    if not event.body:
        return b""
    if event.is_base64_encoded:
        return base64.b64decode(event.body)
    return event.body.encode("utf-8", "surrogatepass")


def lower_headers(router: Router) -> dict[str, str]:
    return {k.lower(): v for k, v in (router.current_event.headers or {}).items()}


def path_id(value: str) -> str:
    """A path [id] as a UUID string; anything else cannot name a row, so it is 404."""
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise NotFound() from None


def cookie(app: APIGatewayRestResolver, name: str) -> str | None:
    from http.cookies import CookieError, SimpleCookie

    headers = app.current_event.multi_value_headers or {}
    values = [v for k, vs in headers.items() if k.lower() == "cookie" for v in (vs or [])]
    if not values and (single := (app.current_event.headers or {}).get("cookie")):
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
