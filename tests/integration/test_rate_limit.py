"""The sliding-window limit: no span of `window` seconds accepts more than `limit`, and Retry-After is honest
(the fake clock moves; nothing sleeps)."""

from __future__ import annotations

import math

import pytest


@pytest.fixture
def limiter(clock):
    from svc_shared.wiring import services

    return services.rate_limiter()


def test_sixtieth_passes_sixty_first_refused_until_the_window_slides(clock, limiter):
    first = clock.now()
    for i in range(60):
        assert limiter.take("t", "user-1", 60, 60) == (True, 0), i
        clock.advance(0.5)  # 60 events over 30 s
    allowed, wait = limiter.take("t", "user-1", 60, 60)
    assert not allowed
    # The first event leaves the window at first + 60: 30 s from now.
    assert wait == math.ceil(first + 60 - clock.now()) == 30
    clock.advance(wait - 0.001)
    assert limiter.take("t", "user-1", 60, 60)[0] is False  # just before: still 60 in the last 60 s
    clock.advance(0.001)
    assert limiter.take("t", "user-1", 60, 60) == (True, 0)  # the first one slid out
    # The second one left 0.5 s later, not before.
    assert limiter.take("t", "user-1", 60, 60) == (False, 1)
    clock.advance(0.5)
    assert limiter.take("t", "user-1", 60, 60) == (True, 0)


def test_a_minute_boundary_lets_no_extra_requests_through(clock, limiter):
    # 60 requests in the last seconds of a calendar minute, then the next minute starts: a fixed window
    # would accept 60 more at once (120 within a few seconds).
    clock.advance(60 - clock.now() % 60 - 3)
    for _ in range(60):
        assert limiter.take("t", "user-2", 60, 60)[0]
    clock.advance(4)  # one second into the next calendar minute
    allowed, wait = limiter.take("t", "user-2", 60, 60)
    assert not allowed and wait == 56
    clock.advance(55.9)
    assert not limiter.take("t", "user-2", 60, 60)[0]
    clock.advance(0.1)
    assert limiter.take("t", "user-2", 60, 60)[0]


def test_any_sixty_second_span_holds_at_most_sixty(clock, limiter):
    accepted = []
    for step in range(240):  # an irregular stream over about 2.5 minutes
        clock.advance(0.1 if step % 5 else 2.7)
        if limiter.take("t", "user-3", 60, 60)[0]:
            accepted.append(round(clock.now(), 3))  # the limiter keeps milliseconds
    assert len(accepted) > 120  # the stream did fill more than two windows
    for i, start in enumerate(accepted):
        assert sum(1 for t in accepted[i:] if t < start + 60) <= 60


def test_a_batch_is_accepted_whole_or_not_at_all(clock, limiter):
    assert limiter.take("t", "user-4", 60, 60, 61) == (False, 60)
    assert limiter.take("t", "user-4", 60, 60, 50)[0]
    clock.advance(10)
    assert limiter.take("t", "user-4", 60, 60, 11) == (False, 50)  # only 10 fit: none is spent
    assert limiter.take("t", "user-4", 60, 60, 10)[0]
    assert limiter.take("t", "user-4", 60, 60, 1) == (False, 50)


def test_keys_and_scopes_are_limited_apart(clock, limiter):
    for _ in range(3):
        assert limiter.take("a", "k", 60, 3)[0]
    assert not limiter.take("a", "k", 60, 3)[0]
    assert limiter.take("a", "other", 60, 3)[0]
    assert limiter.take("b", "k", 60, 3)[0]


def test_instances_with_stale_views_stay_exact(clock):
    # Each RateLimiter remembers the log as it last wrote it; another instance's writes make that view stale.
    # The limit holds anyway, and a refusal is decided on the item as it is.
    from svc_shared.storage.ratelimit import RateLimiter
    from svc_shared.wiring import services

    instances = [RateLimiter(services.table(), clock) for _ in range(3)]
    first = clock.now() + 0.2
    accepted = 0
    for i in range(90):
        clock.advance(0.2)
        allowed, wait = instances[i % 3].take("t", "shared", 60, 60)
        accepted += allowed
        if i >= 60:  # refused until the first accepted leaves the window
            assert (allowed, wait) == (False, math.ceil(first + 60 - clock.now())), i
    assert accepted == 60


def test_parallel_instances_accept_exactly_the_limit(clock):
    from concurrent.futures import ThreadPoolExecutor

    from svc_shared.storage.ratelimit import RateLimiter
    from svc_shared.wiring import services

    def instance(_: int) -> int:
        limiter = RateLimiter(services.table(), clock)
        return sum(limiter.take("t", "raced", 60, 20)[0] for _ in range(5))

    with ThreadPoolExecutor(8) as pool:
        assert sum(pool.map(instance, range(8))) == 20  # 40 attempts at once, from 8 instances


def _log_item(scope: str, key: str, window: int) -> dict:
    from svc_shared.storage import keys
    from svc_shared.storage.ratelimit import RateLimiter
    from svc_shared.wiring import services

    return services.table().get(RateLimiter._pk(scope, key), keys.window(window), consistent=True) or {}


def test_a_full_log_is_six_short_strings(clock, limiter):
    # 60 places in 6 attributes of 10 times each (8 base-36 characters a time): the item stays well under 1 KB
    # whatever the traffic, and no per-place attribute is left on it.
    for _ in range(60):
        clock.advance(0.5)
        assert limiter.take("t", "shape", 60, 60)[0]
    item = _log_item("t", "shape", 60)
    groups = {name: value for name, value in item.items() if name[:1] == "l" and name[1:].isdigit()}
    assert sorted(groups) == sorted(f"l{g}" for g in range(6))
    assert {len(value) for value in groups.values()} == {80}
    assert not any(name.startswith("t") and name[1:].isdigit() for name in item)
    assert sum(len(name) + len(value) for name, value in groups.items()) < 500
    assert item["lg"] == 6  # the layout's group count: no attribute of an earlier layout is left


def test_a_log_of_twelve_groups_is_folded_into_six_and_still_counts(clock, limiter):
    # A full log written in the earlier twelve-group layout (l0..l11 of five places each, lg = 12): its sixty
    # places of the last minute still refuse the next event, with the honest wait, on a fresh instance (its
    # blind write is refused by the layout mark), and the first write once room is back folds l6..l11 into the
    # six groups and removes them, keeping every place still in the window.
    from svc_shared.storage import keys
    from svc_shared.storage.ratelimit import RateLimiter, _encode, _ms
    from svc_shared.wiring import services

    first = round(clock.now(), 3)
    times = [first + i * 0.5 for i in range(60)]  # 60 events over 30 s
    groups = {f"l{g}": _encode([_ms(t) for t in times[g::12]]) for g in range(12)}
    services.table().put({"pk": RateLimiter._pk("t", "twelve"), "sk": keys.window(60), **groups, "lg": 12})
    clock.advance(30.0)
    assert limiter.take("t", "twelve", 60, 60) == (False, math.ceil(first + 60 - clock.now()))
    clock.advance(first + 60 - clock.now())  # the first event leaves the window: one place is free
    assert limiter.take("t", "twelve", 60, 60) == (True, 0)
    item = _log_item("t", "twelve", 60)
    assert sorted(n for n in item if n[:1] == "l" and n[1:].isdigit()) == [f"l{g}" for g in range(6)]
    assert item["lg"] == 6
    # 59 of the old places and the new one: a fresh instance refuses, and the next place frees 0.5 s later
    assert RateLimiter(services.table(), clock).take("t", "twelve", 60, 60) == (False, 1)
    clock.advance(0.5)
    assert RateLimiter(services.table(), clock).take("t", "twelve", 60, 60) == (True, 0)


def test_a_log_of_the_earlier_format_is_folded_in_and_still_counts(clock, limiter):
    # An item written before groups (one number per place, t0..t59) keeps its window: 50 events of the last
    # minute stand there; the new code accepts 10 more, refuses the 61st with the honest wait, and the first
    # write moves the old places into groups and removes them.
    from svc_shared.storage import keys
    from svc_shared.storage.ratelimit import RateLimiter
    from svc_shared.wiring import services

    first = round(clock.now(), 3)
    old = {f"t{i}": round(first + i * 0.5, 3) for i in range(50)}
    services.table().put(
        {"pk": RateLimiter._pk("t", "legacy"), "sk": keys.window(60), **old, "expires_at": int(first) + 200}
    )
    clock.advance(25.0)
    for i in range(10):
        assert limiter.take("t", "legacy", 60, 60) == (True, 0), i
    allowed, wait = limiter.take("t", "legacy", 60, 60)
    assert (allowed, wait) == (False, math.ceil(first + 60 - clock.now()))
    item = _log_item("t", "legacy", 60)
    assert not any(name.startswith("t") and name[1:].isdigit() for name in item)
    # A fresh instance (no view) sees the same: the folded log still holds the 60.
    assert RateLimiter(services.table(), clock).take("t", "legacy", 60, 60)[0] is False


def test_an_instance_that_never_saw_a_quiet_log_writes_it_in_one_round_trip(clock):
    # A group whose places all left the window is taken without knowing it: the first write of a fresh
    # instance succeeds at once on a log that has been quiet for a window.
    from svc_shared.storage.ratelimit import RateLimiter, SlidingLog
    from svc_shared.wiring import services

    busy = RateLimiter(services.table(), clock)
    for _ in range(60):
        clock.advance(0.1)
        assert busy.take("t", "quiet", 60, 60)[0]
    clock.advance(61)
    log = SlidingLog(60, 60)
    sent = []

    def send(sets, when, remove):
        sent.append(sets)
        return services.table().update(
            RateLimiter._pk("t", "quiet"),
            "W#60",
            set=sets,
            remove=remove,
            when=when,
            returns="NONE",
            old_on_failure=True,
        )

    from svc_shared.storage import keys

    assert keys.window(60) == "W#60"
    assert log.admit("k", round(clock.now(), 3), 1, send) == (True, 0, False)
    assert len(sent) == 1


def test_group_strings_sort_as_their_newest_time():
    # The blind write's condition (`l<g> < :cutoff~`) rests on this: a group sorts below the cutoff's string
    # exactly when its newest place is at or before the cutoff.
    import random

    from svc_shared.storage.ratelimit import _decode, _encode

    rng = random.Random(7)
    for _ in range(500):
        times = [rng.randrange(0, 36**8) for _ in range(5)]
        cutoff = rng.choice([*times, rng.randrange(0, 36**8)])
        text = _encode(times)
        assert _decode(text) == sorted(times, reverse=True)
        assert (text < _encode([cutoff]) + "~") == (max(times) <= cutoff)
