"""The publish state machine's task function: one call per stage (plus `read` at the start of a run and
`fail` when a run stops). Errors are raised for the state machine: PublishTransient is retried,
PublishFailed stops the run at its stage, PublishBusy means another execution holds the project."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared import services
from svc_shared.logs import get_logger

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
        publisher.fail(project_id, execution, event.get("error"))
        return {"projectId": project_id}
    result = publisher.step(project_id, str(step), execution)
    logger.info("publish step done", extra={"next_stage": result["stage"]})
    return result
