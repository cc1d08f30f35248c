"""Publish stages are dispatched by one table, in the order of the stages the project records."""

from __future__ import annotations

from dataclasses import fields
from decimal import Decimal
from types import SimpleNamespace

import pytest

from svc_shared.domain import publish_state
from svc_shared.domain.publish_stages import Adapters, PublishStages
from svc_shared.domain.publish_state import STAGES, PublishRecord, PublishState
from svc_shared.domain.publishing import Publisher


class _NoProjects:
    def get(self, *args, **kwargs):
        raise AssertionError("an unknown stage must be refused before the project is read")


def test_every_stage_but_ready_has_one_step_in_order():
    assert list(Publisher.STEPS) == list(STAGES[:-1])
    assert STAGES[-1] == "ready"


def test_an_unknown_stage_is_refused_by_name_before_anything_runs():
    adapters = Adapters(repo_host=print, db_host=print, static_host=print)
    record = PublishRecord(_NoProjects(), None)  # type: ignore[arg-type]
    publisher = Publisher(PublishStages(record, None, None, None, adapters))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown publish stage 'db_stauts'; the stages are db_creating, "):
        publisher.step("p1", "db_stauts", "exec-1")


def test_the_publish_state_reads_each_of_its_fields_from_the_project_item():
    item = {
        "publish_stage": "db_waiting_ready",
        "publish_status": "running",
        "publish_attempt": Decimal(3),
        "publish_lease_until": Decimal(1700000000),
        "publish_stop": True,
        "template_commit_sha": "abc1234",
    }
    state = PublishState.of(SimpleNamespace(extra=item))  # type: ignore[arg-type]  # only its item is read
    assert (state.stage, state.status, state.attempt) == ("db_waiting_ready", "running", 3)
    assert state.lease_until == 1700000000
    assert state.stop_asked is True and state.template_commit_sha == "abc1234"
    assert (state.error, state.lease, state.claimed_at) == (None, None, None)  # absent: None
    # Nothing the project records is left unread, and every field is read from somewhere.
    assert {f.name for f in fields(PublishState)} == set(publish_state._READ_FROM)
    never = SimpleNamespace(extra={})
    assert PublishState.of(never) == PublishState()  # type: ignore[arg-type]  # as never published
