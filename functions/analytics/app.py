"""The analytics beacon: live sites report each pageview here (public, cross-origin, no credentials)."""

from __future__ import annotations

import re
from typing import Any

from aws_lambda_powertools.event_handler import CORSConfig, Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared import errors, services, web
from svc_shared.analytics import Beacon
from svc_shared.logs import get_logger

logger = get_logger()
app = web.create_resolver(cors=CORSConfig(allow_origin="*", allow_headers=["Content-Type"], max_age=86400))
MAX_BODY = 4096
_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
_COUNTRY = re.compile(r"^[A-Z]{2}$")


def _text(body: dict[str, Any], name: str, limit: int, default: str = "") -> str:
    value = body.get(name, default)
    if not isinstance(value, str) or len(value) > limit:
        raise errors.InvalidInput(f"{name} must be a string of at most {limit} characters")
    return value


@app.post("/api/analytics/collect")
def collect() -> Response:
    if len(app.current_event.decoded_body or "") > MAX_BODY:
        raise errors.PayloadTooLarge(f"a beacon is at most {MAX_BODY} bytes")
    body = web.json_body(app)
    project_id = _text(body, "site", 64)
    visitor, session = _text(body, "visitor", 64), _text(body, "session", 64)
    if not all(_ID.match(v) for v in (project_id, visitor, session)):
        raise errors.InvalidInput("site, visitor and session must be ids of 8 to 64 letters, digits, - or _")
    path = _text(body, "path", 512, "/") or "/"
    if not path.startswith("/"):
        raise errors.InvalidInput("path must start with /")
    country = (
        app.current_event.headers.get("cloudfront-viewer-country") or _text(body, "country", 2)
    ).upper()
    services.projects().get(project_id)  # unknown sites are refused, not counted
    services.analytics().record(
        Beacon(
            project_id=project_id,
            path=path.split("?")[0][:512],
            referrer=_text(body, "referrer", 1024),
            visitor=visitor,
            session=session,
            country=country if _COUNTRY.match(country) else "unknown",
        )
    )
    return Response(status_code=204, headers={"Cache-Control": "no-store"}, body="")


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
