"""Every Api route in template.yaml has a sample API Gateway REST proxy event in events/ (for
`sam local invoke -e`, the local gateway and handler tests), and every sample event still names a route."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from svc_local.template import Template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"
EVENTS = ROOT / "events"


def _routes() -> list[tuple[str, str, str]]:
    """(method, path, "Function.Event") of every Api event in the template."""
    return [(r.method, r.path, f"{r.logical_id}.{r.event_name}") for r in Template(TEMPLATE).routes()]


def _api_events() -> dict[str, dict[str, Any]]:
    """Sample events that are API Gateway REST proxy events (other kinds of sample event are ignored)."""
    found = {}
    for path in sorted(EVENTS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "httpMethod" in data and "requestContext" in data:
            found[path.name] = data
    return found


def _matches(method: str, path: str, event: dict[str, Any]) -> bool:
    return event["resource"] == path and (method == "ANY" or event["httpMethod"] == method)


def test_template_has_api_routes() -> None:
    assert _routes(), "template.yaml declares no Api events"


@pytest.mark.parametrize(("method", "path", "source"), _routes(), ids=lambda v: str(v))
def test_every_route_has_a_sample_event(method: str, path: str, source: str) -> None:
    events = _api_events()
    matching = [name for name, event in events.items() if _matches(method, path, event)]
    assert matching, f"no events/*.json with httpMethod {method} and resource {path} (route {source})"


@pytest.mark.parametrize("name", sorted(_api_events()))
def test_sample_event_names_a_route(name: str) -> None:
    event = _api_events()[name]
    routes = _routes()
    assert any(_matches(m, p, event) for m, p, _ in routes), (
        f"events/{name}: {event['httpMethod']} {event['resource']} is not an Api route of template.yaml"
    )


@pytest.mark.parametrize("name", sorted(_api_events()))
def test_sample_event_is_a_consistent_rest_proxy_event(name: str) -> None:
    event = _api_events()[name]
    context = event["requestContext"]
    assert context["resourcePath"] == event["resource"]
    assert context["httpMethod"] == event["httpMethod"]
    assert context["path"].endswith(event["path"])
    assert context["identity"]["sourceIp"]
    assert isinstance(event["isBase64Encoded"], bool)
    multi = event["multiValueHeaders"]
    assert {k: v[-1] for k, v in multi.items()} == event["headers"], "headers: last of multiValueHeaders"
    query, multi_query = event["queryStringParameters"], event["multiValueQueryStringParameters"]
    if multi_query is None:
        assert query is None
    else:
        assert {k: v[-1] for k, v in multi_query.items()} == query
    names = [part[1:-1].rstrip("+") for part in event["resource"].split("/") if part.startswith("{")]
    assert sorted(event["pathParameters"] or {}) == sorted(names), "pathParameters must fill the resource"
    content_type = {k.lower(): v for k, v in event["headers"].items()}.get("content-type", "")
    if event["body"]:
        assert content_type, "an event with a body needs a Content-Type header"


def test_functions_without_api_routes_have_sample_task_events() -> None:
    """The publish-steps function is invoked by Step Functions: its sample inputs name known steps."""
    from svc_shared.domain.publish_state import STAGES

    samples = [json.loads(p.read_text()) for p in sorted(EVENTS.glob("publish_steps_*.json"))]
    assert samples
    for sample in samples:
        assert sample["step"] in {*STAGES[:-1], "read", "fail"}
        assert sample["projectId"] and sample["execution"].startswith("arn:aws:states:")
