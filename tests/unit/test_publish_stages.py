"""Publish stages are dispatched by one table, in the order of the stages the project records."""

from __future__ import annotations

import pytest

from svc_shared.domain.publish_stages import Adapters, PublishStages
from svc_shared.domain.publish_state import STAGES, PublishRecord
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
