"""Lambda entries of the analytics: `handler`, the beacon route (svc_shared.routes.analytics), and
`aggregate`, the analytics queue's consumer (an SQS event source mapping with a batching window and partial
batch responses: only the messages whose writes failed are delivered again; svc_shared.domain.analytics.intake)
and, once a day on a schedule, the fold of the whole shared log."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared.core.logs import get_logger
from svc_shared.edge import web
from svc_shared.routes import analytics
from svc_shared.wiring import services

logger = get_logger()
app = web.create_app(analytics.router, cors=analytics.CORS)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)


@logger.inject_lambda_context
def aggregate(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """SQS batch in, the failed message ids out (`batchItemFailures`); the daily schedule (an EventBridge
    event) folds every group of the shared log, so a group whose shops went quiet never waits out its 8 days."""
    if event.get("source") == "aws.events":
        return {"writes": services.analytics().compact_all()}
    from svc_shared.domain.analytics import (
        intake,  # the consumer's alone: the beacon's cold start does without it
    )

    failed = intake.consume(event.get("Records", []), services.known_sites(), services.analytics())
    return {"batchItemFailures": [{"itemIdentifier": i} for i in failed]}
