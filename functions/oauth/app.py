"""Lambda entry of the tool server's OAuth 2.1 authorization server (discovery metadata, client registration,
the consent screen, the token endpoint and revocation, RFC 7009): the resolver for the routers of
svc_shared.routes.oauth. OAuth errors are answered in RFC 6749 form by the one table of svc_shared.routes.oauth.wire;
browser clients reach the public endpoints under the one origin policy (svc_shared.routes.oauth.site.serve)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared.core.logs import get_logger
from svc_shared.routes.oauth import ROUTERS
from svc_shared.routes.oauth.site import create_app, serve
from svc_shared.wiring import services

logger = get_logger()
app = create_app(*ROUTERS)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    services.bind_request(event)  # the origin policy needs the base URL before the resolver runs
    return serve(app, event, context)
