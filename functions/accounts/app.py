"""Lambda entry of workspace sign-in (the login form, the session cookie, sign-out), the signed-in user's
account routes (§4.2) and the backoffice's single sign-on link: the resolver for svc_shared.routes.accounts."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared.core.logs import get_logger
from svc_shared.edge import web
from svc_shared.routes import accounts

logger = get_logger()
app = web.create_app(accounts.router)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
