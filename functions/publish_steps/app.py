"""The publish state machine's task function: one call per stage (plus `read` at the start of a run and
`fail` when a run stops). Errors are raised for the state machine: PublishTransient is retried,
PublishFailed stops the run at its stage, PublishBusy means another execution holds the project.

Metrics (`services.metrics()`, svc_shared/core/metrics.py): every step's duration by stage, a run reaching ready,
and a failure the project records (by the stage it stopped at)."""

from __future__ import annotations

import time
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared.core.logs import get_logger
from svc_shared.wiring import services

logger = get_logger()


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    step, project_id, execution = event.get("step"), event.get("projectId"), event.get("execution")
    if not isinstance(project_id, str) or not isinstance(execution, str):
        raise ValueError("the task input needs projectId and execution")
    logger.append_keys(project_id=project_id, step=step)
    publisher = services.publisher()
    if step == "read":
        return publisher.read(project_id, execution)
    if step == "fail":
        stopped_at = publisher.fail(project_id, execution, event.get("error"))
        if stopped_at is not None:
            services.metrics().publish_failed(stopped_at)
        return {"projectId": project_id}
    started = time.perf_counter()
    next_stage = None
    try:
        result = publisher.step(project_id, str(step), execution)
        next_stage = result["stage"]
    finally:
        if step in publisher.STEPS:  # an unknown step name is refused by name, not measured
            services.metrics().publish_step(str(step), time.perf_counter() - started, next_stage)
    logger.info("publish step done", extra={"next_stage": next_stage})
    return result
