"""The way in of the analytics: the collect route's queue of beacons, and the queue's consumer.

`BeaconQueue` puts a validated beacon on the analytics queue (SQS, through the container's AWS clients).
`consume` is the aggregator's body: it reads an SQS batch, drops what cannot be stored (a malformed message
would fail the same way every time; a beacon of a site that does not exist is never stored), applies the rest
(`Analytics.apply`) and names the messages whose writes failed, so that only those are delivered again.
`KnownSites` remembers which sites exist, held by the services container: one read per site per aggregator
container and 5 minutes, not per pageview. The collect route answers every valid beacon the same way (204),
so it never tells whether a site exists; the aggregator drops those of unknown sites."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from svc_shared.core import errors
from svc_shared.core.clock import Clock
from svc_shared.core.logs import get_logger
from svc_shared.domain.analytics.beacon import Beacon

if TYPE_CHECKING:
    from svc_shared.domain.analytics import Analytics
    from svc_shared.domain.projects import Projects

logger = get_logger()
KNOWN_SITE_SECONDS = 300
MAX_KNOWN_SITES = 10_000


class BeaconQueue:
    """The analytics queue, on the container's SQS client (made on the first beacon)."""

    def __init__(self, sqs: Callable[[], Any], queue_url: str) -> None:
        self._sqs = sqs
        self._queue_url = queue_url

    def put(self, beacon: Beacon) -> None:
        self._sqs().send_message(QueueUrl=self._queue_url, MessageBody=beacon.message())


class KnownSites:
    """Whether a site (a project id) exists, each answer kept for KNOWN_SITE_SECONDS (at most MAX_KNOWN_SITES
    answers; all are forgotten when that is reached)."""

    def __init__(self, projects: Projects, clock: Clock) -> None:
        self._projects = projects
        self._clock = clock
        self._seen: dict[str, tuple[float, bool]] = {}

    def exists(self, site: str) -> bool:
        now = self._clock.now()
        seen = self._seen.get(site)
        if seen is not None and now - seen[0] <= KNOWN_SITE_SECONDS:
            return seen[1]
        try:
            self._projects.get(site)
            found = True
        except errors.NotFound:
            found = False
        if len(self._seen) >= MAX_KNOWN_SITES:
            self._seen.clear()
        self._seen[site] = (now, found)
        return found


def consume(records: Iterable[Mapping[str, Any]], known: KnownSites, analytics: Analytics) -> list[str]:
    """An SQS batch's records in, the ids of the messages whose writes failed out; a malformed message is
    logged and dropped, a beacon of a site that does not exist dropped."""
    messages = []
    unknown = 0
    for record in records:
        try:
            beacon = Beacon.from_message(record["body"])
        except (KeyError, TypeError, ValueError) as exc:
            logger.warning("analytics message dropped", extra={"reason": type(exc).__name__})
            continue
        if not known.exists(beacon.project_id):
            unknown += 1
            continue
        messages.append((record["messageId"], beacon))
    if unknown:
        logger.info("analytics beacons of unknown sites dropped", extra={"dropped": unknown})
    result = analytics.apply(messages)
    logger.info(
        "analytics batch",
        extra={"beacons": len(messages), "writes": result.writes, "failed": len(result.failed_message_ids)},
    )
    return result.failed_message_ids
