"""Credit tools: the balance and plan, and a hosted checkout to buy more."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic import Field

from svc_shared.mcp.registry import NoArguments, ToolContext, ToolInput
from svc_shared.mcp.tools.common import Output, registry
from svc_shared.wiring import services


class TopUpArguments(ToolInput):
    amount: Decimal = Field(
        ge=5, le=1000, decimal_places=2, description="Amount in US dollars, from 5 to 1000."
    )


class Credits(Output):
    balance: int
    plan: str
    next_renewal_date: str


class Checkout(Output):
    checkout_url: str
    checkout_session_id: str
    amount: str
    credits: int
    expires_at: int | None


@registry.tool("Get credits", output=Credits)
def get_credits(ctx: ToolContext, _: NoArguments) -> dict[str, Any]:
    """Your credit balance, your plan and the next renewal date."""
    return services.credits().overview(services.accounts().get_user(ctx.user_id))


@registry.tool("Top up credits", read_only=False, idempotent=False, open_world=True, output=Checkout)
def top_up_credits(ctx: ToolContext, args: TopUpArguments) -> dict[str, Any]:
    """A hosted checkout URL to buy credits for an amount between $5 and $1000 (100 credits per dollar).
    Open it to pay; the credits arrive when the payment completes. No payment data passes through this
    service."""
    from svc_shared.domain.credits import start_top_up

    return start_top_up(services.checkout(), ctx.user_id, args.amount, services.billing_url())
