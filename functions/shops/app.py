"""The hosted backoffice: every published shop at /shops/{projectId}/..., served by svc_backoffice.hosting on
that shop's own database. This handler finds the shop (svc_shared.shops) and hands the request over with a
path relative to the shop; everything else is the backoffice's."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared import errors, services
from svc_shared.logs import get_logger

logger = get_logger()


def _answer(status: int, body: dict[str, Any]) -> dict[str, Any]:
    """An answer in the backoffice's error shape (`{"error": ...}`)."""
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json", "Cache-Control": "no-store"},
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }


def shop_event(event: dict[str, Any]) -> dict[str, Any]:
    """The event as the backoffice sees it: its path is what follows /shops/{projectId}, taken from the proxy
    parameter (so a stage or a custom domain's base path in front makes no difference), `/` for the shop's
    root."""
    proxy = str((event.get("pathParameters") or {}).get("proxy") or "").lstrip("/")
    path = f"/{proxy}"
    context = {**(event.get("requestContext") or {}), "path": path, "resourcePath": "/{proxy+}"}
    return {
        **event,
        "path": path,
        "resource": "/{proxy+}",
        "pathParameters": {"proxy": proxy} if proxy else None,
        "requestContext": context,
    }


@functools.cache
def migrations_dir() -> Path:
    """The migrations of the backoffice version this deployment runs (the tree `make build` bundles into the
    shared layer; the repository's in development): each shop's database is brought to them when served."""
    from svc_shared.publish_template import template_root

    return template_root() / "migrations"


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    project_id = str((event.get("pathParameters") or {}).get("projectId") or "")
    request_id = (event.get("requestContext") or {}).get("requestId")
    try:
        found = services.shops().get(project_id)
    except errors.NotFound:
        return _answer(404, {"error": "Shop not found"})
    except Exception:  # the backoffice's 500 shape; the cause stays in the log
        logger.exception("the shop could not be resolved", extra={"project_id": project_id})
        return _answer(500, {"error": "internal error", "request_id": request_id})
    # Imported here, on the request path: the backoffice layer loads only when a shop is served.
    from svc_backoffice import hosting

    shop = hosting.Shop(
        id=found.id,
        base_url=found.base_url,
        conninfo=found.conninfo,
        session_key=found.session_key,
        field_key=found.field_key,
        handoff_public_keys=found.handoff_public_keys,
    )
    return hosting.handle(shop_event(event), context, shop, migrations_dir=migrations_dir())
