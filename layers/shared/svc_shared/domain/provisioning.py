"""The provision route's logic: who may publish, and starting or resuming the publish execution so that at
most one runs per project.

A publish is never left waiting on a run that is gone: a launch that fails, or a run that stops before it
could record anything (its task function unreachable, another run holding the project), is recorded on the
project as failed with the reason in words, and the next press claims a new attempt (a new execution name)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.errors import Conflict, PaymentRequired
from svc_shared.core.logs import get_logger
from svc_shared.core.metrics import Metrics
from svc_shared.domain.accounts import User
from svc_shared.domain.projects import Project, Projects
from svc_shared.domain.publish_state import PublishRecord, PublishState, execution_name

logger = get_logger()
REPO_STAGES = {"repo_host_creating_repo", "repo_host_pushing_template"}
# A press claims an attempt, then starts its run within the same request (functions time out at 25 s): a claim
# older than this whose run does not exist was left by a press that died in between.
CLAIM_GRACE_SECONDS = 60


@dataclass(eq=False)
class Provisioning:
    projects: Projects
    clock: Clock
    _: KW_ONLY
    sfn: Any = field(repr=False)  # the Step Functions client, made when first used
    state_machine_arn: str
    # Called before each execution starts: records the public base URL for the publish steps, which
    # run outside any request (an execution's input is only {"projectId"}, as an operator may start one).
    before_launch: Callable[[], None] = lambda: None
    metrics: Metrics
    record: PublishRecord = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.record = PublishRecord(self.projects, self.clock)

    def provision(self, user: User, project_id: str, *, start: bool) -> dict[str, Any]:
        if user.plan != "paid":  # says nothing about the project, so it can come first
            raise PaymentRequired(say("publishing.upgrade_required"), code="UPGRADE_REQUIRED")
        project = self.projects.owned(project_id, user.id, consistent=True)
        state = PublishState.of(project)
        if start and state.stage != "ready":
            if state.status == "starting":
                # Another press claimed an attempt and may not have started (or recorded) its run yet.
                project = self._launch(project)
            elif not self._running(project):
                project = self._start(project)
        else:
            project = self._settle(project)
        return self.report(project)

    def _running(self, project: Project) -> bool:
        """Whether the run this project last started, or the last run that read it (an operator's resume
        included), is still running."""
        state = PublishState.of(project)
        for arn in {state.execution_arn, state.execution}:
            described = self._describe(str(arn)) if arn else None
            if described is not None and described["status"] == "RUNNING":
                return True
        return False  # an unknown or unreadable execution is not running: the lease guards a second run

    def _describe(self, arn: str) -> dict[str, Any] | None:
        """The execution (None when there is no such execution; status UNKNOWN when it cannot be read)."""
        sfn = self.sfn()
        try:
            described: dict[str, Any] = sfn.describe_execution(executionArn=arn)
        except sfn.exceptions.ExecutionDoesNotExist:
            return None
        except Exception as exc:  # noqa: BLE001 - unreadable now (throttled, unreachable): assume it lives
            logger.warning("describe_execution failed", extra={"reason": type(exc).__name__})
            return {"status": "UNKNOWN"}
        return described

    def _start(self, project: Project) -> Project:
        """Claim the next attempt with a conditional write (of two presses reading the same attempt, one
        wins; the other reports), then launch it."""
        try:
            project = self.record.claim(project)
        except Conflict:
            return self.record.load(project.id)
        return self._launch(project)

    def _launch(self, project: Project) -> Project:
        """Start the claimed attempt's execution. Its name is the attempt's, and Step Functions runs a name
        once (the same name and input give back the running execution), so presses that find a claim whose
        run is starting, or whose claimer failed before starting it, all end with that one execution."""
        self.before_launch()
        sfn = self.sfn()
        try:
            started = sfn.start_execution(
                stateMachineArn=self.state_machine_arn,
                name=execution_name(project.id, PublishState.of(project).attempt),
                input=json.dumps({"projectId": project.id}),
            )
        except sfn.exceptions.ExecutionAlreadyExists:
            # That run has already ended: report what it left, or that it stopped before recording anything.
            return self._settle(self.record.load(project.id))
        except Exception as exc:  # noqa: BLE001 - any refusal: throttled, denied, no such machine, unreachable
            reason = _error_code(exc)
            logger.warning("start_execution failed", extra={"project_id": project.id, "reason": reason})
            return self._stopped(project, "starting", say("publishing.launch_failed", reason=reason))
        return self.record.launched(project, started["executionArn"])

    def _settle(self, project: Project) -> Project:
        """A project waiting on a run (starting or running) whose run has ended without recording its outcome
        is recorded as failed, with the reason. Costs a read of the execution only when the record is in
        doubt: a claim (short-lived), or a run whose lease, renewed at every step, has run out."""
        state = PublishState.of(project)
        status = state.status
        now = int(self.clock.now())
        if status == "starting":
            arn = self._execution_arn(execution_name(project.id, state.attempt))
            described = self._describe(arn)
            if described is None:
                if state.claimed_at is not None and now - state.claimed_at <= CLAIM_GRACE_SECONDS:
                    return project  # its press is still starting it
                return self._stopped(project, "starting", say("publishing.not_launched"))
        elif status == "running":
            arn = state.execution or ""
            if (state.lease_until is not None and state.lease_until >= now) or not arn:
                return project
            described = self._describe(arn)
            if described is None:
                return project
        else:
            return project
        if described["status"] in ("RUNNING", "UNKNOWN"):
            return project
        error = str(described.get("error") or described["status"])
        logger.warning(
            "publish run ended without recording its outcome",
            extra={
                "project_id": project.id,
                "execution": arn,
                "error": error,
                "cause": described.get("cause"),
            },
        )
        if error == "PublishBusy":
            message = say("publishing.busy_at_start")
        elif status == "starting":
            message = say("publishing.stopped_before_start", reason=error)
        else:
            message = say("publishing.stopped_unrecorded", reason=error)
        return self._stopped(project, status, message)

    def _stopped(self, project: Project, seen: str, message: str) -> Project:
        """Record that the run this project waits on is gone, unless the record moved on meanwhile."""
        try:
            project = self.record.stopped(project, seen, message)
        except Conflict:
            return self.record.load(project.id)
        self.metrics.publish_failed(PublishState.of(project).next_stage)
        return project

    def _execution_arn(self, name: str) -> str:
        """The ARN of this state machine's execution `name` (...:stateMachine:M -> ...:execution:M:name)."""
        return f"{self.state_machine_arn.replace(':stateMachine:', ':execution:', 1)}:{name}"

    @staticmethod
    def report(project: Project) -> dict[str, Any]:
        state = PublishState.of(project)
        never_published = not state.attempt and not state.stage  # nothing claimed, nothing run
        status = "not_started" if never_published else state.status or "starting"
        stage = state.next_stage
        error = state.error
        if error and stage in REPO_STAGES:
            logger.info("repo_host stage failed", extra={"project_id": project.id, "raw_error": error})
            # the publish view shows one fixed message; the raw error is logged
            error = say("publishing.repo_stage_failed")
        return {
            "success": status != "failed",
            "projectId": project.id,
            "stage": stage,
            "status": status,
            "error": error,
            "done": stage == "ready",
            "live_url": project.live_url if stage == "ready" else None,
            "poll_after_ms": 3000,
        }


def _error_code(exc: Exception) -> str:
    """The service's error code of a botocore error (never its message, which may quote the request)."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = (response.get("Error") or {}).get("Code")
        if isinstance(code, str) and code:
            return code
    return type(exc).__name__
