"""The analytics beacon and the two analytics tools, with a movable clock."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest

from apiclient import call_tool
from svc_local.eventsource import SqsPoller
from svc_local.runtime import FunctionRegistry
from svc_local.template import Template
from svc_shared import keys, services
from svc_shared.analytics import HLL_REGISTERS, _register, estimate, pack, unpack

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"


def admin_client(service: str):
    return boto3.client(service, endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")


def lambda_context():
    from svc_local.runtime import LambdaContext

    (source,) = Template(TEMPLATE).sqs_event_sources()
    return LambdaContext.for_function(source.function, "test-request")


@pytest.fixture
def drain(app_env):
    """The aggregator consuming the queue, as the event source mapping would: every waiting beacon."""
    (source,) = Template(TEMPLATE).sqs_event_sources()
    poller = SqsPoller(
        admin_client("sqs"), app_env["ANALYTICS_QUEUE_URL"], source, FunctionRegistry([source.function])
    )
    return poller.drain


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


def day_report(api, bearer, project, day: str) -> dict:
    """get_project_analytics over MCP for one day."""
    result = call_tool(
        api, bearer, "get_project_analytics", project_id=project.id, start_date=day, end_date=day
    )
    return json.loads(result["content"][0]["text"])


def test_hyperloglog_estimates_within_a_few_percent():
    registers = [0] * HLL_REGISTERS
    for i in range(20000):
        index, rank = _register(f"p:{i}")
        registers[index] = max(registers[index], rank)
    assert abs(estimate(registers) - 20000) / 20000 < 0.05
    packed = pack(registers)
    assert len(packed) == 3072  # 4,096 registers of 6 bits
    assert unpack(packed) == registers


def test_beacon_is_counted_and_reported(clock, api, bearer, project, drain):
    clock.advance(-(clock.now() % 86400) + 3600)  # 01:00 UTC
    day = datetime.fromtimestamp(clock.now(), UTC).date().isoformat()
    answer = beacon(
        api, project, path="/products/mug", referrer="https://www.google.com/search?q=x", country="FR"
    )
    assert answer.status == 204
    assert answer.header("access-control-allow-origin") == "*"
    beacon(api, project, path="/", visitor="visitor-0002", session="session-0002")
    beacon(api, project, path="/products/mug", visitor="visitor-0002", session="session-0002")
    assert drain() == 3
    report = day_report(api, bearer, project, day)
    assert report["pageviews"] == 3
    assert report["unique_visitors"] == 2
    assert report["top_pages"][0] == {"path": "/products/mug", "pageviews": 2}
    assert {"source": "google.com", "visits": 1} in report["referrers"]
    assert {"country": "FR", "visits": 1} in report["countries"]


def test_top_pages_are_the_five_most_viewed(clock, api, bearer, project, drain):
    day = datetime.fromtimestamp(clock.now(), UTC).date().isoformat()
    for n in range(7):
        for _ in range(n + 1):
            beacon(api, project, path=f"/p{n}")
    drain()
    report = day_report(api, bearer, project, day)
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


def test_trend_counts_unique_sessions_per_minute_over_five_minutes(clock, api, bearer, project, drain):
    clock.advance(60 - clock.now() % 60)
    beacon(api, project, session="session-old1")
    clock.advance(5 * 60)  # the first session is now out of the window
    beacon(api, project, session="session-aaaa")
    beacon(api, project, session="session-aaaa", path="/again")
    clock.advance(60)
    beacon(api, project, session="session-aaaa")
    beacon(api, project, session="session-bbbb")
    drain()
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


def test_collect_queues_the_beacon_and_writes_nothing(api, project, app_env):
    assert beacon(api, project).status == 204
    table = services.current().table
    assert list(table.query(keys.stats(project.id))) == []  # nothing written per pageview
    waiting = admin_client("sqs").get_queue_attributes(
        QueueUrl=app_env["ANALYTICS_QUEUE_URL"], AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]["ApproximateNumberOfMessages"]
    assert waiting == "1"


def test_a_batch_delivered_again_is_not_counted_twice(clock, api, bearer, project, app_env):
    from functions.analytics.app import aggregate

    for n in range(4):
        beacon(api, project, visitor=f"visitor-{n:04d}", session=f"session-{n:04d}")
    sqs = admin_client("sqs")
    messages = sqs.receive_message(QueueUrl=app_env["ANALYTICS_QUEUE_URL"], MaxNumberOfMessages=10)[
        "Messages"
    ]
    event = {"Records": [{"messageId": m["MessageId"], "body": m["Body"]} for m in messages]}
    assert aggregate(event, lambda_context()) == {"batchItemFailures": []}
    assert aggregate(event, lambda_context()) == {
        "batchItemFailures": []
    }  # the same batch again: already applied
    day = datetime.fromtimestamp(clock.now(), UTC).date().isoformat()
    report = day_report(api, bearer, project, day)
    assert report["pageviews"] == 4
    assert report["unique_visitors"] == 4


def test_a_malformed_message_is_dropped_and_the_rest_counted(clock, api, bearer, project, app_env):
    from functions.analytics.app import aggregate

    beacon(api, project)
    sqs = admin_client("sqs")
    (message,) = sqs.receive_message(QueueUrl=app_env["ANALYTICS_QUEUE_URL"], MaxNumberOfMessages=10)[
        "Messages"
    ]
    event = {
        "Records": [{"messageId": "bad", "body": "{not json"}, {"messageId": "good", "body": message["Body"]}]
    }
    assert aggregate(event, lambda_context()) == {"batchItemFailures": []}
    day = datetime.fromtimestamp(clock.now(), UTC).date().isoformat()
    report = day_report(api, bearer, project, day)
    assert report["pageviews"] == 1


def test_new_keys_beyond_the_daily_bound_count_as_other(clock, project):
    from svc_shared.analytics import MAX_KEYS, Beacon

    analytics = services.analytics()
    messages = [
        (f"m{i}", Beacon(project.id, f"/p{i}", "", f"visitor-{i:04d}", "session-0001", "FR", clock.now()))
        for i in range(MAX_KEYS + 30)
    ]
    assert analytics.apply(messages).failed_message_ids == []
    day = datetime.fromtimestamp(clock.now(), UTC).date()
    report = analytics.report(project.id, day, day)
    assert report["pageviews"] == MAX_KEYS + 30
    item = services.current().table.get(keys.stats(project.id), keys.day(day.isoformat()))
    assert len(item["pages"]) == MAX_KEYS + 1 and item["pages"]["(other)"] == 30
    assert len(bytes(item["hll"])) == 3072
