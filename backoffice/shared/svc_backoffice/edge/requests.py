"""Request parsing: the JSON body and the query string validated by the serving route's pydantic models
(400 naming what is wrong, 413 over MAX_BODY_BYTES), the raw body, headers and path ids."""

from __future__ import annotations

import base64
import binascii
import functools
import json
import uuid
from typing import Any

from aws_lambda_powertools.event_handler.router import Router
from pydantic import TypeAdapter, ValidationError

from svc_backoffice.core.catalogue import say
from svc_backoffice.core.errors import (
    InvalidInput,
    NotFound,
    PayloadTooLarge,
)

# A JSON body larger than this is refused before it is parsed (the largest a route keeps is a blog post of
# 200,000 characters, up to 800 KB of UTF-8).
MAX_BODY_BYTES = 1024 * 1024


def request_models() -> dict[str, Any]:
    from svc_backoffice.domain.models import REQUEST_MODELS

    return REQUEST_MODELS


@functools.cache
def _adapter(name: str) -> TypeAdapter[Any]:
    return TypeAdapter(request_models()[name])


# -- request parsing -----------------------------------------------------------------------------------------
def flatten(exc: ValidationError) -> dict[str, Any]:
    """pydantic issues in the flattened shape: messages for the whole body, and per field path."""
    form: list[str] = []
    fields: dict[str, list[str]] = {}
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        if loc:
            fields.setdefault(".".join(loc), []).append(err["msg"])
        else:
            form.append(err["msg"])
    return {"formErrors": form, "fieldErrors": fields}


def json_value(router: Router, max_bytes: int = MAX_BODY_BYTES) -> Any:
    """The request's JSON body parsed (None when empty), not yet validated; 400 when it is not UTF-8 or not
    JSON, 413 over `max_bytes`."""
    try:
        raw = router.current_event.decoded_body
    except (UnicodeDecodeError, binascii.Error, ValueError):
        raise InvalidInput(say("request.not_utf8")) from None
    if raw and len(raw) > max_bytes // 4 and len(raw.encode()) > max_bytes:
        raise PayloadTooLarge(say("request.too_large", kilobytes=max_bytes // 1024))
    try:
        value = json.loads(raw) if raw else None
    except RecursionError:
        raise InvalidInput(say("request.nested_too_deeply")) from None
    except ValueError:
        raise InvalidInput(say("request.invalid_json")) from None
    return value


def body(router: Router) -> Any:
    """The JSON body validated by the serving route's body model; 400 when malformed or invalid, 413 over
    MAX_BODY_BYTES."""
    value = json_value(router)
    name = router.context["route"].body
    assert name is not None, "the route declares no body model"
    try:
        return _adapter(name).validate_python(value)
    except ValidationError as exc:
        raise InvalidInput(say("request.invalid_body"), flatten(exc)) from None


def query(router: Router) -> Any:
    """The query string validated by the serving route's query model; 400 naming what is wrong."""
    params = router.current_event.query_string_parameters or {}
    name = router.context["route"].query
    assert name is not None, "the route declares no query model"
    try:
        return request_models()[name].model_validate(params)
    except ValidationError as exc:
        raise InvalidInput(say("request.invalid_query"), flatten(exc)) from None


# The same two, for ApiRouter's standard operations, whose parameters `body` and `query` name the models.


def raw_body(router: Router) -> bytes:
    """The request body exactly as sent (what a webhook signature covers)."""
    event = router.current_event
    if not event.body:
        return b""
    if event.is_base64_encoded:
        return base64.b64decode(event.body)
    return event.body.encode("utf-8", "surrogatepass")


def lower_headers(router: Router) -> dict[str, str]:
    return {k.lower(): v for k, v in (router.current_event.headers or {}).items()}


def path_id(value: str) -> str:
    """A path [id] as a UUID string; anything else cannot name a row, so it is 404."""
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise NotFound() from None
