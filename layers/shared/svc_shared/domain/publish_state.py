"""The publish sequence's record on a project: its stages in order, the typed state read from the project's
`publish_*` attributes and the one record that writes them (PublishRecord: claim, lease, advance, fail), the
errors a step raises, and the words a failed run leaves for the merchant (the texts themselves are in the
message catalogue, under `publishing.`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.errors import DomainError
from svc_shared.domain.projects import Project, Projects
from svc_shared.storage import keys
from svc_shared.storage.dal import ConditionFailed, attr

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


def _attempt(value: Any) -> int:
    return int(value or 0)


# Each field of PublishState: the project item's attribute it is read from, and how.
_READ_FROM: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "stage": ("publish_stage", _text),
    "status": ("publish_status", _text),
    "error": ("publish_error", _text),
    "attempt": ("publish_attempt", _attempt),
    "claimed_at": ("publish_claimed_at", _number),
    "execution": ("publish_execution", _text),
    "execution_arn": ("publish_execution_arn", _text),
    "lease": ("publish_lease", _text),
    "lease_until": ("publish_lease_until", _number),
    "ready_deadline": ("publish_ready_deadline", _number),
    "limited_since": ("publish_limited_since", _number),
    "stop_asked": ("publish_stop", bool),
    "db_password": ("db_password", _text),
    "template_commit_sha": ("template_commit_sha", _text),
    "backoffice_url": ("backoffice_url", _text),
}


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
    stop_asked: bool = False  # a stop was asked (an MCP task cancelled): the run stops at its next step
    db_password: str | None = None  # sealed with the envelope (context: project id, kind db_password)
    template_commit_sha: str | None = None
    backoffice_url: str | None = None

    @classmethod
    def of(cls, project: Project) -> PublishState:
        item = project.extra
        return cls(**{field: read(item.get(name)) for field, (name, read) in _READ_FROM.items()})

    @property
    def next_stage(self) -> str:
        """The stage a run starts at: the recorded one, or the first."""
        return self.stage or STAGES[0]


class PublishTransient(DomainError, code="publish_transient"):
    """A failure worth retrying (provider 5xx, timeout, rate limit): the state machine retries the step."""


class PublishFailed(DomainError, code="publish_failed"):
    """A failure retrying will not fix: the run stops at its stage with this message."""


class PublishStopped(PublishFailed, code="publish_stopped"):
    """A stop was asked: the run stops before its next step, at its stage (the next press resumes there)."""


class PublishBusy(DomainError, code="publish_busy"):
    """Another execution holds this project's lease."""


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


_RELEASED: dict[str, Any] = {"publish_lease": None, "publish_lease_until": None}


@dataclass(eq=False)
class PublishRecord:
    """The one writer of a project's `publish_*` attributes: a press claims an attempt and records the run it
    launched; a run holds the project's lease, advances the stage, waits, and stops ready or failed."""

    projects: Projects
    clock: Clock

    def load(self, project_id: str) -> Project:
        """The project as the record stands now (a strongly consistent read)."""
        return self.projects.get(project_id, consistent=True)

    # -- a press ----------------------------------------------------------------------------------------------
    def claim(self, project: Project) -> Project:
        """Claim the next attempt, if no other press claimed it since `project` was read (else Conflict)."""
        attempt = PublishState.of(project).attempt
        return self.projects.update(
            project,
            {
                "publish_attempt": attempt + 1,
                "publish_status": "starting",
                "publish_error": None,
                "publish_claimed_at": int(self.clock.now()),
                "publish_stop": None,  # a press after a stop resumes
            },
            when=attr("publish_attempt").missing() | attr("publish_attempt").eq(attempt),
        )

    def launched(self, project: Project, execution_arn: str) -> Project:
        if PublishState.of(project).execution_arn == execution_arn:
            return project
        return self.projects.update(project, {"publish_execution_arn": execution_arn})

    def stopped(self, project: Project, seen: str, message: str) -> Project:
        """Record that the run a project waits on (its status `seen`: starting or running) is gone, if the
        record has not moved on since (else Conflict): a newer press, or the run itself, wrote meanwhile."""
        changes: dict[str, Any] = {"publish_status": "failed", "publish_error": message}
        if seen == "running":
            changes |= _RELEASED
        return self.projects.update(
            project,
            changes,
            when=attr("publish_status").eq(seen)
            & attr("publish_attempt").eq(PublishState.of(project).attempt),
        )

    def stop(self, project: Project) -> bool:
        """Ask the project's run to stop at its next step boundary; False when no run is under way."""
        try:
            self.projects.update(
                project,
                {"publish_stop": True},
                when=attr("publish_status").eq("starting") | attr("publish_status").eq("running"),
            )
        except DomainError:
            return False
        return True

    # -- a run ------------------------------------------------------------------------------------------------
    def lease(self, project_id: str, execution: str) -> None:
        """Hold the project for `execution` (LEASE_SECONDS, renewed at every step), unless another holds it."""
        now = int(self.clock.now())
        try:
            self.projects.table.update(
                keys.project(project_id),
                keys.META,
                set={"publish_lease": execution, "publish_lease_until": now + LEASE_SECONDS},
                when=attr("publish_lease").missing()
                | attr("publish_lease").eq(execution)
                | attr("publish_lease_until").lt(now),
            )
        except ConditionFailed:
            raise PublishBusy(say("publishing.lease_held")) from None

    def begin(self, project: Project, execution: str) -> None:
        """A run starting (or resuming) at its stage, with the whole readiness budget: an earlier run's is spent."""
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

    def advance(self, project: Project, stage: str | None, to: str, execution: str, **facts: Any) -> None:
        """Record the next stage (and the facts the step learnt), only if the stage is still `stage` and
        `execution` holds the lease."""
        at_stage = attr("publish_stage").missing() if stage is None else attr("publish_stage").eq(stage)
        try:
            self.projects.update(
                project,
                {**facts, "publish_stage": to, "publish_ready_deadline": None, "publish_limited_since": None},
                when=attr("publish_lease").eq(execution) & at_stage,
            )
        except DomainError as exc:
            raise PublishBusy(say("publishing.stage_moved_on")) from exc

    def waiting_ready(self, project: Project, deadline: int, **facts: Any) -> None:
        self.projects.update(project, {**facts, "publish_ready_deadline": deadline})

    def limited(self, project: Project, since: int) -> None:
        self.projects.update(project, {"publish_limited_since": since})

    def ready(self, project: Project, *, published: bool) -> None:
        """The run reached ready and lets the project go (`published`: the run that got it there)."""
        changes: dict[str, Any] = {"publish_status": "ready", **_RELEASED}
        if published:
            changes["status"] = "published"
        else:
            changes["publish_error"] = None
        self.projects.update(project, changes)

    def fail(self, project: Project, message: str) -> None:
        """The run holding the project stops at its stage, with why, and lets the project go."""
        self.projects.update(project, {"publish_status": "failed", "publish_error": message, **_RELEASED})
