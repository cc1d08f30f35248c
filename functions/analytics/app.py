"""The analytics beacon and its aggregator.

`handler`: POST /api/analytics/collect — live sites report each pageview (public, cross-origin, no
credentials). The beacon is validated (its path and referrer to printable URL text), counted against its
client address's and its site's rate limits, and put on the analytics queue; the answer is 204 at once, the
same for a site that exists and one that does not (the aggregator drops the latter).
`aggregate`: the queue's consumer (an SQS event source mapping with a batching window): folds a batch and
writes the aggregates (svc_shared.domain.analytics: busy shops' day items, quiet shops' small day items, the other
shops' increments in one log item per group of shops, and the fold of a group's log into the day items when
it is due), reporting the messages whose writes failed so that only those are delivered again (partial
batch responses)."""

from __future__ import annotations

import re
import time
from typing import Any

from aws_lambda_powertools.event_handler import CORSConfig, Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared.core import errors
from svc_shared.core.logs import get_logger
from svc_shared.domain.analytics import Beacon, clean_path, clean_referrer
from svc_shared.domain.bodies import BeaconRequest
from svc_shared.edge import web
from svc_shared.wiring import services

logger = get_logger()
app = web.create_resolver(cors=CORSConfig(allow_origin="*", allow_headers=["Content-Type"], max_age=86400))
MAX_BODY = 4096
_COUNTRY = re.compile(r"^[A-Z]{2}$")
# Sites known to exist, with when they were checked: one read per site per aggregator container and 5 minutes,
# not per pageview. Beacons of a site that does not exist are dropped there; the collect route answers every
# valid beacon the same way (204), so it never tells whether a site exists.
KNOWN_SITE_SECONDS = 300
MAX_KNOWN_SITES = 10_000


class _KnownSites:
    def __init__(self) -> None:
        self._seen: dict[str, tuple[float, bool]] = {}

    def exists(self, site: str) -> bool:
        now = time.monotonic()
        seen = self._seen.get(site)
        if seen is not None and now - seen[0] <= KNOWN_SITE_SECONDS:
            return seen[1]
        try:
            services.projects().get(site)
            found = True
        except errors.NotFound:
            found = False
        if len(self._seen) >= MAX_KNOWN_SITES:
            self._seen.clear()
        self._seen[site] = (now, found)
        return found


known_sites = _KnownSites()


@app.post("/api/analytics/collect")
def collect() -> Response:
    if len(app.current_event.decoded_body or "") > MAX_BODY:
        raise errors.PayloadTooLarge(f"a beacon is at most {MAX_BODY} bytes")
    body = web.parse_body(app, BeaconRequest)
    path, referrer = clean_path(body.path or "/"), clean_referrer(body.referrer)
    country = (app.current_event.headers.get("cloudfront-viewer-country") or body.country).upper()
    services.analytics().admit(web.client_ip(app), body.site)
    beacon = Beacon(
        project_id=body.site,
        path=path,
        referrer=referrer,
        visitor=body.visitor,
        session=body.session,
        country=country if _COUNTRY.match(country) else "unknown",
        at=services.clock().now(),
    )
    services.current().aws.client("sqs").send_message(
        QueueUrl=services.settings().analytics_queue_url, MessageBody=beacon.message()
    )
    return Response(
        status_code=204,
        headers={"Cache-Control": "no-store", "Access-Control-Allow-Origin": "*"},
        body="",
    )


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)


@logger.inject_lambda_context
def aggregate(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """SQS batch in, the failed message ids out (`batchItemFailures`); a malformed message is logged and
    dropped (it would fail the same way every time)."""
    messages = []
    unknown = 0
    for record in event.get("Records", []):
        try:
            beacon = Beacon.from_message(record["body"])
        except (KeyError, TypeError, ValueError) as exc:
            logger.warning("analytics message dropped", extra={"reason": type(exc).__name__})
            continue
        if not known_sites.exists(beacon.project_id):
            unknown += 1  # a beacon for a site that does not exist: dropped, never stored
            continue
        messages.append((record["messageId"], beacon))
    if unknown:
        logger.info("analytics beacons of unknown sites dropped", extra={"dropped": unknown})
    result = services.analytics().apply(messages)
    logger.info(
        "analytics batch",
        extra={"beacons": len(messages), "writes": result.writes, "failed": len(result.failed_message_ids)},
    )
    return {"batchItemFailures": [{"itemIdentifier": i} for i in result.failed_message_ids]}
