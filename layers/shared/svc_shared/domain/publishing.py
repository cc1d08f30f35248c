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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from svc_shared.core.catalogue import say
from svc_shared.core.errors import DomainError, RateLimited, UpstreamError
from svc_shared.core.logs import get_logger
from svc_shared.domain.connections import ReconnectRequired
from svc_shared.domain.projects import Project
from svc_shared.domain.publish_stages import PublishStages
from svc_shared.domain.publish_state import (
    MAX_RATE_LIMIT_WAIT,
    RATE_LIMIT_BUDGET_SECONDS,
    STAGES,
    PublishFailed,
    PublishState,
    PublishStopped,
    PublishTransient,
    error_message,
    execution_name,
)
from svc_shared.providers.http import ProviderError

logger = get_logger()


@dataclass(eq=False)
class Publisher:
    """Runs the stages (svc_shared.domain.publish_stages) for the state machine's task function: reads where a run
    starts, runs one stage under the project's lease, records why a run stopped. What it records goes through the
    stages' publish record (svc_shared.domain.publish_state.PublishRecord), on the stages' clock."""

    stages: PublishStages

    # Each stage's step, by the name the state machine and the project record use (every stage but "ready").
    STEPS: ClassVar[dict[str, Callable[[PublishStages, Project, str], str]]] = PublishStages.STEPS

    # -- run control ----------------------------------------------------------------------------------------
    def read(self, project_id: str, execution: str) -> dict[str, Any]:
        project = self.stages.record.load(project_id)
        self.stages.record.lease(project.id, execution)
        state = PublishState.of(project)
        stage = state.next_stage
        if state.stop_asked and stage != "ready":
            raise PublishStopped(say("publishing.stopped_on_request"))
        if not state.stage:
            self.stages.record.advance(project, None, STAGES[0], execution)
        if stage == "ready":
            # A published project started again (an operator's resume): nothing to do, and it stays ready.
            self.stages.record.ready(project, published=False)
            return {"projectId": project.id, "stage": "ready", "wait": 0}
        self.stages.record.begin(project, execution)
        return {"projectId": project.id, "stage": str(stage), "wait": 0}

    def fail(self, project_id: str, execution: str, error: dict[str, Any] | None) -> str | None:
        """Record why the run stopped (the stage stays) and release the lease. The stage it stopped at, or
        None when there was nothing to record (another run holds the project, and this run was not the one
        the last press claimed)."""
        project = self.stages.record.load(project_id)
        state = PublishState.of(project)
        stage = state.next_stage
        if state.lease in (None, execution):
            self.stages.record.fail(project, error_message(error))
            return stage
        attempt = state.attempt
        if state.status != "starting" or not execution.endswith(":" + execution_name(project.id, attempt)):
            return None
        # The run a press claimed stopped before it could hold the project: the project says so (the lease
        # stays with its holder), so the page stops waiting and the next press starts a new run.
        busy = isinstance(error, dict) and error.get("Error") == "PublishBusy"
        message = say("publishing.busy_at_start") if busy else error_message(error)
        try:
            self.stages.record.stopped(project, "starting", message)
        except DomainError:
            return None  # a newer press claimed the project meanwhile
        return stage

    def step(self, project_id: str, stage: str, execution: str) -> dict[str, Any]:
        run = self.STEPS.get(stage)
        if run is None:
            raise ValueError(f"unknown publish stage {stage!r}; the stages are {', '.join(self.STEPS)}")
        project = self.stages.record.load(project_id)
        recorded = PublishState.of(project).stage
        if recorded != stage:
            return {
                "projectId": project.id,
                "stage": str(recorded),
                "wait": 0,
            }  # another run moved it on: follow the record
        self.stages.record.lease(project.id, execution)
        if PublishState.of(project).stop_asked:
            raise PublishStopped(say("publishing.stopped_on_request"))
        try:
            next_stage = run(self.stages, project, execution)
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
            self.stages.record.ready(self.stages.record.load(project.id), published=True)
        return {"projectId": project.id, "stage": next_stage, "wait": 0}

    def _rate_limited(self, project: Project, stage: str, exc: RateLimited) -> dict[str, Any]:
        """A provider said to come back later: the stage is run again after Retry-After (the state machine's
        Wait), unless this run has been limited for RATE_LIMIT_BUDGET_SECONDS in a row."""
        now = int(self.stages.clock.now())
        current = self.stages.record.load(project.id)
        since = PublishState.of(current).limited_since
        if since is None:
            since = now
        elif now - since >= RATE_LIMIT_BUDGET_SECONDS:
            raise PublishFailed(exc.message) from exc
        wait = min(max(1, exc.retry_after), MAX_RATE_LIMIT_WAIT)
        wait += random.randint(0, max(1, wait // 5))
        self.stages.record.limited(current, since)
        logger.info("publish step rate limited", extra={"stage": stage, "wait": wait})
        return {"projectId": project.id, "stage": stage, "wait": wait}
