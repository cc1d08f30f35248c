"""Credits and the plan through the workspace's pages and /mcp (API Gateway proxy events; the builder, GitHub and
checkout sandboxes over HTTP): a builder message's cost beside Send and in the history, a message the builder
never took given back, the refusal of a short balance in words (with a top-up link on the page, and where to
top up in the MCP result), and the Free plan's upgrade through the hosted checkout and its webhook."""

from __future__ import annotations

import json
import re
import time

import httpx
from test_workspace_builder_pages import shop, text_of  # noqa: F401 - the fixture, shared
from test_workspace_pages import csrf_of, sign_in

from apiclient import call_tool
from apiclient import tool_error as error_text
from svc_shared.domain.credit_history import WELCOME_CREDITS
from svc_shared.domain.credits import MESSAGE_COST, PAID_PLAN_CENTS
from svc_shared.providers.checkout import sign_payload
from svc_shared.wiring import services


def history_rows(page) -> list[str]:
    """The credit history's rows as a person reads them, top to bottom."""
    body = page.text.split('id="credit-history"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr data-kind=[^>]*>(.*?)</tr>", body, re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", row).split()) for row in rows]


def send(api, pid: str, message: str):
    token = csrf_of(api.get(f"/workspace/projects/{pid}"))
    return api.post(f"/workspace/projects/{pid}/builder", form={"csrf": token, "message": message})


def test_a_message_costs_its_credits_beside_send_and_in_the_history(shop):  # noqa: F811
    api, pid, user = shop["api"], shop["id"], shop["user"]
    page = api.get(f"/workspace/projects/{pid}")
    assert f"A message costs {MESSAGE_COST} credits; your balance is {WELCOME_CREDITS} credits." in text_of(
        page
    )
    assert 'id="builder-top-up"' not in page.text
    sent = send(api, pid, "Add a page about our wicks")
    assert sent.status == 303, sent.text
    assert services.credits().balance(user.id) == WELCOME_CREDITS - MESSAGE_COST
    name = services.projects().get(pid).name
    rows = history_rows(api.get("/workspace/billing"))
    assert len(rows) == 2
    assert rows[0].endswith(f"Message to the builder of {name} -{MESSAGE_COST}")
    assert rows[1].endswith(f"Welcome credits +{WELCOME_CREDITS}")
    assert re.match(r"\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC ", rows[0])  # the workspace's one format


def test_a_message_the_builder_never_took_is_given_back(shop):  # noqa: F811
    api, pid, user = shop["api"], shop["id"], shop["user"]
    sandbox = shop["env"]["sandbox"].url
    httpx.post(
        f"{sandbox}/__admin/faults", json={"method": "POST", "path": "/builder/*", "status": 503, "times": 5}
    )
    try:
        down = send(api, pid, "Add a FAQ page")
    finally:
        httpx.delete(f"{sandbox}/__admin/faults")
    assert down.status == 502
    assert services.credits().balance(user.id) == WELCOME_CREDITS
    rows = history_rows(api.get("/workspace/billing"))
    assert len(rows) == 1 and rows[0].endswith(f"Welcome credits +{WELCOME_CREDITS}")  # no spend left


def test_a_short_balance_refuses_the_message_in_words_on_the_page_and_over_mcp(shop):  # noqa: F811
    api, pid, user = shop["api"], shop["id"], shop["user"]
    for _ in range(WELCOME_CREDITS // MESSAGE_COST):  # spent down to 0 by earlier messages
        services.credits().charge_message(user.id, pid, "Candles")
    assert services.credits().balance(user.id) == 0
    page = api.get(f"/workspace/projects/{pid}")
    assert "your balance is 0 credits. Top up your credits to send one." in text_of(page)
    assert 'id="builder-top-up" href="http://127.0.0.1:3000/workspace/billing"' in page.text

    refused = send(api, pid, "Add a gift card page")
    assert refused.status == 402
    words = (
        f"Not enough credits: a message to the builder costs {MESSAGE_COST} credits and your balance is 0. "
        "Top up your credits to send it."
    )
    assert words in text_of(refused)
    assert 'id="builder-top-up"' in refused.text and "Add a gift card page" in refused.text  # kept

    result = call_tool(api, shop["bearer"], "send_message", project_id=pid, message="Add a gift card page")
    assert error_text(result) == (
        f"{words} Top up with the top_up_credits tool, or on the Credits page: "
        "http://127.0.0.1:3000/workspace/billing"
    )
    assert result["_meta"]["svc/error"]["code"] == "credits_short"
    assert services.credits().balance(user.id) == 0  # nothing charged, nothing sent
    edits = call_tool(api, shop["bearer"], "list_edits", project_id=pid)["structuredContent"]
    assert edits["edit_sessions"] == []


def test_the_free_plans_upgrade_goes_through_the_checkout_and_its_webhook(api, demo_user, provider_env):
    services.accounts().set_plan(demo_user.id, "free")
    sign_in(api)
    wool = services.projects().create(
        owner_id=demo_user.id,
        workspace_id=demo_user.default_workspace_id,
        prompt="Hand-dyed wool for patient knitters, friendly tone",
        name="Wool Shed",
    )
    free_shop = text_of(api.get(f"/workspace/projects/{wool.id}"))
    assert "Upgrade to the paid plan to publish this shop." in free_shop
    assert "once the shop is published, which needs the paid plan." in free_shop  # no Publish to press yet
    page = api.get("/workspace/billing")
    assert '<dd id="plan">Free</dd>' in page.text
    assert 'href="http://127.0.0.1:3000/workspace/billing#plan-panel"' in api.get("/").text
    ready = api.post("/workspace/billing/upgrade", form={"csrf": csrf_of(page)})
    assert ready.status == 200, ready.text
    assert f"the paid plan (${PAID_PLAN_CENTS / 100:.2f})" in ready.text
    link = re.search(r'id="checkout-link" data-go="yes" href="([^"]+)"', ready.text)
    assert link and link[1].startswith(provider_env["sandbox"].url + "/stripe/pay/cs_test_")
    session_id = link[1].rsplit("/", 1)[1]

    back = api.get("/workspace/billing", params={"upgrade": "success", "session": session_id})
    assert "your paid plan is pending" in back.text and '<dd id="plan">Free</dd>' in back.text
    body = json.dumps(
        {
            "id": "evt_plan",
            "type": "checkout.session.completed",
            "data": {
                "object": {
                    "id": session_id,
                    "amount_total": PAID_PLAN_CENTS,
                    "payment_status": "paid",
                    "metadata": {"user_id": demo_user.id, "purpose": "plan_upgrade"},
                }
            },
        }
    ).encode()
    signature = sign_payload(body, provider_env["checkout_webhook_secret"], int(time.time()))
    headers = {"Content-Type": "application/json", "Stripe-Signature": signature}
    assert api.post("/api/webhooks/checkout", body=body, headers=headers).json()["upgraded"] is True
    done = api.get("/workspace/billing", params={"upgrade": "success", "session": session_id})
    assert "Your account is on the paid plan" in done.text and '<dd id="plan">Paid</dd>' in done.text
    assert 'id="upgrade-form"' not in done.text  # the upgrade is offered only while on the Free plan
    assert 'id="plan-hint"' not in api.get("/").text
    paid_shop = api.get(f"/workspace/projects/{wool.id}")
    assert 'id="upgrade-link"' not in paid_shop.text and 'id="publish-button"' in paid_shop.text
    assert "once the shop is published: press Publish below." in text_of(paid_shop)

    again = api.post("/workspace/billing/upgrade", form={"csrf": csrf_of(done)})
    assert again.status == 409 and "Your account is already on the paid plan." in text_of(again)
