"""What template.yaml gives an operator: every function's logs kept for LogRetentionDays, the publish state
machine's logs, and alarms that notify someone (docs/operations.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_local.template import load_yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def resources() -> dict:
    return load_yaml(ROOT / "template.yaml")["Resources"]


def _of_type(resources: dict, kind: str) -> dict:
    return {name: r for name, r in resources.items() if r["Type"] == kind}


def test_every_function_logs_to_a_group_with_bounded_retention(resources):
    groups = {
        r["Properties"]["LogGroupName"]["Fn::Sub"]: r["Properties"]
        for r in _of_type(resources, "AWS::Logs::LogGroup").values()
    }
    for function in _of_type(resources, "AWS::Serverless::Function"):
        name = f"/aws/lambda/${{{function}}}"
        assert name in groups, f"{function} has no log group {name}"
        assert groups[name]["RetentionInDays"] == {"Ref": "LogRetentionDays"}


def test_the_retention_parameter_allows_only_what_cloudwatch_logs_accepts():
    parameter = load_yaml(ROOT / "template.yaml")["Parameters"]["LogRetentionDays"]
    accepted = {1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922}
    assert set(parameter["AllowedValues"]) == accepted | {3288, 3653}  # CloudWatch Logs' retention values
    assert parameter["Default"] == 30


def test_the_publish_state_machine_logs_without_execution_data(resources):
    machine = resources["PublishStateMachine"]["Properties"]
    logging = machine["Logging"]
    assert logging["Level"] in ("ERROR", "ALL")
    assert logging["IncludeExecutionData"] is False
    group = logging["Destinations"][0]["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
    assert resources[group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    granted = {
        action
        for policy in machine["Policies"]
        for statement in (policy.get("Statement") or [])
        for action in statement["Action"]
    }
    assert {"logs:CreateLogDelivery", "logs:PutResourcePolicy", "logs:DescribeLogGroups"} <= granted


def test_every_alarm_notifies_the_alarm_topic_and_the_email_is_optional(resources):
    alarms = _of_type(resources, "AWS::CloudWatch::Alarm")
    assert {"PublishFailuresAlarm", "McpServerErrorRateAlarm", "LambdaThrottlesAlarm"} <= set(alarms)
    assert "AnalyticsDeadLetterAlarm" in alarms
    for name, alarm in alarms.items():
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": "AlarmTopic"}], name
    subscription = _of_type(resources, "AWS::SNS::Subscription")
    assert [s["Condition"] for s in subscription.values()] == ["HasAlarmEmail"]


def test_metric_math_alarms_stay_within_ten_metrics(resources):
    for name, alarm in _of_type(resources, "AWS::CloudWatch::Alarm").items():
        queries = alarm["Properties"].get("Metrics") or []
        assert len([q for q in queries if "MetricStat" in q]) <= 10, name


def test_the_api_writes_an_access_log_line_per_request_without_query_strings(resources):
    import json

    api = resources["PlatformHttpApi"]["Properties"]["AccessLogSettings"]
    group = resources[api["DestinationArn"]["Fn::GetAtt"][0]]
    assert group["Type"] == "AWS::Logs::LogGroup"
    assert group["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    line = json.loads(api["Format"])  # one JSON object per request, as Logs Insights reads it
    assert {"requestId", "status", "path", "route", "latencyMs"} <= set(line)
    # Hand-off tokens and OAuth codes travel in query strings: the log never carries one.
    assert not any(word in api["Format"] for word in ("querystring", "fullPath", "requestOverride"))


def _throttle_watches(alarm: dict) -> list[str]:
    """The functions whose Throttles metric an alarm reads (one metric, or each MetricStat of its math)."""
    props = alarm["Properties"]
    metrics = [q["MetricStat"]["Metric"] for q in props.get("Metrics") or [] if "MetricStat" in q]
    if "MetricName" in props:
        metrics.append(props)
    return [
        d["Value"]["Ref"]
        for metric in metrics
        if metric["MetricName"] == "Throttles"
        for d in metric.get("Dimensions") or []
        if d["Name"] == "FunctionName"
    ]


def test_every_request_serving_function_is_watched_for_throttles_within_ten_metrics(resources):
    # An alarm reads at most 10 metrics (CloudWatch refuses the deploy beyond): a function added to the
    # template fails here, before a deploy does, until an alarm with room watches it.
    alarms = _of_type(resources, "AWS::CloudWatch::Alarm")
    watched = [name for alarm in alarms.values() for name in _throttle_watches(alarm)]
    queue_fed = {
        name
        for name, function in _of_type(resources, "AWS::Serverless::Function").items()
        if any(e["Type"] == "SQS" for e in (function["Properties"].get("Events") or {}).values())
    }
    functions = set(_of_type(resources, "AWS::Serverless::Function")) - queue_fed
    assert queue_fed == {"AnalyticsAggregatorFunction"}  # the queue retries it; its dead letters alarm
    assert sorted(watched) == sorted(functions)
    for name, alarm in alarms.items():
        assert len([q for q in alarm["Properties"].get("Metrics") or [] if "MetricStat" in q]) <= 10, name
