"""A project's page following its state without a reload, and its rename and delete, in headless Chromium at
1280 and 375 px against the running local stack, by clicking only: a publish reaching ready enables the builder
and moves the link forms to Settings; a builder's commit shows as the last pushed commit, and the deploy it
starts goes live in the deploys list; a project is renamed, and deleted once its name is typed (a wrong name
is refused in words); someone else's project's Settings is refused in words; without script, a link reloads
the page."""

from __future__ import annotations

import functools
from urllib.parse import urlsplit

import httpx
import pytest
from stackproc import browser_sign_in, create_user, new_merchant
from test_workspace_browser import shot
from test_workspace_more_browser import connect_all, new_shop

EMAIL, PASSWORD = "project-page@example.com", "project-page-pass-1"
OTHER, OTHER_PASSWORD = "project-stranger@example.com", "project-stranger-pass-1"

signed_in_page = functools.partial(browser_sign_in, EMAIL, PASSWORD)


@pytest.fixture(scope="module")
def merchant(stack):
    return new_merchant(stack, EMAIL, PASSWORD)


def no_horizontal_scroll(page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def mark(page) -> None:
    """A mark a reload would wipe: the page is the same document while it stays."""
    page.evaluate("window.sameDocument = 'yes'")


def same_document(page) -> bool:
    return page.evaluate("window.sameDocument") == "yes"


def test_the_project_page_follows_publish_a_builder_commit_and_its_deploy_without_a_reload(
    chromium, merchant
):
    gateway, sandbox = merchant["gateway"], merchant["sandbox"]
    httpx.post(f"{sandbox}/__admin/supabase/settings", json={"project_ready_delay": 0.3})
    context, page = signed_in_page(chromium, gateway, "/", width=1280)
    try:
        connect_all(page, gateway)
        project_id = new_shop(page, gateway, "Coffee roastery")
        assert "publish the shop, or link a repository below, first" in page.locator("#builder").inner_text()
        assert page.locator("#repo-form").is_visible()
        mark(page)
        page.click("#publish-button")
        page.locator("li[data-stage=ready][data-state=done]").wait_for(timeout=180_000)
        # At ready, without a reload: the builder can be messaged and the link forms are gone from here.
        page.locator("#builder-form").wait_for(timeout=30_000)
        page.locator("#repo-form").wait_for(state="detached")
        assert page.locator("#db-form").count() == 0
        page.get_by_role("link", name="Open backoffice").wait_for()
        page.locator("#deploy-list tr[data-live=true]").wait_for(timeout=60_000)
        assert same_document(page)

        # A builder's commit becomes the last pushed commit, and the deploy it starts goes live, on this page.
        page.fill("#builder-text", "Add a brewing guide for the V60")
        # The page draws the builder's part again while the merchant types (as when the page follows a deploy
        # that goes live): what was typed stays.
        page.evaluate(
            """() => { const part = document.getElementById("builder-part");
                part.dataset.version = "stale"; part.dataset.seen = "before";
                document.dispatchEvent(new Event("visibilitychange")); }"""
        )
        page.locator("#builder-part[data-seen=before]").wait_for(state="detached")
        assert page.input_value("#builder-text") == "Add a brewing guide for the V60"
        builder = f"{sandbox}/__admin/builder/settings"
        delay = httpx.get(builder).json()["delay"]
        httpx.post(builder, json={"delay": 3.0})  # the page opens before the builder has finished
        try:
            page.click("#builder-send")
            page.wait_for_url(f"{gateway}/workspace/projects/{project_id}?message=*")
            mark(page)
            assert page.locator("#builder-message").get_attribute("data-status") == "in_progress"
        finally:
            httpx.post(builder, json={"delay": delay})
        page.locator("#builder-message[data-status=complete]").wait_for(timeout=30_000)
        sha = page.locator("#message-sha").inner_text()
        page.locator("#commit code", has_text=sha).wait_for(timeout=30_000)
        page.locator("#deploy-list tr[data-live=true]", has_text=sha).wait_for(timeout=60_000)
        assert page.locator("#live-deploy code").inner_text() == sha
        assert same_document(page)
        shot(page, "project-live")

        # The link forms are on Settings now.
        page.get_by_role("link", name="Settings").click()
        assert page.locator("#repo-form").is_visible() and page.locator("#db-form").is_visible()
        assert "The shop uses the repository" in page.locator("#setup").inner_text()

        page.set_viewport_size({"width": 375, "height": 800})
        page.goto(f"{gateway}/workspace/projects/{project_id}")
        assert no_horizontal_scroll(page)
        assert page.locator("#builder-form").is_visible() and page.locator("#repo-form").count() == 0
        shot(page, "project-live-375")
    finally:
        context.close()


@pytest.mark.parametrize("width", [1280, 375])
def test_rename_then_delete_with_the_name_typed(chromium, merchant, width):
    gateway = merchant["gateway"]
    context, page = signed_in_page(chromium, gateway, "/", width=width)
    try:
        connect_all(page, gateway)
        project_id = new_shop(page, gateway, "Outdoor gear")
        page.get_by_role("link", name="Settings").click()
        page.fill("#project-name", "")
        page.click("#rename")
        assert page.locator("#project-name-error").inner_text() == "Give the project a name."
        name = f"Trail kit {width}"
        page.fill("#project-name", name)
        page.click("#rename")
        page.wait_for_url("**/settings?saved=renamed")
        assert page.locator("h1").inner_text() == name
        assert "Project renamed." in page.locator("[role=status]").inner_text()
        assert no_horizontal_scroll(page)

        stays = page.locator("#delete-stays").inner_text()
        assert "Not deleted: what publishing made in your own accounts." in stays
        assert "GitHub account" in stays and "Supabase account" in stays and "Netlify account" in stays
        page.fill("#confirm-name", "Trail kit")
        page.click("#delete-project")
        error = page.locator("#delete-error")
        assert f"nothing was deleted. Type {name} exactly to delete it." in error.inner_text()
        assert page.locator("h1").inner_text() == name
        assert no_horizontal_scroll(page)
        shot(page, "project-settings" if width == 1280 else "project-settings-375")

        page.fill("#confirm-name", name)
        page.click("#delete-project")
        page.wait_for_url(f"{gateway}/?done=deleted")
        notice = page.locator("[role=status]").inner_text()
        assert notice.startswith(
            "The project was deleted. Its repository, database and site stay in your own"
        )
        assert name not in page.locator("main").inner_text()
        assert no_horizontal_scroll(page)
        gone = page.goto(f"{gateway}/workspace/projects/{project_id}")
        assert gone.status == 404
        assert "not shared with you" in page.locator("main").inner_text()
    finally:
        context.close()


@pytest.mark.parametrize("width", [1280, 375])
def test_someone_elses_project_settings_are_refused_in_words(chromium, merchant, stack, width):
    gateway = merchant["gateway"]
    context, page = signed_in_page(chromium, gateway, "/", width=width)
    try:
        connect_all(page, gateway)
        project_id = new_shop(page, gateway, "Outdoor gear")
        name = page.locator("h1").inner_text()
    finally:
        context.close()
    if width == 1280:
        create_user(stack, OTHER, OTHER_PASSWORD)
    context, page = browser_sign_in(OTHER, OTHER_PASSWORD, chromium, gateway, "/", width=width)
    try:
        answer = page.goto(f"{gateway}/workspace/projects/{project_id}/settings")
        assert answer.status == 404
        assert "This page does not exist, or it is not shared with you." in page.locator("main").inner_text()
        assert name not in page.locator("main").inner_text()
        assert no_horizontal_scroll(page)
        assert urlsplit(page.url).path.endswith("/settings")
    finally:
        context.close()


def test_without_script_the_project_page_offers_a_reload_link(chromium, merchant):
    gateway = merchant["gateway"]
    context, page = signed_in_page(chromium, gateway, "/", width=375)
    try:
        connect_all(page, gateway)
        project_id = new_shop(page, gateway, "Outdoor gear")
    finally:
        context.close()
    path = f"/workspace/projects/{project_id}"
    context, page = signed_in_page(chromium, gateway, path, width=375, script=False)
    try:
        assert "to see the newest state of the publish" in page.locator("#refresh-hint").inner_text()
        assert no_horizontal_scroll(page)
        page.get_by_role("link", name="Reload").click()
        page.wait_for_url(f"{gateway}{path}")
        assert page.locator("#refresh-hint").is_visible()
    finally:
        context.close()
