"""Credits and the plan in headless Chromium at 1280 and 375 px against the running local stack, by clicking
only: the Free plan's upgrade from the home page through the plan page and the Stripe sandbox's hosted page to
the paid plan (its signed webhook sets it); a builder message refused in words when the balance is short, the
top-up its link leads to, the message then sent, and the history of both, newest first."""

from __future__ import annotations

import re

import pytest
from stackproc import browser_sign_in, create_user
from test_workspace_browser import shot
from test_workspace_builder_browser import shop_with_a_repository

PASSWORD = "credits-pass-123"


def fits_a_phone(page) -> None:
    """At 375 px: no horizontal scroll, and the navigation (folded into its menu) under 80 px high."""
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert page.locator("header.top").bounding_box()["height"] < 80


def checked_at(page, width: int) -> None:
    if width == 375:
        fits_a_phone(page)


def pay_on_the_sandbox(page, sandbox: str, price: str) -> None:
    page.wait_for_url(f"{sandbox}/stripe/pay/*")
    assert f"Pay {price} USD" in page.content()
    page.click("#pay")


@pytest.mark.parametrize("width", [1280, 375])
def test_the_free_plans_upgrade_goes_through_the_plan_page_and_the_checkout_to_paid(
    chromium, stack, gateway, width
):
    email = f"free-{width}@example.com"
    create_user(stack, email, PASSWORD, plan="free")
    sandbox = stack.services["sandbox"]
    context, page = browser_sign_in(email, PASSWORD, chromium, gateway, "/", width=width)
    try:
        assert page.locator("#plan").inner_text() == "Free"
        page.locator("#plan-hint").get_by_role("link", name="upgrade").click()
        page.wait_for_url(f"{gateway}/workspace/billing#plan-panel")
        assert "publishing a shop needs the paid plan" in page.locator("#plan-words").inner_text()
        checked_at(page, width)
        if width == 1280:
            shot(page, "plan-free")
        page.click("#upgrade")
        pay_on_the_sandbox(page, sandbox, "25.00")
        page.wait_for_url(f"{gateway}/workspace/billing?upgrade=success*")
        # The page follows the payment's webhook without a reload.
        page.locator("#upgrade-status", has_text="Your account is on the paid plan").wait_for(timeout=20_000)
        assert page.locator("#plan").inner_text() == "Paid"
        assert page.locator("#upgrade-form").count() == 0  # offered only while on the Free plan
        assert "You are on the paid plan" in page.locator("#plan-words").inner_text()
        checked_at(page, width)
        page.goto(f"{gateway}/")
        assert page.locator("#plan").inner_text() == "Paid"
        assert page.locator("#plan-hint").count() == 0
    finally:
        context.close()


def history(page) -> list[str]:
    return [" ".join(row.split()) for row in page.locator("#credit-history tbody tr").all_inner_texts()]


def test_a_short_balance_is_refused_with_a_top_up_link_and_the_history_follows(chromium, stack, gateway):
    email = "short@example.com"
    create_user(stack, email, PASSWORD, credits=5)  # less than a message costs
    sandbox = stack.services["sandbox"]
    context, page = browser_sign_in(email, PASSWORD, chromium, gateway, "/", width=1280)
    try:
        pid = shop_with_a_repository(page, gateway, "credits")
        cost = page.locator("#builder-cost")
        assert cost.inner_text() == (
            "A message costs 10 credits; your balance is 5 credits. Top up your credits to send one."
        )
        page.fill("#builder-text", "Add a page about our single origins")
        page.click("#builder-send")
        assert page.locator("#builder-error").inner_text() == (
            "Not enough credits: a message to the builder costs 10 credits and your balance is 5. "
            "Top up your credits to send it."
        )
        assert page.locator("#builder-text").input_value().strip() == "Add a page about our single origins"
        shot(page, "builder-credits-short")
        page.set_viewport_size({"width": 375, "height": 900})
        assert page.locator("#builder-top-up").is_visible()
        fits_a_phone(page)
        page.set_viewport_size({"width": 1280, "height": 900})

        page.click("#builder-top-up")
        page.wait_for_url(f"{gateway}/workspace/billing")
        page.fill("#amount", "5")
        page.click("#top-up")
        pay_on_the_sandbox(page, sandbox, "5.00")
        page.wait_for_url(f"{gateway}/workspace/billing?checkout=success*")
        page.locator("#checkout-status", has_text="500 credits added").wait_for(timeout=20_000)
        assert page.locator("#balance").inner_text() == "505 credits"

        page.goto(f"{gateway}/workspace/projects/{pid}")
        assert cost.inner_text() == "A message costs 10 credits; your balance is 505 credits."
        assert page.locator("#builder-top-up").count() == 0
        page.fill("#builder-text", "Add a page about our single origins")
        page.click("#builder-send")
        page.locator("#builder-message[data-status=complete]").wait_for(timeout=20_000)

        page.goto(f"{gateway}/workspace/billing")
        assert page.locator("#balance").inner_text() == "495 credits"
        rows = history(page)
        assert len(rows) == 3
        assert re.search(r"Message to the builder of .+ -10$", rows[0])
        assert rows[1].endswith("Top-up of $5.00 +500")
        assert rows[2].endswith("Welcome credits +5")
        assert all(re.match(r"\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC", row) for row in rows)
        shot(page, "credits-history")
        page.set_viewport_size({"width": 375, "height": 900})
        fits_a_phone(page)
        assert page.locator("#credit-history").is_visible()
    finally:
        context.close()
