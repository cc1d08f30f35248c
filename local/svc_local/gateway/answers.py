"""What the gateway answers: a function's proxy response checked and converted with API Gateway's strictness, and
API Gateway's own answers (a REST API's gateway responses, an HTTP API's fixed ones)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_RESPONSE_KEYS = {"statusCode", "headers", "multiValueHeaders", "body", "isBase64Encoded"}
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


class BadLambdaResponse(ValueError):
    """The handler's result is not a valid proxy response (API Gateway answers 502)."""


def convert_response(result: Any) -> tuple[int, list[tuple[str, str]], bytes]:
    """A proxy integration result as (status, headers, body), with API Gateway's strictness."""
    if not isinstance(result, dict):
        raise BadLambdaResponse(f"result is {type(result).__name__}, not an object")
    unknown = set(result) - _RESPONSE_KEYS
    if unknown:
        raise BadLambdaResponse(f"unexpected field(s) {sorted(unknown)}")
    status = result.get("statusCode")
    if isinstance(status, bool) or not isinstance(status, int | str):
        raise BadLambdaResponse("statusCode missing or not an integer")
    try:
        code = int(status)
    except ValueError:
        raise BadLambdaResponse("statusCode is not an integer") from None
    if not 100 <= code <= 599:
        raise BadLambdaResponse(f"statusCode {code} out of range")

    single = result.get("headers") or {}
    multi = result.get("multiValueHeaders") or {}
    if not isinstance(single, dict) or not isinstance(multi, dict):
        raise BadLambdaResponse("headers and multiValueHeaders must be objects")
    # API Gateway merges the two; for a name present in both, multiValueHeaders wins.
    multi_names = {str(k).lower() for k in multi}
    pairs = [(str(k), v) for k, v in single.items() if str(k).lower() not in multi_names]
    for name, values in multi.items():
        if not isinstance(values, list):
            raise BadLambdaResponse(f"multiValueHeaders[{name!r}] must be a list")
        pairs.extend((str(name), v) for v in values)
    headers = []
    for name, value in pairs:
        if isinstance(value, dict | list) or value is None:
            raise BadLambdaResponse(f"header {name!r} has a non-scalar value")
        text = json.dumps(value) if isinstance(value, bool) else str(value)
        if not _HEADER_NAME.match(name) or "\r" in text or "\n" in text:
            raise BadLambdaResponse(f"header {name!r} is not a valid header")
        headers.append((name, text))

    body = result.get("body")
    if body is None:
        payload = b""
    elif not isinstance(body, str):
        raise BadLambdaResponse("body must be a string")
    elif result.get("isBase64Encoded"):
        try:
            payload = base64.b64decode(body, validate=True)
        except ValueError:
            raise BadLambdaResponse("body is not valid base64") from None
    else:
        payload = body.encode("utf-8")
    if not any(name.lower() == "content-type" for name, _ in headers):
        headers.append(("Content-Type", "application/json"))
    return code, headers, payload


@dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    function: str = "-"


def json_answer(status: int, body: Mapping[str, Any], extra: Sequence[tuple[str, str]] = ()) -> Answer:
    return Answer(status, [("Content-Type", "application/json"), *extra], json.dumps(body).encode())


# What API Gateway answers itself, instead of a function: response type -> (status, message, x-amzn-ErrorType).
# A REST API answers an unknown path or method as a missing token (403), whatever the path; a function
# that raises or returns no valid proxy response is a 502. An HTTP API has its own fixed answers.
REST_ANSWERS = {
    "MISSING_AUTHENTICATION_TOKEN": (
        403,
        "Missing Authentication Token",
        "MissingAuthenticationTokenException",
    ),
    "REQUEST_TOO_LARGE": (413, "Request Too Long", ""),
    "DEFAULT_5XX": (502, "Internal server error", ""),
}
HTTP_API_ANSWERS = {
    "NOT_FOUND": (404, "Not Found"),
    "REQUEST_TOO_LARGE": (413, "Request Entity Too Large"),
    "INTERNAL": (500, "Internal Server Error"),
}


def rest_answer(
    kind: str, responses: Mapping[str, Mapping[str, Any]], request_id: str, path: str = ""
) -> Answer:
    """API Gateway's own answer of type `kind` for a REST API whose GatewayResponses are `responses`: the
    response of that type, else DEFAULT_4XX or DEFAULT_5XX, customises the status, the JSON body (a template
    with simple `$context` substitution, no VTL) and headers (static `'value'`s). REQUEST_TOO_LARGE cannot be
    customised."""
    status, message, error_type = REST_ANSWERS[kind]
    configured: Mapping[str, Any] = {}
    if kind != "REQUEST_TOO_LARGE":
        configured = (
            responses.get(kind) or responses.get("DEFAULT_5XX" if status >= 500 else "DEFAULT_4XX") or {}
        )
    status = int(configured.get("StatusCode") or status)
    headers = [("Content-Type", "application/json")]
    if error_type:
        headers.append(("x-amzn-ErrorType", error_type))
    template = (configured.get("ResponseTemplates") or {}).get("application/json")
    if template is None:
        body = json.dumps({"message": message}).encode()
    else:
        values = {
            "$context.error.messageString": json.dumps(message),  # the message quoted
            "$context.error.message": message,
            "$context.error.responseType": kind,
            "$context.requestId": request_id,
            "$context.path": path,
        }
        body = re.sub(
            "|".join(re.escape(name) for name in values), lambda m: values[m.group(0)], str(template)
        ).encode()
    for name, value in ((configured.get("ResponseParameters") or {}).get("Headers") or {}).items():
        text = str(value)
        if len(text) >= 2 and text[0] == text[-1] == "'":  # static values only; mapped ones are not local
            headers.append((str(name), text[1:-1]))
    return Answer(status, headers, body)
