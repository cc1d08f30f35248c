"""The builder page in headless Chromium against the running local stack, by clicking only: at 1280 px the
conversation sits beside a live preview of the published shop (its storefront in a frame, which the page's policy
allows; while the site's first build runs the preview says so, and frames the storefront once it is live), a
message sent there is followed to its commit and the preview reloads once that commit is live; leave
and come back through the project page's panel, and the conversation is all there with its commit linked to its
diff; at 375 px the preview comes below the conversation without sideways scrolling; another merchant opening
the session's address is told it does not exist."""

from __future__ import annotations

import functools
import re

import httpx
import pytest
from screenshots import assert_readme_shows, shot
from stackproc import browser_sign_in, create_user
from test_workspace_browser import publish_by_clicking
from test_workspace_more_browser import connect_all

EMAIL, PASSWORD = "studio-merchant@example.com", "studio-pass-123"
signed_in_page = functools.partial(browser_sign_in, EMAIL, PASSWORD)


@pytest.fixture(scope="module")
def shop(stack, gateway, chromium):
    """A merchant with every provider connected and a published shop, by clicking: its id and live URL, and
    `release`, which lets the site's first build go on (the site host holds it until then)."""
    create_user(stack, EMAIL, PASSWORD)
    builds = f"{stack.services['sandbox']}/__admin/netlify/settings"
    release = functools.partial(httpx.post, builds, json={"build_delay": 0.3})
    assert httpx.post(builds, json={"build_delay": 600}).status_code == 200
    context, page = signed_in_page(chromium, gateway, "/")
    try:
        connect_all(page, gateway)
        project_id = publish_by_clicking(page, gateway, "Independent bookshop")
        live = page.locator("#live a").get_attribute("href")
        assert live and live.startswith("http")
        yield {"gateway": gateway, "id": project_id, "live": live, "session": {}, "release": release}
    finally:
        context.close()
        release()


def preview_text(page) -> str:
    return page.frame_locator("#preview-frame").locator("body").inner_text(timeout=20_000)


def test_at_1280_the_builder_sits_beside_the_live_preview_and_keeps_its_conversation(chromium, shop):
    gateway, pid = shop["gateway"], shop["id"]
    context, page = signed_in_page(chromium, gateway, f"/workspace/projects/{pid}", width=1280)
    try:
        page.get_by_role("link", name="Open the builder beside a live preview").click()
        page.wait_for_url(f"{gateway}/workspace/projects/{pid}/builder")
        assert page.locator("#messages").inner_text().startswith("Describe a change to your shop below")
        # The site's first build has not finished: nothing is framed yet, and the preview says why.
        assert "The site's first build is running" in page.locator("#preview-state").inner_text()
        assert page.locator("#preview-frame").count() == 0 and page.locator("#preview-open").count() == 0
        shop["release"]()
        # Once it is live, the preview frames the live storefront, beside the conversation.
        page.locator("#preview-frame").wait_for(timeout=60_000)
        assert "Shop all products" in preview_text(page)  # the storefront, served by the site host
        chat, preview = page.locator("#conversation").bounding_box(), page.locator("#preview").bounding_box()
        assert chat and preview and chat["x"] + chat["width"] <= preview["x"]
        assert preview["width"] > chat["width"] and abs(preview["y"] - chat["y"]) < 2
        assert page.locator("#preview-reload").is_visible()

        live_loads: list[str] = []
        page.on(
            "framenavigated", lambda f: live_loads.append(f.url) if f.url.startswith(shop["live"]) else None
        )
        page.fill("#builder-text", "Add a staff picks shelf to the home page")
        page.click("#builder-send")
        page.wait_for_url(re.compile(rf".*/workspace/projects/{pid}/builder/es_[A-Za-z0-9]+#latest$"))
        session_url = page.url.split("#")[0]
        shop["session"]["url"] = session_url
        latest = page.locator("#latest")
        latest.locator(".message[data-status=complete]").wait_for(timeout=30_000)
        sha = latest.locator(".message-sha").inner_text()
        assert len(sha) == 7
        # The site is rebuilt from the builder's commit; once it is live the preview reloads by itself.
        page.locator("#preview-state", has_text=f"commit {sha} is live").wait_for(timeout=120_000)
        assert live_loads, "the preview was not reloaded"
        shot(page, "builder-studio")

        # Leave, come back through the project page's panel: the conversation is all there.
        page.get_by_role("link", name="Overview").click()
        page.wait_for_url(f"{gateway}/workspace/projects/{pid}")
        page.locator("#edits li a", has_text="Add a staff picks shelf").click()
        page.wait_for_url(session_url)
        turn = page.locator("#messages .turn").last
        assert "Add a staff picks shelf to the home page" in turn.locator(".said").inner_text()
        assert "Done" in turn.locator(".answer").inner_text()
        assert "Add a staff picks shelf" in turn.locator(".message-response").inner_text()
        assert turn.locator(".message-sha").inner_text() == sha
        turn.get_by_role("link", name="See what it changed").click()
        page.wait_for_url(f"{gateway}/workspace/projects/{pid}/diff?commit=*")
        assert f"What commit {sha} changed" in page.locator("#diff-summary").inner_text()
    finally:
        context.close()


def test_at_375_the_preview_comes_below_the_conversation(chromium, shop):
    gateway, pid = shop["gateway"], shop["id"]
    session_url = shop["session"].get("url")
    assert session_url, "the 1280 px test starts the session"
    context, page = signed_in_page(chromium, gateway, session_url.removeprefix(gateway), width=375)
    try:
        assert "Add a staff picks shelf to the home page" in page.locator("#messages").inner_text()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        chat, preview = page.locator("#conversation").bounding_box(), page.locator("#preview").bounding_box()
        assert chat and preview and preview["y"] >= chat["y"] + chat["height"]
        page.get_by_role("link", name="See the live preview").click()
        assert "Shop all products" in preview_text(page)  # the storefront, served by the site host
        shot(page, "builder-studio-phone")
        page.goto(f"{gateway}/workspace/projects/{pid}/builder")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    finally:
        context.close()


def test_another_merchants_session_address_is_not_found(chromium, shop, stack):
    session_url = shop["session"].get("url")
    assert session_url, "the 1280 px test starts the session"
    create_user(stack, "studio-other@example.com", "studio-other-123")
    context, page = browser_sign_in(
        "studio-other@example.com", "studio-other-123", chromium, shop["gateway"], "/", width=375
    )
    try:
        answer = page.goto(session_url)
        assert answer and answer.status == 404
        assert page.locator("h1").inner_text() == "Not found"
        assert "This page does not exist, or it is not shared with you." in page.locator("main").inner_text()
        assert "staff picks" not in page.content()
    finally:
        context.close()


def test_screenshots_are_where_the_readme_shows_them():
    assert_readme_shows("builder-studio", "builder-studio-phone")
