"""The publish sequence, one idempotent step per stage, driven by the Step Functions state machine
(statemachines/publish.asl.json). The stage recorded on the project is the source of truth: any execution
starts by reading it and resumes there. Every step runs under a per-project lease held by one execution, and
advances the stage with a write conditional on the stage it found, so two executions never run a stage twice.

Recovery after a crash between a provider call and the record write:
- db_creating: the project name `svc-{slug}` is looked up before creating, so a retry reuses it;
- migrations are recorded inside the merchant database (schema_migrations), so a retry applies only the rest;
- the repository name is deterministic and a taken name (422) is reused;
- the template commit is recognised on the branch head by its subject, so it is never pushed twice;
- the site is looked up by name before it is created.
"""

from __future__ import annotations

import random
from typing import Any

from svc_shared.core.catalogue import say
from svc_shared.core.errors import DomainError, RateLimited, UpstreamError
from svc_shared.core.logs import get_logger
from svc_shared.domain.connections import ReconnectRequired
from svc_shared.domain.projects import Project
from svc_shared.domain.publish_stages import PublishStages
from svc_shared.domain.publish_state import (
    LEASE_SECONDS,
    MAX_RATE_LIMIT_WAIT,
    RATE_LIMIT_BUDGET_SECONDS,
    STAGES,
    PublishBusy,
    PublishFailed,
    PublishState,
    PublishTransient,
    error_message,
    execution_name,
)
from svc_shared.providers.http import ProviderError
from svc_shared.storage import keys
from svc_shared.storage.dal import ConditionFailed, attr

logger = get_logger()


class Publisher(PublishStages):
    """Runs the stages (svc_shared.domain.publish_stages) for the state machine's task function: reads where a run
    starts, runs one stage under the project's lease, records why a run stopped."""

    # -- run control ----------------------------------------------------------------------------------------
    def read(self, project_id: str, execution: str) -> dict[str, Any]:
        project = self.projects.get(project_id, consistent=True)
        self._lease(project, execution)
        state = PublishState.of(project)
        stage = state.next_stage
        if not state.stage:
            self._advance(project, None, STAGES[0], execution)
        if stage == "ready":
            # A published project started again (an operator's resume): nothing to do, and it stays ready.
            self.projects.update(
                project,
                {
                    "publish_status": "ready",
                    "publish_error": None,
                    "publish_lease": None,
                    "publish_lease_until": None,
                },
            )
            return {"projectId": project.id, "stage": "ready", "wait": 0}
        # A run starting (or resuming) gets the whole readiness budget: a timeout of an earlier run is spent.
        self.projects.update(
            project,
            {
                "publish_status": "running",
                "publish_error": None,
                "publish_execution": execution,
                "publish_ready_deadline": None,
                "publish_limited_since": None,
            },
        )
        return {"projectId": project.id, "stage": str(stage), "wait": 0}

    def _lease(self, project: Project, execution: str) -> None:
        now = int(self.clock.now())
        try:
            self.table.update(
                keys.project(project.id),
                keys.META,
                set={"publish_lease": execution, "publish_lease_until": now + LEASE_SECONDS},
                when=attr("publish_lease").missing()
                | attr("publish_lease").eq(execution)
                | attr("publish_lease_until").lt(now),
            )
        except ConditionFailed:
            raise PublishBusy(say("publishing.lease_held")) from None

    def fail(self, project_id: str, execution: str, error: dict[str, Any] | None) -> str | None:
        """Record why the run stopped (the stage stays) and release the lease. The stage it stopped at, or
        None when there was nothing to record (another run holds the project, and this run was not the one
        the last press claimed)."""
        project = self.projects.get(project_id, consistent=True)
        state = PublishState.of(project)
        stage = state.next_stage
        if state.lease in (None, execution):
            self.projects.update(
                project,
                {
                    "publish_status": "failed",
                    "publish_error": error_message(error),
                    "publish_lease": None,
                    "publish_lease_until": None,
                },
            )
            return stage
        attempt = state.attempt
        if state.status != "starting" or not execution.endswith(":" + execution_name(project.id, attempt)):
            return None
        # The run a press claimed stopped before it could hold the project: the project says so (the lease
        # stays with its holder), so the page stops waiting and the next press starts a new run.
        busy = isinstance(error, dict) and error.get("Error") == "PublishBusy"
        message = say("publishing.busy_at_start") if busy else error_message(error)
        try:
            self.projects.update(
                project,
                {"publish_status": "failed", "publish_error": message},
                when=attr("publish_status").eq("starting") & attr("publish_attempt").eq(attempt),
            )
        except DomainError:
            return None  # a newer press claimed the project meanwhile
        return stage

    def step(self, project_id: str, stage: str, execution: str) -> dict[str, Any]:
        run = self.STEPS.get(stage)
        if run is None:
            raise ValueError(f"unknown publish stage {stage!r}; the stages are {', '.join(self.STEPS)}")
        project = self.projects.get(project_id, consistent=True)
        recorded = PublishState.of(project).stage
        if recorded != stage:
            return {
                "projectId": project.id,
                "stage": str(recorded),
                "wait": 0,
            }  # another run moved it on: follow the record
        self._lease(project, execution)
        try:
            next_stage = run(self, project, execution)
        except RateLimited as exc:
            return self._rate_limited(project, stage, exc)
        except UpstreamError as exc:
            raise PublishTransient(exc.message) from exc
        except ReconnectRequired as exc:
            missing = say("publishing.repo_host_missing") if exc.provider == "repo_host" else exc.message
            raise PublishFailed(missing) from exc
        except ProviderError as exc:
            raise PublishFailed(exc.message) from exc
        if next_stage == "ready":
            self.projects.update(
                self.projects.get(project.id, consistent=True),
                {
                    "publish_status": "ready",
                    "publish_lease": None,
                    "publish_lease_until": None,
                    "status": "published",
                },
            )
        return {"projectId": project.id, "stage": next_stage, "wait": 0}

    def _rate_limited(self, project: Project, stage: str, exc: RateLimited) -> dict[str, Any]:
        """A provider said to come back later: the stage is run again after Retry-After (the state machine's
        Wait), unless this run has been limited for RATE_LIMIT_BUDGET_SECONDS in a row."""
        now = int(self.clock.now())
        current = self.projects.get(project.id, consistent=True)
        since = PublishState.of(current).limited_since
        if since is None:
            since = now
        elif now - since >= RATE_LIMIT_BUDGET_SECONDS:
            raise PublishFailed(exc.message) from exc
        wait = min(max(1, exc.retry_after), MAX_RATE_LIMIT_WAIT)
        wait += random.randint(0, max(1, wait // 5))
        self.projects.update(current, {"publish_limited_since": since})
        logger.info("publish step rate limited", extra={"stage": stage, "wait": wait})
        return {"projectId": project.id, "stage": stage, "wait": wait}
