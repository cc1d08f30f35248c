"""The MCP tool server endpoint: one JSON-RPC 2.0 message or batch per POST, Bearer-authenticated."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared import services, web
from svc_shared.config import get_settings, is_loopback_url
from svc_shared.logs import get_logger
from svc_shared.mcp import protocol
from svc_shared.mcp.registry import ToolContext
from svc_shared.mcp.tools import registry
from svc_shared.oauth.metadata import www_authenticate
from svc_shared.providers.http import REQUEST_BUDGET_SECONDS, time_budget

logger = get_logger()
app = web.create_resolver(cors=web.PUBLIC_CORS)
dispatcher = protocol.Dispatcher(registry)
RATE_LIMIT, RATE_WINDOW = 60, 60
MAX_BODY = 1024 * 1024
NOT_ALLOWED = "Method not allowed: POST a JSON-RPC 2.0 request with a Bearer access token to this URL."


def _reply(status: int, body: Any = None, headers: dict[str, str] | None = None) -> Response:
    if body is None:
        return Response(status_code=status, headers={"Cache-Control": "no-store", **(headers or {})}, body="")
    return web.json_response(status, body, headers=headers)


def _trusted_origin() -> bool:
    """DNS-rebinding protection: Host (and Origin when sent) must be the public host; loopback in local runs."""
    base = get_settings().public_base_url
    allowed = {urlsplit(base).netloc.lower()}
    if is_loopback_url(base):
        port = urlsplit(base).port
        allowed |= {f"{h}:{port}" for h in ("127.0.0.1", "localhost", "[::1]")}
    host = (app.current_event.headers.get("host") or "").lower()
    origin = app.current_event.headers.get("origin")
    if host not in allowed:
        return False
    return origin is None or urlsplit(origin).netloc.lower() in allowed


@app.get("/mcp")
@app.delete("/mcp")
def not_allowed() -> Response:
    return _reply(
        405, protocol.error(None, protocol.INVALID_REQUEST, NOT_ALLOWED), {"Allow": "POST, OPTIONS"}
    )


@app.post("/mcp")
def rpc() -> Response:
    settings = get_settings()
    if not _trusted_origin():
        return _reply(
            403, protocol.error(None, protocol.INVALID_REQUEST, "Forbidden: untrusted Host or Origin.")
        )
    auth = app.current_event.headers.get("authorization") or ""
    scheme, _, token = auth.partition(" ")
    grant = services.grants().verify_access_token(token.strip()) if scheme.lower() == "bearer" else None
    if grant is None:
        challenge = www_authenticate(settings.public_base_url, token_sent=bool(auth))
        return _reply(
            401,
            protocol.error(
                None, protocol.UNAUTHORIZED, "Unauthorized: a valid Bearer access token is required."
            ),
            {"WWW-Authenticate": challenge},
        )
    body = app.current_event.decoded_body or ""
    if len(body.encode()) > MAX_BODY:
        return _reply(
            413, protocol.error(None, protocol.INVALID_REQUEST, f"Request body over {MAX_BODY} bytes.")
        )
    parsed = protocol.parse(body)
    if parsed.failure is not None:
        return _reply(400, parsed.failure)
    # Each message of a batch counts as one request; a batch that does not fit is refused whole.
    allowed, wait = services.rate_limiter().take(
        "mcp", grant.user_id, RATE_WINDOW, RATE_LIMIT, len(parsed.messages)
    )
    if not allowed:
        message = f"Rate limit exceeded: {RATE_LIMIT} requests/min per user. Retry in {wait}s."
        return _reply(429, protocol.error(None, -32000, message), {"Retry-After": str(wait)})
    context = ToolContext(user_id=grant.user_id, client_id=grant.client_id)
    replies = [r for r in (dispatcher.handle(m, context) for m in parsed.messages) if r is not None]
    if not replies:
        return _reply(202)
    return web.json_response(200, replies if parsed.batch else replies[0])


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    with time_budget(REQUEST_BUDGET_SECONDS):  # API Gateway answers 504 at 29 s: finish well before
        return app.resolve(event, context)
