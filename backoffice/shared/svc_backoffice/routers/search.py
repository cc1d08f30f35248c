"""Command-palette search and AI suggestions."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from pydantic import TypeAdapter

from svc_backoffice import store
from svc_backoffice.db import database
from svc_backoffice.models import AiSuggest, SearchQuery
from svc_backoffice.web import ApiRouter, body, json_response, query

search = ApiRouter("/api/search")


@search.api("GET")
def run_search() -> Response:
    return json_response(200, store.search(database(), query(search, SearchQuery)))


ai = ApiRouter("/api/ai")
_AI_SUGGEST: TypeAdapter = TypeAdapter(AiSuggest)


@ai.api("POST", "/suggest")
def suggest() -> Response:
    request = body(ai, _AI_SUGGEST).model_dump(mode="json")
    response, hit = store.suggest(request)
    return json_response(200, response, headers={"x-cache": "hit" if hit else "miss"})


ROUTERS = (search, ai)
