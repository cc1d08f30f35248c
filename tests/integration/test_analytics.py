"""The analytics beacon and the two analytics tools, with a movable clock."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from svc_shared import services
from svc_shared.analytics import HLL_REGISTERS, _register, estimate


@pytest.fixture
def project(app_env, demo_user):
    return services.projects().create(
        owner_id=demo_user.id,
        workspace_id=demo_user.default_workspace_id,
        prompt="Handmade candles for cosy homes, warm tone",
    )


def beacon(api, project, path="/", visitor="visitor-0001", session="session-0001", referrer="", **extra):
    body = {
        "site": project.id,
        "path": path,
        "visitor": visitor,
        "session": session,
        "referrer": referrer,
        **extra,
    }
    return api.post("/api/analytics/collect", json_body=body, headers={"Origin": "https://shop.example"})


def call_tool(api, bearer, name, **arguments):
    reply = api.post(
        "/mcp",
        headers=bearer,
        body=json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        ),
    )
    return reply.json()["result"]


def test_hyperloglog_estimates_within_a_few_percent():
    registers: dict[int, int] = {}
    for i in range(20000):
        index, rank = _register(f"p:{i}")
        registers[index] = max(registers.get(index, 0), rank)
    assert len(registers) <= HLL_REGISTERS
    assert abs(estimate(registers) - 20000) / 20000 < 0.05


def test_beacon_is_counted_and_reported(clock, api, bearer, project):
    clock.advance(-(clock.now() % 86400) + 3600)  # 01:00 UTC
    day = datetime.fromtimestamp(clock.now(), UTC).date().isoformat()
    answer = beacon(
        api, project, path="/products/mug", referrer="https://www.google.com/search?q=x", country="FR"
    )
    assert answer.status == 204
    assert answer.header("access-control-allow-origin") == "*"
    beacon(api, project, path="/", visitor="visitor-0002", session="session-0002")
    beacon(api, project, path="/products/mug", visitor="visitor-0002", session="session-0002")
    report = json.loads(
        call_tool(api, bearer, "get_project_analytics", project_id=project.id, start_date=day, end_date=day)[
            "content"
        ][0]["text"]
    )
    assert report["pageviews"] == 3
    assert report["unique_visitors"] == 2
    assert report["top_pages"][0] == {"path": "/products/mug", "pageviews": 2}
    assert {"source": "google.com", "visits": 1} in report["referrers"]
    assert {"country": "FR", "visits": 1} in report["countries"]


def test_top_pages_are_the_five_most_viewed(clock, api, bearer, project):
    day = datetime.fromtimestamp(clock.now(), UTC).date().isoformat()
    for n in range(7):
        for _ in range(n + 1):
            beacon(api, project, path=f"/p{n}")
    report = json.loads(
        call_tool(api, bearer, "get_project_analytics", project_id=project.id, start_date=day, end_date=day)[
            "content"
        ][0]["text"]
    )
    assert [p["path"] for p in report["top_pages"]] == ["/p6", "/p5", "/p4", "/p3", "/p2"]


def test_date_range_of_90_days_is_accepted_and_91_refused(api, bearer, project):
    good = call_tool(
        api,
        bearer,
        "get_project_analytics",
        project_id=project.id,
        start_date="2026-01-01",
        end_date="2026-03-31",
    )
    assert good["isError"] is False
    bad = call_tool(
        api,
        bearer,
        "get_project_analytics",
        project_id=project.id,
        start_date="2026-01-01",
        end_date="2026-04-01",
    )
    assert bad["isError"] is True
    assert "90 days" in bad["content"][0]["text"]


def test_trend_counts_unique_sessions_per_minute_over_five_minutes(clock, api, bearer, project):
    clock.advance(60 - clock.now() % 60)
    beacon(api, project, session="session-old1")
    clock.advance(5 * 60)  # the first session is now out of the window
    beacon(api, project, session="session-aaaa")
    beacon(api, project, session="session-aaaa", path="/again")
    clock.advance(60)
    beacon(api, project, session="session-aaaa")
    beacon(api, project, session="session-bbbb")
    trend = json.loads(
        call_tool(api, bearer, "get_project_analytics_trend", project_id=project.id)["content"][0]["text"]
    )
    assert trend["unique_sessions"] == 2
    assert len(trend["per_minute"]) == 5
    assert [m["sessions"] for m in trend["per_minute"]][-2:] == [1, 2]


@pytest.mark.parametrize(
    "body",
    [
        {"site": "nope-nope-nope", "visitor": "visitor-1", "session": "session-1"},
        {"site": "x", "visitor": "v", "session": "s"},
        {},
    ],
)
def test_bad_or_unknown_beacons_are_refused(api, body):
    assert api.post("/api/analytics/collect", json_body=body).status in (400, 404)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"visitor": "v"}, "visitor"),
        ({"session": 12345678}, "session"),
        ({"path": "no-slash"}, "path"),
        ({"country": "FRA"}, "country"),
    ],
)
def test_a_wrong_beacon_field_is_400_naming_it(api, project, change, field):
    body = {"site": project.id, "visitor": "visitor-0001", "session": "session-0001", **change}
    answer = api.post("/api/analytics/collect", json_body=body)
    assert answer.status == 400
    assert answer.json()["message"].startswith(f"{field}: ")


def test_oversize_beacon_is_413(api, project):
    assert beacon(api, project, referrer="x" * 5000).status == 413
