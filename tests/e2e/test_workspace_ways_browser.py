"""The workspace's ways in, in headless Chromium at 1280 and 375 px: a mistyped address anywhere on the
platform is a page in words, a browser opening the MCP server's URL is told what it is for, and on a phone the
navigation folds into a menu that stays under 80 px until opened."""

from __future__ import annotations

import functools

import pytest
from stackproc import browser_sign_in, new_merchant

EMAIL, PASSWORD = "ways@example.com", "ways-pass-123"
UNKNOWN = ["/foo", "/workspace/nope", "/workspace/projects/00000000-0000-0000-0000-000000000000/bogus"]


@pytest.fixture(scope="module")
def merchant(stack):
    return new_merchant(stack, EMAIL, PASSWORD)


signed_in_page = functools.partial(browser_sign_in, EMAIL, PASSWORD)


def no_horizontal_scroll(page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


@pytest.mark.parametrize("width", [1280, 375])
def test_a_mistyped_address_is_a_page_in_words(chromium, merchant, width):
    context, page = signed_in_page(chromium, merchant["gateway"], "/", width=width)
    try:
        for path in UNKNOWN:
            answer = page.goto(f"{merchant['gateway']}{path}")
            assert answer.status == 404
            assert page.locator("h1").inner_text() == "Not found"
            assert "This page does not exist." in page.content()
            assert '"message"' not in page.locator("body").inner_text()
            assert no_horizontal_scroll(page)
        assert (
            page.get_by_role("link", name="Back to your projects").get_attribute("href")
            == f"{merchant['gateway']}/"
        )
    finally:
        context.close()


@pytest.mark.parametrize("width", [1280, 375])
def test_a_browser_opening_the_mcp_url_reads_what_it_is_for(chromium, merchant, width):
    context = chromium.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    try:
        answer = page.goto(f"{merchant['gateway']}/mcp")
        assert answer.status == 200
        assert page.locator("h1").inner_text() == "This address is for your AI client"
        assert page.locator("#mcp-url").inner_text() == f"{merchant['gateway']}/mcp"
        assert no_horizontal_scroll(page)
    finally:
        context.close()


def test_on_a_phone_the_navigation_is_a_menu(chromium, merchant):
    context, page = signed_in_page(chromium, merchant["gateway"], "/", width=375)
    try:
        header = page.locator("header.top")
        assert header.bounding_box()["height"] < 80
        assert not header.get_by_role("link", name="Connections").is_visible()
        menu = page.get_by_role("button", name="Menu")
        menu.click()
        assert menu.get_attribute("aria-expanded") == "true"
        header.get_by_role("link", name="Connections").click()
        page.wait_for_url(f"{merchant['gateway']}/workspace/connections")
        assert page.locator("header.top").bounding_box()["height"] < 80
        assert no_horizontal_scroll(page)
    finally:
        context.close()
    wide, page = signed_in_page(chromium, merchant["gateway"], "/", width=1280)
    try:
        assert not page.get_by_role("button", name="Menu").is_visible()
        assert page.locator("header.top").get_by_role("link", name="Connections").is_visible()
    finally:
        wide.close()
