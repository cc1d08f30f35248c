"""The analytics beacon: POST /api/analytics/collect, where live sites report each pageview (public,
cross-origin, no credentials). The beacon is validated (its path and referrer to printable URL text), counted
against its client address's and its site's rate limits, and put on the analytics queue; the answer is 204 at
once, the same for a site that exists and one that does not (the aggregator drops the latter,
svc_shared.domain.analytics.intake). Served by functions/analytics/app.py."""

from __future__ import annotations

import re

from aws_lambda_powertools.event_handler import CORSConfig, Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.domain.analytics import Beacon, clean_path, clean_referrer
from svc_shared.domain.bodies import BeaconRequest
from svc_shared.edge import web
from svc_shared.wiring import services

router = Router()
# Any site may send a beacon, with a JSON body and no credentials.
CORS = CORSConfig(allow_origin="*", allow_headers=["Content-Type"], max_age=86400)
MAX_BODY = 4096
_COUNTRY = re.compile(r"^[A-Z]{2}$")


@router.post("/api/analytics/collect")
def collect() -> Response:
    if len(router.current_event.decoded_body or "") > MAX_BODY:
        raise errors.PayloadTooLarge(say("http.beacon_too_large", max_body=MAX_BODY))
    body = web.parse_body(router, BeaconRequest)
    path, referrer = clean_path(body.path or "/"), clean_referrer(body.referrer)
    country = (router.current_event.headers.get("cloudfront-viewer-country") or body.country).upper()
    services.analytics().admit(web.client_ip(router), body.site)
    services.beacon_queue().put(
        Beacon(
            project_id=body.site,
            path=path,
            referrer=referrer,
            visitor=body.visitor,
            session=body.session,
            country=country if _COUNTRY.match(country) else "unknown",
            at=services.clock().now(),
        )
    )
    return Response(
        status_code=204,
        headers={"Cache-Control": "no-store", "Access-Control-Allow-Origin": "*"},
        body="",
    )
