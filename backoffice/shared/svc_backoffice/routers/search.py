"""Command-palette search and AI suggestions."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from pydantic import TypeAdapter

from svc_backoffice import store
from svc_backoffice.db import database
from svc_backoffice.models import AiSuggest
from svc_backoffice.web import ApiRouter, body, json_response, query

search = ApiRouter("/api/search")


@search.api(
    "GET",
    role="viewer",
    query="SearchQuery",
    answers="200 302 400 500",
    summary="Command-palette search across entities",
)
def run_search() -> Response:
    return json_response(200, store.search(database(), query(search)))


ai = ApiRouter("/api/ai")
_AI_SUGGEST: TypeAdapter = TypeAdapter(AiSuggest)


@ai.api(
    "POST",
    "/suggest",
    role="viewer",
    body="AiSuggest",
    answers="200 302 400 500",
    summary="Deterministic placeholder suggestions, cached by SHA-256 of the request (x-cache)",
)
def suggest() -> Response:
    request = body(ai).model_dump(mode="json")
    response, hit = store.suggest(request)
    return json_response(200, response, headers={"x-cache": "hit" if hit else "miss"})


ROUTERS = (search, ai)
