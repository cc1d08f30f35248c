"""The /mcp admission pipeline, as plain functions over the API Gateway proxy event: which requests reach the
tools, and the answer to each that does not.

In order, each step refusing with its own status and words: the Host and Origin (403), the bearer token (401),
the body size (413), the JSON-RPC parse (400), the MCP-Protocol-Version era and its envelope (400), each tool
call's scope (403, before any I/O), then one conditional write at the gate (the grant still holds the token,
401 if not; the user's sliding window, 429 with Retry-After). `admit` runs them all; `svc_shared.mcp.endpoint`
dispatches what it admits.

Kept free of Powertools' event handler: its import was the largest part of this hot endpoint's cold start.
"""

from __future__ import annotations

import base64
from typing import Any

from svc_shared.core.catalogue import say
from svc_shared.mcp import protocol
from svc_shared.mcp.messages import Message, Refused
from svc_shared.mcp.tools import registry
from svc_shared.oauth.mcpauth import RATE_LIMIT, AccessClaims, is_signed_format, read_access_token
from svc_shared.oauth.metadata import resource_url, www_authenticate
from svc_shared.wiring import services

MAX_BODY = 1024 * 1024


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


class Admitted:
    """A request through every step: who calls, its messages, and whether it is served statelessly
    (protocol 2026-07-28). A plain class: a dataclass would cost this cold start about a millisecond."""

    __slots__ = ("claims", "parsed", "stateless")

    def __init__(self, claims: AccessClaims, parsed: protocol.Parsed, stateless: bool) -> None:
        self.claims = claims
        self.parsed = parsed
        self.stateless = stateless


def reply(
    request: Request, status: int, body: Any = None, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """The proxy response: never cached, with the CORS headers the request's Origin is due."""
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


def refusal(
    request: Request, status: int, message: str, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """A JSON-RPC Invalid Request error with no id, in `message`'s words."""
    return reply(request, status, protocol.error(None, protocol.INVALID_REQUEST, message), headers)


def trusted_origin(request: Request) -> bool:
    """DNS-rebinding protection and the browser origin policy (svc_shared.wiring.origins): the Host must be the
    public host, and an Origin, when sent, an allowed one."""
    policy = services.origin_policy()
    return policy.host_allowed(request.headers.get("host")) and policy.origin_allowed(
        request.headers.get("origin")
    )


def unauthorized(request: Request) -> dict[str, Any]:
    challenge = www_authenticate(
        services.public_base_url(), token_sent=bool(request.headers.get("authorization"))
    )
    message = say("mcp.unauthorized")
    return reply(
        request, 401, protocol.error(None, protocol.UNAUTHORIZED, message), {"WWW-Authenticate": challenge}
    )


def insufficient_scope(request: Request, id_: Any, tool: str, scopes: tuple[str, ...]) -> dict[str, Any]:
    """RFC 6750 §3.1: the token is valid but does not allow this tool; the challenge names the scope to ask
    for, so a client can step up."""
    challenge = www_authenticate(services.public_base_url(), token_sent=True, insufficient_scope=scopes[0])
    message = say("mcp.insufficient_scope", tool=tool, scopes=" or ".join(scopes))
    return reply(
        request, 403, protocol.error(id_, protocol.UNAUTHORIZED, message), {"WWW-Authenticate": challenge}
    )


def claims(request: Request) -> AccessClaims | None:
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


def scope_refusal(request: Request, messages: list[Message | Refused], scope: str) -> dict[str, Any] | None:
    """The 403 for the first tool call the token's scope does not allow (checked before any I/O)."""
    for message in messages:
        if isinstance(message, Message) and message.method == "tools/call":
            name = message.arguments.get("name")
            tool = registry.tools.get(name) if isinstance(name, str) else None
            if tool is not None and not tool.allowed_by(scope):
                return insufficient_scope(request, message.id, tool.name, tool.accepted_scopes)
    return None


def era_problem(request: Request, parsed: protocol.Parsed) -> tuple[bool, dict[str, Any] | None]:
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
        return False, reply(request, 400, protocol.unsupported_version(id_, version))
    if parsed.batch:
        return True, refusal(request, 400, say("mcp.batch_not_stateless"))
    if first.notification:
        return True, None  # a notification: acknowledged by the endpoint, whatever its envelope
    problem = protocol.check_stateless(parsed.messages[0], request.headers)
    if problem is not None:
        return True, reply(request, protocol.http_status(problem), problem)
    return True, None


def admit(request: Request) -> Admitted | dict[str, Any]:
    """The POST through every step: Admitted, or the reply refusing it at the first step it fails."""
    if not trusted_origin(request):
        return refusal(request, 403, say("mcp.untrusted_host"))
    caller = claims(request)
    if caller is None:
        return unauthorized(request)
    if len(request.body.encode()) > MAX_BODY:
        return refusal(request, 413, say("mcp.body_too_large", max_body=MAX_BODY))
    parsed = protocol.parse(request.body)
    if parsed.failure is not None:
        return reply(request, 400, parsed.failure)
    stateless, refused = era_problem(request, parsed)
    if refused is not None:
        return refused
    refused = scope_refusal(request, parsed.messages, caller.scope)
    if refused is not None:
        return refused
    # One conditional write: the token is still its grant's current one (not revoked, not rotated away),
    # and the request fits the user's sliding window. Each message of a batch counts as one request; a
    # batch that does not fit is refused whole.
    gate = services.grants().gate.admit(
        caller.user_id, caller.grant_id or None, caller.token_id or None, len(parsed.messages)
    )
    if gate.revoked:
        return unauthorized(request)
    if not gate.allowed:
        wait = gate.retry_after
        message = say("mcp.rate_limited", limit=RATE_LIMIT, wait=wait)
        return reply(request, 429, protocol.error(None, -32000, message), {"Retry-After": str(wait)})
    return Admitted(caller, parsed, stateless)
