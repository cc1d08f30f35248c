"""The /mcp endpoint, one path answered from the proxy event directly: POST (admitted by
svc_shared.mcp.admission, then dispatched), the CORS preflight, and 405 for any other method. Also what a
request's metric counts it as (`outcome`). functions/mcp/app.py only binds the request, keeps the time budget
and measures.

Kept free of Powertools' event handler: its import was the largest part of this hot endpoint's cold start."""

from __future__ import annotations

from typing import Any

from svc_shared.core.catalogue import say
from svc_shared.edge import pages
from svc_shared.mcp import apps, protocol
from svc_shared.mcp.admission import Admitted, Request, admit, refusal, reply
from svc_shared.mcp.registry import ToolContext
from svc_shared.mcp.tools import registry
from svc_shared.wiring import services


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


def rpc(request: Request) -> dict[str, Any]:
    """A POST: its messages dispatched once admitted, their replies in one answer (202 when none is due)."""
    admitted = admit(request)
    if not isinstance(admitted, Admitted):
        return admitted
    claims = admitted.claims
    # MCP Apps in the handshake era: the session id this server issued at an initialize that declared the
    # extension (svc_shared.mcp.apps); any other id is the transport's 404.
    ui = apps.session_ui(request.headers.get("mcp-session-id"), claims.user_id)
    if ui is None:
        return refusal(request, 404, say("mcp.unknown_session"))
    context = ToolContext(user_id=claims.user_id, client_id=claims.client_id, ui=ui)
    stateless, parsed = admitted.stateless, admitted.parsed
    replies = [
        r
        for r in (dispatcher.handle(m, context, stateless=stateless) for m in parsed.messages)
        if r is not None
    ]
    request.internal_error = any(
        (r.get("error") or {}).get("code") == protocol.INTERNAL_ERROR for r in replies
    )
    if not replies:
        return reply(request, 202)
    if stateless:
        return reply(request, protocol.http_status(replies[0]), replies[0])
    session = apps.session_headers(parsed.messages, claims.user_id)
    return reply(request, 200, replies if parsed.batch else replies[0], session)


def route(request: Request) -> dict[str, Any]:
    if request.method == "POST":
        return rpc(request)
    if request.method == "OPTIONS":
        policy = services.origin_policy()
        origin = request.headers.get("origin")
        if not policy.origin_allowed(origin):
            return refusal(request, 403, say("mcp.untrusted_origin"), {"Vary": "Origin"})
        return reply(request, 204, headers=policy.preflight_headers(origin, "POST,OPTIONS"))
    if request.method == "GET" and pages.wants_page(request.headers):
        return page(request)
    return refusal(request, 405, say("mcp.method_not_allowed"), {"Allow": "POST, OPTIONS"})


def page(request: Request) -> dict[str, Any]:
    """A browser's GET: a page saying what this address is for, not a JSON-RPC error."""
    base = services.public_base_url()
    html = pages.mcp_page(mcp_url=f"{base}/mcp", access_url=f"{base}/workspace/mcp")
    headers = {"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": pages.PAGE_CSP}
    return {"statusCode": 200, "headers": {"Cache-Control": "no-store", **headers}, "body": html}


def internal_error(request: Request) -> dict[str, Any]:
    """The 500 for an unexpected failure: no stack trace to the client (the log keeps it)."""
    return reply(request, 500, protocol.error(None, protocol.INTERNAL_ERROR, say("mcp.internal_error")))


def outcome(request: Request, status: int) -> str:
    """The request's outcome, as its metric counts it (svc_shared.core.metrics.MCP_OUTCOMES)."""
    if status >= 500 or request.internal_error:
        return "server_error"
    if status == 429:
        return "rate_limited"
    if status in (401, 403):
        return "denied"
    return "client_error" if status >= 400 else "ok"
