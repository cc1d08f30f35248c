"""Property-based run of the served OpenAPI document (schemathesis) against the handlers, signed in as an
owner: whatever the generated request, valid by the document or deliberately not (schemathesis's negative
mode: wrong types, missing fields, malformed values), no answer is a server error."""

from __future__ import annotations

import base64
import sys
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")
from bohelpers import invoke  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402

MAX_EXAMPLES = 12


def wsgi_gateway(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """A WSGI app that does what API Gateway does: event in, the route's function, proxy answer out."""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    raw = environ["wsgi.input"].read(length) if length else b""
    path = environ.get("PATH_INFO", "/")
    if environ.get("QUERY_STRING"):
        path += "?" + environ["QUERY_STRING"]
    headers = {k[5:].replace("_", "-").title(): v for k, v in environ.items() if k.startswith("HTTP_")}
    if environ.get("CONTENT_TYPE"):
        headers["Content-Type"] = environ["CONTENT_TYPE"]
    try:
        text = raw.decode("utf-8") if raw else None
    except UnicodeDecodeError:
        text = base64.b64encode(raw).decode()
    answer = invoke(environ["REQUEST_METHOD"], path, raw_body=text, headers=headers)
    start_response(
        f"{answer.status} X", [*answer.headers.items(), *(("Set-Cookie", c) for c in answer.cookies)]
    )
    return [answer.body.encode()]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="python 3.11 only")
def test_no_generated_request_causes_a_server_error(db, staff):
    schema = schemathesis.openapi.from_wsgi("/openapi.json", wsgi_gateway)
    session = staff["owner"]["cookie"].split("=", 1)[1]
    failures: list[str] = []
    statuses: dict[int, int] = {}
    operations = [op.ok() for op in schema.get_all_operations()]
    assert len(operations) >= 94
    # Configure every payment provider, so generated webhook calls reach the signature checks.
    from bohelpers import Client

    owner = Client(staff["owner"]["cookie"])
    for kind in ("card", "wallet-a", "wallet-b", "mobile-money"):
        body = {"kind": kind, "display_name": kind, "enabled": True, "webhook_secret": "s" * 32}
        assert owner.post("/api/payments/providers", body).status == 201

    def exercise(operation: Any, mode: Any) -> None:
        label = f"{operation.method.upper()} {operation.path} ({mode.value})"

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=MAX_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        def run(case: Any) -> None:
            # The document declares the session cookie; replace whatever schemathesis generated for it.
            case.cookies = {**(case.cookies or {}), "svc_session": session}
            response = case.call()
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            if response.status_code >= 500:
                failures.append(f"{label}: {response.text[:200]}")

        try:
            run()
        except Unsatisfiable:
            # No parameters and no body: nothing about the request can be made invalid.
            assert mode is GenerationMode.NEGATIVE, label
            unsatisfiable.append(label)

    unsatisfiable: list[str] = []
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
        for operation in operations:
            exercise(operation, mode)
    assert len(unsatisfiable) < len(operations) // 2, unsatisfiable
    assert failures == []
    assert statuses.get(200, 0) + statuses.get(201, 0) > 50, statuses
    assert statuses.get(400, 0) > 100, statuses  # the negative cases were refused as such
