"""Discovery: the authorization server's metadata (RFC 8414) and the protected resource's (RFC 9728)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.edge import web
from svc_shared.oauth import metadata
from svc_shared.wiring import services

router = Router()


def _public_json(body: dict[str, Any]) -> Response:
    response = web.json_response(200, body)
    response.headers["Cache-Control"] = "public, max-age=300"
    return response


@router.get("/.well-known/oauth-authorization-server")
# Behind an API Gateway stage (https://ID.execute-api.REGION.amazonaws.com/live) the issuer has a path, and
# RFC 8414's path-inserted URL (/.well-known/oauth-authorization-server/live) lies outside the stage, where
# API Gateway answers 403. MCP clients then try OpenID Connect discovery with the path appended
# (<issuer>/.well-known/openid-configuration), which is inside the stage: the same document answers there.
@router.get("/.well-known/openid-configuration")
def authorization_server_metadata() -> Response:
    return _public_json(metadata.authorization_server(services.public_base_url()))


@router.get("/.well-known/oauth-protected-resource")
@router.get("/.well-known/oauth-protected-resource/mcp")
def protected_resource_metadata() -> Response:
    return _public_json(metadata.protected_resource(services.public_base_url()))
