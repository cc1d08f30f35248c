"""Credits and the plan: the balance, the plan and the next renewal, Top up (a hosted checkout for $5 to
$1000), the history of top-ups and spends, what a builder message costs, and on the Free plan the upgrade to
the paid plan (a hosted checkout too). The checkout comes back here; a payment shows once its webhook has
arrived ("pending" until then; the page refreshes itself while it waits).

Same functions as the get_credits and top_up_credits tools (Credits.overview, credits.start_top_up)."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.domain.accounts import User
from svc_shared.domain.credits import MESSAGE_COST, PAID_PLAN_CENTS
from svc_shared.edge import web
from svc_shared.wiring import services
from svc_shared.workspace import site

router = Router()

AMOUNT_UNREADABLE = "amount_unreadable"  # the code of an amount that is not a number


def credits_page(user: User, status: int = 200, **extra: Any) -> Response:
    return site.page(
        router,
        status,
        "credits.html",
        user,
        nav="credits",
        overview=services.credits().overview(user),
        history=services.credits().history(user.id),
        message_cost=MESSAGE_COST,
        plan_price=f"{PAID_PLAN_CENTS / 100:,.0f}",
        upgrade=extra.pop("upgrade", None),
        amount=extra.pop("amount", "25"),
        amount_error=extra.pop("amount_error", None),
        checkout=extra.pop("checkout", None),
        **extra,
    )


@router.get("/workspace/billing")
def billing() -> Response:
    """The credits page; where a top-up's checkout returns (?checkout=success&session=<id> or cancelled)."""
    user = site.current_user(router)
    query = router.current_event.query_string_parameters or {}
    checkout = None
    notice = None
    if query.get("checkout") == "success" and query.get("session"):
        credited = services.credits().credited(user.id, query["session"])
        checkout = {"pending": credited is None, "credits": credited}
    elif query.get("checkout") == "cancelled":
        notice = say("workspace.checkout_cancelled")
    upgrade = None
    if query.get("upgrade") == "success" and query.get("session"):
        upgrade = {"pending": not services.credits().upgraded(user.id, query["session"])}
        if not upgrade["pending"]:  # the plan as the webhook left it, not as read before it arrived
            user = services.accounts().get_user(user.id)
    return credits_page(user, checkout=checkout, notice=notice, upgrade=upgrade)


def _amount(text: str) -> Decimal:
    try:
        amount = Decimal(text.strip().removeprefix("$").replace(",", "").strip())
    except InvalidOperation:
        raise errors.InvalidInput(say("workspace.amount_words"), code=AMOUNT_UNREADABLE) from None
    if not amount.is_finite():
        raise errors.InvalidInput(say("workspace.amount_words"), code=AMOUNT_UNREADABLE)
    return amount


@router.post("/workspace/billing/top-up")
def top_up() -> Response:
    """A hosted checkout for the amount; the page that answers goes on to it (a link without script)."""
    from svc_shared.domain.credits import start_top_up, top_up_cents

    user = site.current_user(router)
    form = site.form(router)
    text = form.get("amount", "")
    try:
        amount = _amount(text)
        top_up_cents(amount)  # the amount's checks, before the checkout provider is reached
        session = start_top_up(services.checkout(), user.id, amount, services.billing_url())
    except errors.InvalidInput as exc:
        message = (
            exc.message if exc.code == AMOUNT_UNREADABLE else f"{exc.message[0].upper()}{exc.message[1:]}."
        )
        return credits_page(user, web.status_for(exc), amount=text, amount_error=message)
    return site.page(router, 200, "checkout_ready.html", user, nav="credits", session=session, plan=False)


@router.post("/workspace/billing/upgrade")
def upgrade() -> Response:
    """A hosted checkout for the paid plan; the page that answers goes on to it (a link without script)."""
    from svc_shared.domain.credits import start_upgrade

    user = site.current_user(router)
    site.form(router)
    session = start_upgrade(services.checkout(), user, services.billing_url())
    return site.page(router, 200, "checkout_ready.html", user, nav="credits", session=session, plan=True)
