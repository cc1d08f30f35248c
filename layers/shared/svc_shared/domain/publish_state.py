"""The publish sequence's record on a project: its stages in order, the typed state read from the project's
`publish_*` attributes, the errors a step raises, and the words a failed run leaves for the merchant (the
texts themselves are in the message catalogue, under `publishing.`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from svc_shared.core.catalogue import say
from svc_shared.core.errors import DomainError
from svc_shared.domain.projects import Project

STAGES = (
    "db_creating",
    "db_waiting_ready",
    "db_applying_migrations",
    "repo_host_creating_repo",
    "repo_host_pushing_template",
    "host_triggering_build",
    "ready",
)
WAITING = "db_waiting_ready_wait"
REGION = "eu-central-1"
# Each run waits up to 10 minutes (polls 4 s apart) for the database project to come up; a run started again
# after that timeout (a resume) gets the whole budget again.
READY_BUDGET_SECONDS = 600
LEASE_SECONDS = 120
# A provider that limits requests (429) and says when to come back is waited out, not failed: the step answers
# with the seconds to wait (Retry-After, 1 to 60 s, plus up to 20% jitter so parallel publishes of one merchant
# do not all come back at once) and the state machine waits, then runs the stage again. A stage limited for
# longer than this in a row (one run's count, reset by any stage that completes) fails with the provider's words.
RATE_LIMIT_BUDGET_SECONDS = 300
MAX_RATE_LIMIT_WAIT = 60
TEMPLATE_SUBJECT = "feat: scaffold merchant backoffice from svc template"
TEMPLATE_BODY = "Produced by svc onboarding provisioning (template push)."


def _text(value: Any) -> str | None:
    return str(value) if value is not None else None


def _number(value: Any) -> int | None:
    return int(value) if value is not None else None


@dataclass(frozen=True)
class PublishState:
    """What the publish sequence records on a project, read from its item's `publish_*` attributes (and the
    few facts the stages keep beside them). Absent attributes read as None (the attempt as 0), so an item
    written before any of them existed reads as never published."""

    stage: str | None = None  # the stage to run next (STAGES), None before the first run read the project
    status: str | None = None  # starting, running, ready or failed
    error: str | None = None  # why the last run stopped
    attempt: int = 0  # presses of Publish claimed so far (each names its execution)
    claimed_at: int | None = None  # when the last press claimed its attempt
    execution: str | None = None  # the execution that last read the project (an operator's resume included)
    execution_arn: str | None = None  # the execution the last press started
    lease: str | None = None  # the execution holding the project
    lease_until: int | None = None
    ready_deadline: int | None = None  # when this run stops waiting for the database to come up
    limited_since: int | None = None  # since when this run's stage has been rate limited in a row
    db_password: str | None = None  # sealed with the envelope (context: project id, kind db_password)
    template_commit_sha: str | None = None
    backoffice_url: str | None = None

    @classmethod
    def of(cls, project: Project) -> PublishState:
        item = project.extra
        return cls(
            stage=_text(item.get("publish_stage")),
            status=_text(item.get("publish_status")),
            error=_text(item.get("publish_error")),
            attempt=int(item.get("publish_attempt") or 0),
            claimed_at=_number(item.get("publish_claimed_at")),
            execution=_text(item.get("publish_execution")),
            execution_arn=_text(item.get("publish_execution_arn")),
            lease=_text(item.get("publish_lease")),
            lease_until=_number(item.get("publish_lease_until")),
            ready_deadline=_number(item.get("publish_ready_deadline")),
            limited_since=_number(item.get("publish_limited_since")),
            db_password=_text(item.get("db_password")),
            template_commit_sha=_text(item.get("template_commit_sha")),
            backoffice_url=_text(item.get("backoffice_url")),
        )

    @property
    def next_stage(self) -> str:
        """The stage a run starts at: the recorded one, or the first."""
        return self.stage or STAGES[0]


class PublishTransient(DomainError):
    """A failure worth retrying (provider 5xx, timeout, rate limit): the state machine retries the step."""

    code = "publish_transient"


class PublishFailed(DomainError):
    """A failure retrying will not fix: the run stops at its stage with this message."""

    code = "publish_failed"


class PublishBusy(DomainError):
    """Another execution holds this project's lease."""

    code = "publish_busy"


def execution_name(project_id: str, attempt: int) -> str:
    """The name of the execution that runs a press's claimed attempt (Step Functions runs a name once)."""
    return f"{project_id}-{attempt}"


class SimulatedCrash(RuntimeError):
    """A crash injected at a named point (development and tests only), reported as Lambda reports a crash."""

    lambda_error_type = "Runtime.ExitError"


def error_message(error: dict[str, Any] | None) -> str:
    """The words a failed run leaves on the project, from the error Step Functions hands the Fail step."""
    if not isinstance(error, dict):
        return say("publishing.run_failed")
    cause = error.get("Cause")
    if isinstance(cause, str):
        try:
            parsed = json.loads(cause)
            if isinstance(parsed, dict) and isinstance(parsed.get("errorMessage"), str):
                return parsed["errorMessage"][:1000]
        except ValueError:
            return cause[:1000]
    return str(error.get("Error") or say("publishing.run_failed"))[:200]
