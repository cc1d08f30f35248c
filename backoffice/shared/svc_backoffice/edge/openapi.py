"""The OpenAPI 3.1 document of the implemented backoffice routes, generated from the route table and the
pydantic request models. `python -m svc_backoffice.routers.table` rewrites the committed backoffice/openapi.json."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import models_json_schema

from svc_backoffice.domain import models, payments
from svc_backoffice.edge.routes import Route, RouteTable

DESCRIPTIONS = {
    "200": "OK",
    "201": "Created",
    "207": "Partial success",
    "302": "Role gate redirect (see Location)",
    "400": "Malformed JSON or failed validation",
    "401": "Provider not configured",
    "403": "Forbidden",
    "404": "Not found",
    "409": "Conflict: a unique value already taken, or not enough stock",
    "422": "Refused by a database rule",
    "500": "Unexpected failure",
}
ERROR = {"type": "object", "properties": {"error": {}}, "required": ["error"]}


def _body_schemas(routes: list[Route]) -> tuple[dict[str, Any], dict[str, Any]]:
    names = sorted({r.body for r in routes if r.body})
    plain: list[tuple[type[BaseModel], Literal["validation"]]] = [
        (models.REQUEST_MODELS[n], "validation") for n in names if isinstance(models.REQUEST_MODELS[n], type)
    ]
    _, defs = models_json_schema(plain, ref_template="#/components/schemas/{model}")
    schemas = dict(defs.get("$defs", {}))
    out = {n: {"$ref": f"#/components/schemas/{n}"} for n in names if n != "AiSuggest"}
    if "AiSuggest" in names:
        union = TypeAdapter(models.AiSuggest).json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(union.pop("$defs", {}))
        schemas["AiSuggest"] = union
        out["AiSuggest"] = {"$ref": "#/components/schemas/AiSuggest"}
    return out, schemas


def _routes(table: RouteTable) -> list[Route]:
    return [r for r in table.routes() if table.implemented(r)] + list(table.auth_routes())


def _query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    schema = model.model_json_schema()
    required = set(schema.get("required", []))
    return [
        {"name": name, "in": "query", "required": name in required, "schema": prop}
        for name, prop in schema["properties"].items()
    ]


def document(table: RouteTable) -> dict[str, Any]:
    """The OpenAPI document of `table`'s implemented routes."""
    routes = _routes(table)
    bodies, schemas = _body_schemas(routes)
    paths: dict[str, dict[str, Any]] = {}
    for r in routes:
        params = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string", "format": "uuid"}}
            for name in re.findall(r"\[(\w+)\]", r.path)
        ]
        if r.query:
            params += _query_parameters(models.REQUEST_MODELS[r.query])
        operation: dict[str, Any] = {
            "operationId": f"{r.method.lower()}_{re.sub(r'[^a-z0-9]+', '_', r.path.lower()).strip('_')}",
            "summary": r.summary or f"{r.method} {r.path}",
            "tags": [r.resource],
            "responses": {
                code: {"description": DESCRIPTIONS[code]}
                | (
                    {"content": {"application/json": {"schema": ERROR if code >= "400" else {}}}}
                    if code not in ("302",) and r.resource != "auth"
                    else {}
                )
                for code in r.answers.split()
            },
        }
        if r.role:
            operation["security"] = [{"session": []}]
            operation["x-minimum-role"] = r.role
        if params:
            operation["parameters"] = params
        if r.role is None and r.path.startswith("/api/payments/webhooks/"):
            kind = r.path.rsplit("/", 1)[1]
            operation["parameters"] = [
                {"name": name, "in": "header", "required": False, "schema": {"type": "string"}}
                for name in payments.SCHEMES[kind].headers
            ]
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": {"type": "object"}}},
            }
        if r.body:
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": bodies[r.body]}},
            }
        paths.setdefault(r.rule, {})[r.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "svc merchant backoffice",
            "version": "0.1.0",
            "description": "Routes implemented so far; the full table is docs/routes.md. Gated routes need the "
            "svc_session cookie minted by /auth/sso and redirect (302) when it is missing or the role is too low.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"session": {"type": "apiKey", "in": "cookie", "name": "svc_session"}},
        },
    }
