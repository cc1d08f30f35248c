"""Local API Gateway: serves every Api (REST API, proxy integration) and HttpApi (HTTP API on its `$default`
stage, payload format 1.0) route of a SAM template and runs the functions in-process with the events and
responses API Gateway would produce.

The event a function gets (events), what the gateway answers (answers) and the server (server); this package
gives their public names."""

from svc_local.gateway.answers import BadLambdaResponse, convert_response, rest_answer
from svc_local.gateway.events import HTTP_API_STAGE, STAGE, build_event, http_api_encodes, is_binary
from svc_local.gateway.server import DEFAULT_PORT, MAX_BODY_BYTES, Gateway, Router

__all__ = [
    "DEFAULT_PORT",
    "HTTP_API_STAGE",
    "MAX_BODY_BYTES",
    "STAGE",
    "BadLambdaResponse",
    "Gateway",
    "Router",
    "build_event",
    "convert_response",
    "http_api_encodes",
    "is_binary",
    "rest_answer",
]
