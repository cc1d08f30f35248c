"""The analytics beacon: live sites report each pageview here (public, cross-origin, no credentials)."""

from __future__ import annotations

import re
from typing import Any

from aws_lambda_powertools.event_handler import CORSConfig, Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared import errors, services, web
from svc_shared.analytics import Beacon
from svc_shared.bodies import BeaconRequest
from svc_shared.logs import get_logger

logger = get_logger()
app = web.create_resolver(cors=CORSConfig(allow_origin="*", allow_headers=["Content-Type"], max_age=86400))
MAX_BODY = 4096
_COUNTRY = re.compile(r"^[A-Z]{2}$")


@app.post("/api/analytics/collect")
def collect() -> Response:
    if len(app.current_event.decoded_body or "") > MAX_BODY:
        raise errors.PayloadTooLarge(f"a beacon is at most {MAX_BODY} bytes")
    body = web.parse_body(app, BeaconRequest)
    country = (app.current_event.headers.get("cloudfront-viewer-country") or body.country).upper()
    services.projects().get(body.site)  # unknown sites are refused, not counted
    services.analytics().record(
        Beacon(
            project_id=body.site,
            path=(body.path or "/").split("?")[0],
            referrer=body.referrer,
            visitor=body.visitor,
            session=body.session,
            country=country if _COUNTRY.match(country) else "unknown",
        )
    )
    return Response(status_code=204, headers={"Cache-Control": "no-store"}, body="")


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
