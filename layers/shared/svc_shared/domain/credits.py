"""Credits and the plan: the balance a user spends on the builder (each message costs MESSAGE_COST), topped up
through a hosted checkout, with its history; and the upgrade to the paid plan through the same checkout.
Credits and the plan change only from the checkout's signed webhook, once per checkout session, never from a
redirect. Every change of the balance writes its line of history in the same transaction."""

from __future__ import annotations

import calendar
import uuid
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.errors import Conflict, InvalidInput, NotFound, PaymentRequired
from svc_shared.domain.credit_history import history_line
from svc_shared.storage import keys
from svc_shared.storage.dal import Table, TransactionConflict, attr, item_absent, item_exists

if TYPE_CHECKING:
    from svc_shared.domain.accounts import User
    from svc_shared.providers.checkout import Checkout

CREDITS_PER_DOLLAR = 100
MIN_TOP_UP, MAX_TOP_UP = Decimal("5"), Decimal("1000")
MESSAGE_COST = 10  # credits a message to the builder costs ($0.10)
PAID_PLAN_CENTS = 2500  # the paid plan's price, in one payment
HISTORY_LINES = 50  # the credit history shows the newest 50 lines


class CreditsShort(PaymentRequired, code="credits_short"):
    """The balance does not cover a builder message: nothing was sent, nothing charged."""


def next_renewal(created_at: int, now: float) -> str:
    """The next monthly anniversary of the account (the day clamped to the month's length)."""
    start = datetime.fromtimestamp(created_at, UTC)
    current = datetime.fromtimestamp(now, UTC)
    year, month = current.year, current.month
    for _ in range(2):
        day = min(start.day, calendar.monthrange(year, month)[1])
        candidate = current.replace(
            year=year,
            month=month,
            day=day,
            hour=start.hour,
            minute=start.minute,
            second=start.second,
            microsecond=0,
        )
        if candidate > current:
            return candidate.date().isoformat()
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return candidate.date().isoformat()


MIN_TOP_UP_CENTS, MAX_TOP_UP_CENTS = int(MIN_TOP_UP * 100), int(MAX_TOP_UP * 100)


def top_up_cents(amount: Decimal) -> int:
    # The range first: quantizing 1E1000 or sixty 9s to cents overflows the decimal context.
    if not amount.is_finite() or not MIN_TOP_UP <= amount <= MAX_TOP_UP:
        raise InvalidInput(say("credits.amount_range", minimum=MIN_TOP_UP, maximum=MAX_TOP_UP))
    if amount != amount.quantize(Decimal("0.01")):
        raise InvalidInput(say("credits.amount_cents"))
    return int((amount * 100).to_integral_value(rounding=ROUND_HALF_UP))


class Credits:
    def __init__(self, table: Table, clock: Clock) -> None:
        self._table = table
        self._clock = clock

    def balance(self, user_id: str) -> int:
        item = self._table.get(keys.user(user_id), keys.CREDITS, consistent=True)
        return int(item["balance"]) if item else 0

    def overview(self, user: User) -> dict[str, Any]:
        """What get_credits answers and the credits page shows: balance, plan, next renewal date."""
        return {
            "balance": self.balance(user.id),
            "plan": user.plan,
            "next_renewal_date": next_renewal(user.created_at, self._clock.now()),
        }

    def history(self, user_id: str) -> list[dict[str, Any]]:
        """The newest HISTORY_LINES top-ups and spends, newest first."""
        lines = self._table.query(
            keys.user(user_id), sk_prefix=keys.CREDIT_LOG_PREFIX, newest_first=True, limit=HISTORY_LINES
        )
        return [
            {**line, "credits": int(line["credits"]), "created_at": int(line["created_at"])} for line in lines
        ]

    def charge_message(self, user_id: str, project_id: str, project_name: str) -> dict[str, Any]:
        """Take MESSAGE_COST for a builder message, with its history line (returned, for give_back);
        CreditsShort, charging nothing, when the balance does not cover it."""
        now = int(self._clock.now())
        line = history_line(
            user_id, "message", -MESSAGE_COST, now, project_id=project_id, project_name=project_name[:200]
        )
        try:
            self._table.transact(
                [
                    self._table.update_action(
                        keys.user(user_id),
                        keys.CREDITS,
                        add={"balance": -MESSAGE_COST},
                        set={"updated_at": now},
                        when=attr("balance").gt(MESSAGE_COST - 1),  # balance >= cost (whole credits)
                    ),
                    self._table.put_action(line, when=item_absent()),
                ]
            )
        except TransactionConflict as exc:
            if exc.reasons and exc.reasons[0] == "ConditionalCheckFailed":
                balance = self.balance(user_id)
                raise CreditsShort(say("credits.short", cost=MESSAGE_COST, balance=f"{balance:,}")) from exc
            raise
        return line

    def give_back(self, line: dict[str, Any]) -> None:
        """Undo a charge whose message never reached the builder: the credits return, its line goes."""
        self._table.transact(
            [
                self._table.delete_action(line["pk"], line["sk"], when=item_exists()),
                self._table.update_action(
                    line["pk"],
                    keys.CREDITS,
                    add={"balance": -int(line["credits"])},
                    set={"updated_at": int(self._clock.now())},
                ),
            ]
        )

    def credited(self, user_id: str, checkout_session_id: str) -> int | None:
        """The credits a checkout session of `user_id` added, or None while its payment webhook has not
        arrived (or when the session is not theirs)."""
        if not checkout_session_id or len(checkout_session_id) > 255:
            return None
        item = self._table.get(keys.checkout(checkout_session_id), keys.CREDITED, consistent=True)
        if item is None or item.get("user_id") != user_id:
            return None
        return int(item["credits"])

    def grant_once(self, *, user_id: str, checkout_session_id: str, amount_cents: int, event_id: str) -> bool:
        """Add the credits of a paid checkout session; False when that session was already credited. A paid
        amount no top-up can have (we create checkouts of MIN_TOP_UP to MAX_TOP_UP only) is InvalidInput."""
        if not MIN_TOP_UP_CENTS <= amount_cents <= MAX_TOP_UP_CENTS:
            raise InvalidInput(say("credits.paid_amount", cents=amount_cents))
        credits = amount_cents * CREDITS_PER_DOLLAR // 100
        now = int(self._clock.now())
        try:
            self._table.transact(
                [
                    self._table.put_action(
                        {
                            "pk": keys.checkout(checkout_session_id),
                            "sk": keys.CREDITED,
                            "user_id": user_id,
                            "amount_cents": amount_cents,
                            "credits": credits,
                            "event_id": event_id,
                            "created_at": now,
                        },
                        when=item_absent(),
                    ),
                    self._table.update_action(
                        keys.user(user_id),
                        keys.CREDITS,
                        add={"balance": credits},
                        set={"updated_at": now},
                    ),
                    self._table.put_action(
                        history_line(user_id, "top_up", credits, now, amount_cents=amount_cents)
                    ),
                ]
            )
        except TransactionConflict as exc:
            if exc.reasons and exc.reasons[0] == "ConditionalCheckFailed":
                return False
            raise
        return True

    # -- the plan -------------------------------------------------------------------------------------------
    def upgraded(self, user_id: str, checkout_session_id: str) -> bool:
        """Whether a plan checkout session of `user_id` has been applied (its webhook arrived)."""
        if not checkout_session_id or len(checkout_session_id) > 255:
            return False
        item = self._table.get(keys.checkout(checkout_session_id), keys.UPGRADED, consistent=True)
        return item is not None and item.get("user_id") == user_id

    def upgrade_once(
        self, *, user_id: str, checkout_session_id: str, amount_cents: int, event_id: str
    ) -> bool:
        """Move the user to the paid plan for a paid plan checkout; False when that session was already
        applied. InvalidInput for an amount that is not the plan's price, NotFound for an unknown user."""
        if amount_cents != PAID_PLAN_CENTS:
            raise InvalidInput(say("credits.paid_amount", cents=amount_cents))
        now = int(self._clock.now())
        marker = {
            "pk": keys.checkout(checkout_session_id),
            "sk": keys.UPGRADED,
            "user_id": user_id,
            "amount_cents": amount_cents,
            "event_id": event_id,
            "created_at": now,
        }
        try:
            self._table.transact(
                [
                    self._table.put_action(marker, when=item_absent()),
                    self._table.update_action(
                        keys.user(user_id), keys.PROFILE, set={"plan": "paid"}, when=item_exists()
                    ),
                ]
            )
        except TransactionConflict as exc:
            if exc.reasons and exc.reasons[0] == "ConditionalCheckFailed":
                return False
            if len(exc.reasons) > 1 and exc.reasons[1] == "ConditionalCheckFailed":
                raise NotFound(say("accounts.user_not_found")) from exc
            raise
        return True

    @staticmethod
    def checkout_request(user_id: str, amount: Decimal, return_url: str) -> dict[str, Any]:
        cents = top_up_cents(amount)
        return {
            "amount_cents": cents,
            "product_name": f"svc credits: {cents * CREDITS_PER_DOLLAR // 100} credits",
            # The checkout puts the session's id in place of the placeholder: the page can tell whether
            # that payment's credits have arrived.
            "success_url": f"{return_url}?checkout=success&session={{CHECKOUT_SESSION_ID}}",
            "cancel_url": f"{return_url}?checkout=cancelled",
            "client_reference_id": user_id,
            "metadata": {"user_id": user_id, "purpose": "credit_top_up"},
            "idempotency_key": str(uuid.uuid4()),
        }


def start_top_up(checkout: Checkout, user_id: str, amount: Decimal, return_url: str) -> dict[str, Any]:
    """A hosted checkout session for `amount` dollars of credits (what top_up_credits answers and the credits
    page opens); the checkout comes back to `return_url`."""
    request = Credits.checkout_request(user_id, amount, return_url)
    session = checkout.create_session(**request)
    return {
        "checkout_url": session.url,
        "checkout_session_id": session.id,
        "amount": str(amount),
        "credits": request["amount_cents"] * CREDITS_PER_DOLLAR // 100,
        "expires_at": session.expires_at,
    }


def start_upgrade(checkout: Checkout, user: User, return_url: str) -> dict[str, Any]:
    """A hosted checkout for the paid plan (PAID_PLAN_CENTS in one payment); Conflict when already paid."""
    if user.plan == "paid":
        raise Conflict(say("credits.already_paid"), code="already_paid")
    session = checkout.create_session(
        amount_cents=PAID_PLAN_CENTS,
        product_name="svc paid plan",
        success_url=f"{return_url}?upgrade=success&session={{CHECKOUT_SESSION_ID}}",
        cancel_url=f"{return_url}?checkout=cancelled",
        client_reference_id=user.id,
        metadata={"user_id": user.id, "purpose": "plan_upgrade"},
        idempotency_key=str(uuid.uuid4()),
    )
    return {
        "checkout_url": session.url,
        "checkout_session_id": session.id,
        "amount": f"{PAID_PLAN_CENTS / 100:.2f}",
        "expires_at": session.expires_at,
    }
