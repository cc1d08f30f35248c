"""A task's lifetime: the one asked, kept between one minute and a day; an hour when none (or no number) is asked."""

from __future__ import annotations

import pytest

from svc_shared.domain.tool_tasks import DEFAULT_TTL_MS, MAX_TTL_MS, MIN_TTL_MS, ttl_ms


@pytest.mark.parametrize(
    ("asked", "kept"),
    [
        (MIN_TTL_MS - 1, MIN_TTL_MS),
        (MIN_TTL_MS, MIN_TTL_MS),
        (MIN_TTL_MS + 1, MIN_TTL_MS + 1),
        (MAX_TTL_MS - 1, MAX_TTL_MS - 1),
        (MAX_TTL_MS, MAX_TTL_MS),
        (MAX_TTL_MS + 1, MAX_TTL_MS),
        (None, DEFAULT_TTL_MS),
        (True, DEFAULT_TTL_MS),
        ("60000", DEFAULT_TTL_MS),
        (60000.5, DEFAULT_TTL_MS),
    ],
)
def test_a_task_lives_between_a_minute_and_a_day(asked, kept):
    assert ttl_ms(asked) == kept
    assert (MIN_TTL_MS, DEFAULT_TTL_MS, MAX_TTL_MS) == (60_000, 3_600_000, 86_400_000)
