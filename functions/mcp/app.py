"""The MCP tool server endpoint: one JSON-RPC 2.0 message or batch per POST, Bearer-authenticated.

This function serves one path, so it answers the proxy event directly instead of through Powertools'
resolver: the resolver's import (about 90 ms here) was the largest part of this hot endpoint's cold start.
The admission pipeline (origin, token, size, version, scope, gate) is svc_shared.mcp.admission; the routing
and dispatch, svc_shared.mcp.endpoint.

Every request is measured (`services.metrics()`, svc_shared/core/metrics.py): its latency and its outcome (ok,
client error, denied, rate limited, server error), whatever API type serves it.
"""

from __future__ import annotations

import time
from typing import Any

from svc_shared.core.logs import get_logger
from svc_shared.mcp import endpoint
from svc_shared.mcp.admission import Request
from svc_shared.providers.http import REQUEST_BUDGET_SECONDS, time_budget
from svc_shared.wiring import services

logger = get_logger()


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    started = time.perf_counter()
    services.bind_request(event)  # the public base URL API Gateway names in this request
    request = Request(event)
    with time_budget(REQUEST_BUDGET_SECONDS):  # API Gateway answers 504 at 29 s: finish well before
        try:
            response = endpoint.route(request)
        except Exception:  # never a stack trace to the client; the log keeps it
            request_id = (event.get("requestContext") or {}).get("requestId")
            logger.exception("unhandled error", extra={"request_id": request_id})
            response = endpoint.internal_error(request)
    status = int(response["statusCode"])
    services.metrics().mcp_request(endpoint.outcome(request, status), time.perf_counter() - started)
    return response
