"""The HTTP surface shared by the API Gateway functions: one resolver factory, one error table, body and
cookie helpers. Domain errors become HTTP answers here and nowhere else."""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import parse_qs

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, CORSConfig, Response
from aws_lambda_powertools.shared.cookies import Cookie, SameSite
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

from svc_backoffice.core.cookies import PerContext
from svc_backoffice.core.cookies import cookie as cookie  # the product's one cookie reader
from svc_shared.core import errors, jsonlimit
from svc_shared.core.catalogue import say
from svc_shared.core.logs import get_logger
from svc_shared.wiring import baseurl

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.api_gateway import Router

    from svc_shared.domain.bodies import RequestBody

logger = get_logger()
Body = TypeVar("Body", bound="RequestBody")


class UnsupportedMediaType(errors.InvalidInput):
    """A body in a content type the route does not take (415)."""


# The one table from domain error to HTTP status; subclasses inherit their parent's row.
STATUS_BY_ERROR: dict[type[errors.DomainError], int] = {
    UnsupportedMediaType: 415,
    errors.InvalidInput: 400,
    errors.Unauthenticated: 401,
    errors.PaymentRequired: 402,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.AlreadyExists: 409,
    errors.Conflict: 409,
    errors.PayloadTooLarge: 413,
    errors.RateLimited: 429,
    errors.UpstreamError: 502,
}
MAX_FORM_FIELDS = 100


def status_for(exc: errors.DomainError) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS_BY_ERROR:
            return STATUS_BY_ERROR[cls]
    return 400


def json_response(
    status: int, body: Any, *, headers: dict[str, str] | None = None, cookies: list[Cookie] | None = None
) -> Response:
    text = json.dumps(body, separators=(",", ":"))
    return _never_cached(status, "application/json", text, headers, cookies)


def success(**fields: Any) -> Response:
    """The platform API's 200 answer: `{"success": true}` with `fields`."""
    return json_response(200, {"success": True, **fields})


# What a page answers with unless its own headers say otherwise: never framed, nothing loaded, no referrer.
_PLAIN_PAGE_HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
    "frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
}


def html_response(
    status: int, page: str, *, headers: dict[str, str] | None = None, cookies: list[Cookie] | None = None
) -> Response:
    html = "text/html; charset=utf-8"
    return _never_cached(status, html, page, {**_PLAIN_PAGE_HEADERS, **(headers or {})}, cookies)


def _never_cached(
    status: int, content_type: str, body: str, headers: dict[str, str] | None, cookies: list[Cookie] | None
) -> Response:
    """An answer no cache keeps (Cache-Control: no-store, unless `headers` say otherwise)."""
    no_store = {"Cache-Control": "no-store", **(headers or {})}
    return Response(
        status_code=status, content_type=content_type, body=body, headers=no_store, cookies=cookies
    )


def redirect(location: str, status: int = 303, *, cookies: list[Cookie] | None = None) -> Response:
    return Response(
        status_code=status, headers={"Location": location, "Cache-Control": "no-store"}, cookies=cookies
    )


def error_body(exc: errors.DomainError) -> dict[str, Any]:
    return {"error": exc.code, "message": exc.message}


# Browser-based MCP clients call the metadata, registration, token and /mcp endpoints cross-origin.
PUBLIC_CORS = CORSConfig(
    allow_origin="*",
    allow_headers=["Authorization", "Content-Type", "MCP-Protocol-Version", "Mcp-Session-Id"],
    expose_headers=["WWW-Authenticate", "Retry-After", "Mcp-Session-Id"],
    max_age=86400,
)


class _RequestLocalResolver(APIGatewayRestResolver):
    """A resolver whose current event and Lambda context are per request, so requests served side by side in
    one process (the local gateway) each see their own."""

    current_event = PerContext(ContextVar("svc_current_event", default=None))
    lambda_context = PerContext(ContextVar("svc_lambda_context", default=None))

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        baseurl.bind(
            event
        )  # the public base URL API Gateway names in this request (svc_shared.wiring.baseurl)
        if isinstance(event, dict):
            self.current_event = APIGatewayProxyEvent(event)
        self.lambda_context = context
        return super().resolve(event, context)


def create_resolver(
    cors: CORSConfig | None = None, *, session_writes: bool = False
) -> APIGatewayRestResolver:
    """A REST resolver whose errors are JSON: domain errors by the table above, anything else a 500 that
    names the request id while the log keeps the trace. With `session_writes` (routes authenticated by the
    workspace session cookie), every POST, PUT, PATCH and DELETE passes `check_session_write` first."""
    app = _RequestLocalResolver(cors=cors)
    if session_writes:

        def _guard(resolver: APIGatewayRestResolver, next_middleware: Any) -> Response:
            if resolver.current_event.http_method.upper() in UNSAFE_METHODS:
                check_session_write(resolver)
            return next_middleware(resolver)

        app.use(middlewares=[_guard])

    @app.exception_handler(errors.DomainError)
    def _domain_error(exc: errors.DomainError) -> Response:
        headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, errors.RateLimited) else None
        return json_response(status_for(exc), error_body(exc), headers=headers)

    @app.not_found
    def _not_found(_: Exception) -> Response:
        event = app.current_event
        return json_response(
            404,
            {
                "error": "not_found",
                "message": say("http.no_route", method=event.http_method, path=event.path),
            },
        )

    @app.exception_handler(Exception)
    def _unexpected(exc: Exception) -> Response:
        request_id = app.current_event.request_context.request_id
        logger.exception("unhandled error", extra={"request_id": request_id})
        return json_response(500, {"error": "internal_error", "request_id": request_id})

    return app


def create_app(
    *routers: Router, cors: CORSConfig | None = None, session_writes: bool = False
) -> APIGatewayRestResolver:
    """A function's resolver (`create_resolver`) serving `routers`, the Router modules its routes are declared
    on (svc_shared.routes), with their `cors` where they are called cross-origin."""
    app = create_resolver(cors, session_writes=session_writes)
    for router in routers:
        app.include_router(router)
    return app


# -- request helpers ---------------------------------------------------------------------------------------
class HasEvent(Protocol):
    """What the request helpers read the request from: a resolver, or a Router included in one (its
    `current_event` is the resolver's, per request)."""

    @property
    def current_event(self) -> Any: ...


def json_body(app: HasEvent) -> dict[str, Any]:
    """The request's JSON object body; InvalidInput for anything else."""
    raw = app.current_event.decoded_body
    if not raw:
        raise errors.InvalidInput(say("http.body_not_object"), code="invalid_json")
    try:
        value = jsonlimit.loads(raw)
    except jsonlimit.TooDeep:
        raise errors.InvalidInput(
            say("http.body_too_deep", problem=jsonlimit.too_deep()), code="invalid_json"
        ) from None
    except ValueError as exc:
        raise errors.InvalidInput(say("http.body_not_json"), code="invalid_json") from exc
    if not isinstance(value, dict):
        raise errors.InvalidInput(say("http.body_not_object"), code="invalid_json")
    return value


def parse_body(app: HasEvent, model: type[Body], *, optional: bool = False) -> Body:
    """The request's JSON body as `model` (svc_shared.domain.bodies); an empty body is `model()` when `optional`.
    A missing or wrong field is InvalidInput naming it, and the allowed values where there is a list."""
    if optional and not (app.current_event.decoded_body or "").strip():
        return parse(model, {})
    return parse(model, json_body(app))


def parse(model: type[Body], data: Any) -> Body:
    from pydantic import ValidationError

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = exc.errors(include_url=False, include_context=False, include_input=False)
        fields = [".".join(str(part) for part in p["loc"]) or "body" for p in problems]
        message = "; ".join(f"{field}: {p['msg']}" for field, p in zip(fields, problems, strict=True))
        first = str(problems[0]["loc"][0]) if problems and problems[0]["loc"] else ""
        raise errors.InvalidInput(message, code=model.codes.get(first, "invalid_request")) from None


UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def lower_headers(app: HasEvent) -> dict[str, str]:
    return {k.lower(): v for k, v in (app.current_event.headers or {}).items()}


def check_same_origin(app: HasEvent) -> None:
    """Forbidden unless the request comes from a page of the platform itself, or from no browser at all
    (svc_shared.wiring.origins.cross_site_reason): the CSRF check of every state change a session cookie makes."""
    from urllib.parse import urlsplit

    from svc_shared.wiring import services
    from svc_shared.wiring.origins import cross_site_reason, normalize_origin

    base = urlsplit(services.public_base_url())
    reason = cross_site_reason(lower_headers(app), normalize_origin(f"{base.scheme}://{base.netloc}"))
    if reason is not None:
        logger.info("cross-site request refused", extra={"reason": reason, "path": app.current_event.path})
        raise errors.Forbidden(say("http.cross_site"), code="cross_site")


def check_session_write(app: HasEvent) -> None:
    """A state change authenticated by the session cookie: from this site (403 otherwise) and with a JSON
    body type (415 otherwise), which a form or a `no-cors` request of another page cannot send."""
    check_same_origin(app)
    if content_type(app) != "application/json":
        raise UnsupportedMediaType(say("http.body_must_be_json"), code="unsupported_media_type")


def content_type(app: HasEvent) -> str:
    return (app.current_event.headers.get("content-type") or "").split(";")[0].strip().lower()


def form_body(app: HasEvent) -> dict[str, str]:
    """Fields of an `application/x-www-form-urlencoded` body (first value of each)."""
    if content_type(app) != "application/x-www-form-urlencoded":
        raise errors.InvalidInput(say("http.body_must_be_form"), code="unsupported_media_type")
    try:
        fields = parse_qs(
            app.current_event.decoded_body or "",
            keep_blank_values=True,
            max_num_fields=MAX_FORM_FIELDS,
            strict_parsing=False,
        )
    except ValueError as exc:
        raise errors.InvalidInput(say("http.too_many_fields"), code="invalid_form") from exc
    return {name: values[0] for name, values in fields.items()}


def client_ip(app: HasEvent) -> str:
    return app.current_event.request_context.identity.source_ip or "unknown"


def session_cookie(name: str, value: str, *, max_age: int, secure: bool) -> Cookie:
    return Cookie(
        name=name,
        value=value,
        path="/",
        secure=secure,
        http_only=True,
        max_age=max_age,
        same_site=SameSite.LAX_MODE,
    )


def expired_cookie(name: str, *, secure: bool) -> Cookie:
    return Cookie(
        name=name, value="", path="/", secure=secure, http_only=True, max_age=0, same_site=SameSite.LAX_MODE
    )


def safe_next(target: str | None, default: str = "/") -> str:
    """A same-site relative path to go to after sign-in; anything else (absolute URLs, `//host`,
    backslashes, control characters) falls back to `default` so the form is not an open redirect."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in target):
        return default
    return target
