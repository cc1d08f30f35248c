"""The provision route's logic: who may publish, and starting or resuming the publish execution so that at
most one runs per project."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from svc_shared.accounts import User
from svc_shared.clock import Clock
from svc_shared.errors import Conflict, PaymentRequired
from svc_shared.logs import get_logger
from svc_shared.projects import Project, Projects
from svc_shared.publishing import REPO_STAGE_MESSAGE, STAGES

logger = get_logger()
UPGRADE_MESSAGE = (
    "La publication nécessite un abonnement payant. Passez à l'offre payante pour publier votre boutique."
)
REPO_STAGES = {"repo_host_creating_repo", "repo_host_pushing_template"}


class Provisioning:
    def __init__(
        self,
        projects: Projects,
        clock: Clock,
        *,
        sfn: Any,
        state_machine_arn: str,
        before_launch: Callable[[], None] = lambda: None,
    ) -> None:
        self._projects = projects
        self._clock = clock
        self._sfn = sfn
        self._arn = state_machine_arn
        # Called before each execution starts: records the public base URL for the publish steps, which
        # run outside any request (an execution's input is only {"projectId"}, as an operator may start one).
        self._before_launch = before_launch

    def provision(self, user: User, project_id: str, *, start: bool) -> dict[str, Any]:
        if user.plan != "paid":  # says nothing about the project, so it can come first
            raise PaymentRequired(UPGRADE_MESSAGE, code="UPGRADE_REQUIRED")
        project = self._projects.owned(project_id, user.id, consistent=True)
        if start and project.extra.get("publish_stage") != "ready":
            if project.extra.get("publish_status") == "starting":
                # Another press claimed an attempt and may not have started (or recorded) its run yet.
                project = self._launch(project)
            elif not self._running(project):
                project = self._start(project)
        return self.report(project)

    def _running(self, project: Project) -> bool:
        arn = project.extra.get("publish_execution_arn")
        if not arn:
            return False
        try:
            status = self._sfn().describe_execution(executionArn=arn)["status"]
        except Exception as exc:  # noqa: BLE001 - an unknown execution is not running
            logger.warning("describe_execution failed", extra={"reason": type(exc).__name__})
            return False
        return bool(status == "RUNNING")

    def _start(self, project: Project) -> Project:
        """Claim the next attempt with a conditional write (of two presses reading the same attempt, one
        wins; the other reports), then launch it."""
        attempt = int(project.extra.get("publish_attempt") or 0)
        try:
            project = self._projects.update(
                project,
                {"publish_attempt": attempt + 1, "publish_status": "starting", "publish_error": None},
                condition="attribute_not_exists(publish_attempt) OR publish_attempt = :seen",
                values={":seen": attempt},
            )
        except Conflict:
            return self._projects.get(project.id, consistent=True)
        return self._launch(project)

    def _launch(self, project: Project) -> Project:
        """Start the claimed attempt's execution. Its name is the attempt's, and Step Functions runs a name
        once (the same name and input give back the running execution), so presses that find a claim whose
        run is starting, or whose claimer failed before starting it, all end with that one execution."""
        self._before_launch()
        sfn = self._sfn()
        try:
            started = sfn.start_execution(
                stateMachineArn=self._arn,
                name=f"{project.id}-{int(project.extra['publish_attempt'])}",
                input=json.dumps({"projectId": project.id}),
            )
        except sfn.exceptions.ExecutionAlreadyExists:  # that run has already finished: report what it left
            return self._projects.get(project.id, consistent=True)
        if project.extra.get("publish_execution_arn") == started["executionArn"]:
            return project
        return self._projects.update(project, {"publish_execution_arn": started["executionArn"]})

    @staticmethod
    def report(project: Project) -> dict[str, Any]:
        if not project.extra.get("publish_attempt") and not project.extra.get("publish_stage"):
            status = "not_started"  # never published: nothing claimed, nothing run
        else:
            status = project.extra.get("publish_status") or "starting"
        stage = project.extra.get("publish_stage") or STAGES[0]
        error = project.extra.get("publish_error")
        if error and stage in REPO_STAGES:
            logger.info("repo_host stage failed", extra={"project_id": project.id, "raw_error": error})
            error = REPO_STAGE_MESSAGE  # the publish view shows one fixed message; the raw error is logged
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
