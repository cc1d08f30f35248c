"""Command-palette search and AI suggestions."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from svc_backoffice.domain import store
from svc_backoffice.edge.api_router import ApiRouter
from svc_backoffice.edge.requests import body
from svc_backoffice.edge.web import json_response

search = ApiRouter("/api/search", reader="viewer")
search.lists(store.search, query="SearchQuery", summary="Command-palette search across entities")

ai = ApiRouter("/api/ai")


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
