"""The checkout provider's webhook: a paid credit top-up becomes credits, and a paid plan checkout moves the
account to the paid plan, each once per checkout session. The signature over the raw body is checked before
anything is parsed or recorded."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors, jsonlimit
from svc_shared.core.catalogue import say
from svc_shared.core.logs import get_logger
from svc_shared.core.secrets import get_secret
from svc_shared.domain.bodies import CheckoutEvent, CheckoutMetadata
from svc_shared.edge import web
from svc_shared.providers.checkout import SignatureError, verify_signature
from svc_shared.wiring import services

logger = get_logger()
router = Router()
MAX_BODY = 256 * 1024
PURPOSES = ("credit_top_up", "plan_upgrade")  # what our checkouts are for (metadata.purpose)


@router.post("/api/webhooks/checkout")
def checkout_webhook() -> Response:
    raw = (router.current_event.decoded_body or "").encode()
    if len(raw) > MAX_BODY:
        return web.json_response(413, {"error": "payload_too_large"})
    header = router.current_event.headers.get("stripe-signature")
    if not header:
        return web.json_response(400, {"error": "missing_signature"})
    try:
        verify_signature(
            raw,
            header,
            get_secret(services.settings().checkout_webhook_secret_arn),
            now=services.clock().now(),
        )
    except SignatureError as exc:
        logger.warning("checkout webhook refused", extra={"reason": str(exc)})
        return web.json_response(400, {"error": "signature_failed"})
    try:
        event = web.parse(CheckoutEvent, jsonlimit.loads(raw))
    except jsonlimit.TooDeep:
        return web.json_response(
            400, {"error": "invalid_event", "message": say("http.too_deep", problem=jsonlimit.too_deep())}
        )
    except (ValueError, errors.InvalidInput):
        return web.json_response(400, {"error": "invalid_event"})
    session = event.data.object
    metadata = session.metadata or CheckoutMetadata()
    purpose = metadata.purpose if metadata.purpose in PURPOSES else None
    answered = "upgraded" if purpose == "plan_upgrade" else "credited"
    if event.type != "checkout.session.completed" or purpose is None:
        return web.json_response(200, {"received": True, "credited": False})
    if session.payment_status != "paid" or not metadata.user_id:
        return web.json_response(200, {"received": True, answered: False})
    if session.amount_total is None:
        return web.json_response(400, {"error": "invalid_event"})
    try:
        services.accounts().get_user(metadata.user_id)
    except errors.NotFound:
        logger.warning("checkout webhook for an unknown user", extra={"event_id": event.id})
        return web.json_response(400, {"error": "unknown_user"})
    credits = services.credits()
    apply = credits.upgrade_once if purpose == "plan_upgrade" else credits.grant_once
    try:
        done = apply(
            user_id=metadata.user_id,
            checkout_session_id=session.id,
            amount_cents=session.amount_total,
            event_id=event.id,
        )
    except errors.InvalidInput as exc:
        logger.warning("checkout webhook refused", extra={"reason": exc.message, "event_id": event.id})
        return web.json_response(400, {"error": "invalid_amount"})
    return web.json_response(200, {"received": True, answered: done})
