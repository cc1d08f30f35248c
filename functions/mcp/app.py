"""The MCP tool server endpoint: one JSON-RPC 2.0 message or batch per POST, Bearer-authenticated.

This function serves one path, so it answers the proxy event directly instead of through Powertools'
resolver: the resolver's import (about 90 ms here) was the largest part of this hot endpoint's cold start.

Every request is measured (`services.metrics()`, svc_shared/metrics.py): its latency and its outcome (ok,
client error, denied, rate limited, server error), whatever API type serves it.
"""

from __future__ import annotations

import base64
import time
from typing import Any

from svc_shared import services
from svc_shared.logs import get_logger
from svc_shared.mcp import apps, protocol
from svc_shared.mcp.messages import Message, Refused
from svc_shared.mcp.registry import ToolContext
from svc_shared.mcp.tools import registry
from svc_shared.mcpauth import RATE_LIMIT, AccessClaims, is_signed_format, read_access_token
from svc_shared.oauth.metadata import resource_url, www_authenticate
from svc_shared.providers.http import REQUEST_BUDGET_SECONDS, time_budget

logger = get_logger()


def record_change(context: ToolContext, tool: str, args: Any, value: Any, error: str | None) -> None:
    """State-changing calls go to the user's audit (the workspace's MCP access page), with the project
    they named or created."""
    project_id = getattr(args, "project_id", None)
    if project_id is None and isinstance(value, dict):
        project_id = value.get("project_id")
    services.tool_audit().record(
        context.user_id,
        tool=tool,
        client_id=context.client_id,
        project_id=project_id if isinstance(project_id, str) else None,
        ok=error is None,
        error=error,
    )


dispatcher = protocol.Dispatcher(registry, on_change=record_change)
MAX_BODY = 1024 * 1024
NOT_ALLOWED = "Method not allowed: POST a JSON-RPC 2.0 request with a Bearer access token to this URL."


class Request:
    """The parts of an API Gateway REST proxy event this endpoint reads (headers case-insensitively)."""

    def __init__(self, event: dict[str, Any]) -> None:
        self.method = str(event.get("httpMethod") or "").upper()
        headers: dict[str, str] = {}
        for name, values in (event.get("multiValueHeaders") or {}).items():
            if values:
                headers[name.lower()] = str(values[-1])
        for name, value in (event.get("headers") or {}).items():
            if value is not None:
                headers[name.lower()] = str(value)
        self.headers = headers
        body = event.get("body") or ""
        self.body = (
            base64.b64decode(body).decode("utf-8", "replace") if event.get("isBase64Encoded") else body
        )
        self.internal_error = False  # a method failed inside a reply whose HTTP status is 200


def _reply(
    request: Request, status: int, body: Any = None, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    out = {
        "Cache-Control": "no-store",
        **services.origin_policy().cors_headers(request.headers.get("origin")),
    }
    out |= headers or {}
    if body is not None:
        out["Content-Type"] = "application/json"
    return {
        "statusCode": status,
        "headers": out,
        "isBase64Encoded": False,
        "body": "" if body is None else protocol.dumps(body),
    }


def _trusted_origin(request: Request) -> bool:
    """DNS-rebinding protection and the browser origin policy (svc_shared.origins): the Host must be the
    public host, and an Origin, when sent, an allowed one."""
    policy = services.origin_policy()
    return policy.host_allowed(request.headers.get("host")) and policy.origin_allowed(
        request.headers.get("origin")
    )


def _unauthorized(request: Request) -> dict[str, Any]:
    challenge = www_authenticate(
        services.public_base_url(), token_sent=bool(request.headers.get("authorization"))
    )
    message = "Unauthorized: a valid Bearer access token is required."
    return _reply(
        request, 401, protocol.error(None, protocol.UNAUTHORIZED, message), {"WWW-Authenticate": challenge}
    )


def _insufficient_scope(request: Request, id_: Any, tool: str, scopes: tuple[str, ...]) -> dict[str, Any]:
    """RFC 6750 §3.1: the token is valid but does not allow this tool; the challenge names the scope to ask
    for, so a client can step up."""
    challenge = www_authenticate(services.public_base_url(), token_sent=True, insufficient_scope=scopes[0])
    message = f"Forbidden: the tool {tool} needs the scope {' or '.join(scopes)}, which this token lacks."
    return _reply(
        request, 403, protocol.error(id_, protocol.UNAUTHORIZED, message), {"WWW-Authenticate": challenge}
    )


def _claims(request: Request) -> AccessClaims | None:
    """Who the bearer token says the caller is. Signed tokens are checked with no I/O (the gate then checks
    that the grant still holds them); a token of the earlier format is looked up by its hash."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    resource = resource_url(services.public_base_url())
    if is_signed_format(token):
        key = services.signing_key("mcp-access")
        return read_access_token(token, key, resource, services.clock().now())
    grant = services.grants().verify_access_token(token)
    if grant is None:
        return None
    return AccessClaims(grant.user_id, "", "", grant.client_id, grant.expires_at, grant.scope)


def _scope_refusal(request: Request, messages: list[Message | Refused], scope: str) -> dict[str, Any] | None:
    """The 403 for the first tool call the token's scope does not allow (checked before any I/O)."""
    for message in messages:
        if isinstance(message, Message) and message.method == "tools/call":
            name = message.arguments.get("name")
            tool = registry.tools.get(name) if isinstance(name, str) else None
            if tool is not None and not tool.allowed_by(scope):
                return _insufficient_scope(request, message.id, tool.name, tool.accepted_scopes)
    return None


def _era_problem(request: Request, parsed: protocol.Parsed) -> tuple[bool, dict[str, Any] | None]:
    """(stateless, the reply refusing the request or None), from the MCP-Protocol-Version header: absent or a
    handshake-era version is served as such; 2026-07-28 requests must carry a valid envelope; anything else
    is a version this server does not speak."""
    header = request.headers.get("mcp-protocol-version")
    version = header.strip() if header is not None else None
    first = parsed.messages[0]
    id_ = first.id if len(parsed.messages) == 1 and isinstance(first.id, str | int) else None
    if version is None or version in protocol.HANDSHAKE_VERSIONS:
        return False, None
    if version not in protocol.STATELESS_VERSIONS:
        return False, _reply(request, 400, protocol.unsupported_version(id_, version))
    if parsed.batch:
        message = "Invalid Request: protocol 2026-07-28 takes one JSON-RPC message per request, not a batch."
        return True, _reply(request, 400, protocol.error(None, protocol.INVALID_REQUEST, message))
    if first.notification:
        return True, None  # a notification: acknowledged below, whatever its envelope
    problem = protocol.check_stateless(parsed.messages[0], request.headers)
    if problem is not None:
        return True, _reply(request, protocol.http_status(problem), problem)
    return True, None


def rpc(request: Request) -> dict[str, Any]:
    if not _trusted_origin(request):
        return _reply(
            request,
            403,
            protocol.error(None, protocol.INVALID_REQUEST, "Forbidden: untrusted Host or Origin."),
        )
    claims = _claims(request)
    if claims is None:
        return _unauthorized(request)
    if len(request.body.encode()) > MAX_BODY:
        return _reply(
            request,
            413,
            protocol.error(None, protocol.INVALID_REQUEST, f"Request body over {MAX_BODY} bytes."),
        )
    parsed = protocol.parse(request.body)
    if parsed.failure is not None:
        return _reply(request, 400, parsed.failure)
    stateless, refusal = _era_problem(request, parsed)
    if refusal is not None:
        return refusal
    refusal = _scope_refusal(request, parsed.messages, claims.scope)
    if refusal is not None:
        return refusal
    # One conditional write: the token is still its grant's current one (not revoked, not rotated away),
    # and the request fits the user's sliding window. Each message of a batch counts as one request; a
    # batch that does not fit is refused whole.
    admission = services.grants().gate.admit(
        claims.user_id, claims.grant_id or None, claims.token_id or None, len(parsed.messages)
    )
    if admission.revoked:
        return _unauthorized(request)
    if not admission.allowed:
        wait = admission.retry_after
        message = f"Rate limit exceeded: {RATE_LIMIT} requests/min per user. Retry in {wait}s."
        return _reply(request, 429, protocol.error(None, -32000, message), {"Retry-After": str(wait)})
    # MCP Apps in the handshake era: the session id this server issued at an initialize that declared the
    # extension (svc_shared.mcp.apps); any other id is the transport's 404.
    ui = apps.session_ui(request.headers.get("mcp-session-id"), claims.user_id)
    if ui is None:
        return _reply(request, 404, protocol.error(None, protocol.INVALID_REQUEST, apps.UNKNOWN_SESSION))
    context = ToolContext(user_id=claims.user_id, client_id=claims.client_id, ui=ui)
    replies = [
        r
        for r in (dispatcher.handle(m, context, stateless=stateless) for m in parsed.messages)
        if r is not None
    ]
    request.internal_error = any(
        (r.get("error") or {}).get("code") == protocol.INTERNAL_ERROR for r in replies
    )
    if not replies:
        return _reply(request, 202)
    if stateless:
        return _reply(request, protocol.http_status(replies[0]), replies[0])
    session = apps.session_headers(parsed.messages, claims.user_id)
    return _reply(request, 200, replies if parsed.batch else replies[0], session)


def route(request: Request) -> dict[str, Any]:
    if request.method == "POST":
        return rpc(request)
    if request.method == "OPTIONS":
        policy = services.origin_policy()
        origin = request.headers.get("origin")
        if not policy.origin_allowed(origin):
            return _reply(
                request,
                403,
                protocol.error(None, protocol.INVALID_REQUEST, "Forbidden: untrusted Origin."),
                {"Vary": "Origin"},
            )
        return _reply(request, 204, headers=policy.preflight_headers(origin, "POST,OPTIONS"))
    return _reply(
        request, 405, protocol.error(None, protocol.INVALID_REQUEST, NOT_ALLOWED), {"Allow": "POST, OPTIONS"}
    )


def outcome(request: Request, status: int) -> str:
    """The request's outcome, as its metric counts it (svc_shared.metrics.MCP_OUTCOMES)."""
    if status >= 500 or request.internal_error:
        return "server_error"
    if status == 429:
        return "rate_limited"
    if status in (401, 403):
        return "denied"
    return "client_error" if status >= 400 else "ok"


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    started = time.perf_counter()
    services.bind_request(event)  # the public base URL API Gateway names in this request
    request = Request(event)
    with time_budget(REQUEST_BUDGET_SECONDS):  # API Gateway answers 504 at 29 s: finish well before
        try:
            response = route(request)
        except Exception:  # never a stack trace to the client; the log keeps it
            request_id = (event.get("requestContext") or {}).get("requestId")
            logger.exception("unhandled error", extra={"request_id": request_id})
            response = _reply(request, 500, protocol.error(None, protocol.INTERNAL_ERROR, "Internal error."))
    services.metrics().mcp_request(
        outcome(request, int(response["statusCode"])), time.perf_counter() - started
    )
    return response
