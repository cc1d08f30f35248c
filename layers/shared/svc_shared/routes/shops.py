"""The hosted backoffice's one route, /shops/{projectId}/...: which shop a request is for (the backoffice's own
`Shop`, from the Shops service), the event as the backoffice sees it (the path below the shop), and the
answers given before the backoffice is reached. functions/shops/app.py hands the request over to
svc_backoffice.hosting.shops, which only a function may import."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from svc_shared.core import errors
from svc_shared.core.logs import get_logger
from svc_shared.domain.handoff import PROJECT_ID
from svc_shared.wiring import services

if TYPE_CHECKING:
    from svc_backoffice.core.tenancy import Shop

logger = get_logger()

# What a shop that is not there serves (svc_shared.domain.shops.Shops.absent).
ABSENT_SHOP_PATHS = ("auth/sso", "auth/signed-out")


def answer(status: int, body: dict[str, Any]) -> dict[str, Any]:
    """An answer in the backoffice's error shape (`{"error": ...}`)."""
    return {
        "statusCode": status,
        "headers": {
            "Content-Type": "application/json",
            "Cache-Control": "no-store",
            # As every answer of the backoffice (svc_backoffice.web.SECURITY_HEADERS).
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; "
            "form-action 'none'",
        },
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }


def find(event: dict[str, Any]) -> Shop | dict[str, Any]:
    """The shop the request names, or the answer (a dict) when there is none (404) or it cannot be resolved
    (500, naming the request id; the cause stays in the log)."""
    project_id = str((event.get("pathParameters") or {}).get("projectId") or "")
    request_id = (event.get("requestContext") or {}).get("requestId")
    try:
        return services.shops().get(project_id)
    except errors.NotFound:
        # Its sign-in pages answer as a published shop's do to someone it has not invited: the platform sends
        # whoever may not open a project here, whether it exists, is published or not.
        proxy = str((event.get("pathParameters") or {}).get("proxy") or "").strip("/")
        if proxy in ABSENT_SHOP_PATHS and PROJECT_ID.fullmatch(project_id):
            return services.shops().absent(project_id, f"{services.public_base_url()}/shops/{project_id}")
        return answer(404, {"error": "Shop not found"})
    except Exception:  # the backoffice's 500 shape; the cause stays in the log
        logger.exception("the shop could not be resolved", extra={"project_id": project_id})
        return answer(500, {"error": "internal error", "request_id": request_id})


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
