"""The builder panel, the repository's files and diffs, and knowledge in headless Chromium against the running
local stack (its builder and GitHub sandboxes), as a merchant uses them: send a message and watch it finish,
open the diff of its commit, continue the session, see a builder failure in words, follow a message without
script through Refresh, browse files (text, binary, too large), compare two refs, and edit knowledge with its
10 KB limit shown while typing."""

from __future__ import annotations

import base64
import functools
from urllib.parse import urlsplit

import httpx
import pytest
from screenshots import assert_readme_shows, shot
from stackproc import browser_sign_in, create_user

EMAIL, PASSWORD = "builder-merchant@example.com", "builder-pass-1"


sign_in = functools.partial(browser_sign_in, EMAIL, PASSWORD)


def shop_with_a_repository(page, gateway: str, repo_prefix: str) -> str:
    """By clicking: GitHub and Supabase connected, a shop made from a template and its repository created (the
    builder asks for one until then); the shop's id."""
    page.goto(f"{gateway}/workspace/connections")
    with page.expect_popup() as popup:
        page.locator("#card-db_host").get_by_role("link", name="Connect Supabase").click()
    popup.value.wait_for_event("close")
    page.locator("#card-db_host .ok").wait_for()
    page.locator("#card-repo_host").get_by_role("link", name="Connect GitHub").click()
    page.locator("#card-repo_host .ok").wait_for()
    page.goto(f"{gateway}/?new=1")
    page.get_by_label("Coffee roastery", exact=False).check()
    page.click("#create-project")
    page.wait_for_url(f"{gateway}/workspace/projects/*")
    project_id = urlsplit(page.url).path.rsplit("/", 1)[1]
    assert "publish the shop, or link a repository below, first" in page.locator("#builder").inner_text()
    page.fill("#repo-name", f"{repo_prefix}-{project_id[:8]}")
    page.locator("#repo-form button[type=submit]").click()
    page.wait_for_url("**?done=repo")
    return project_id


@pytest.fixture(scope="module")
def shop(stack, gateway, chromium):
    """A merchant who connected GitHub and Supabase, made a shop and created its repository, by clicking."""
    create_user(stack, EMAIL, PASSWORD)
    context, page = sign_in(chromium, gateway, "/workspace/connections")
    try:
        project_id = shop_with_a_repository(page, gateway, "roastery")
        return {"gateway": gateway, "sandbox": stack.services["sandbox"], "id": project_id}
    finally:
        context.close()


def test_a_message_to_the_builder_finishes_in_the_panel_and_links_its_diff(chromium, shop):
    gateway, pid = shop["gateway"], shop["id"]
    context, page = sign_in(chromium, gateway, f"/workspace/projects/{pid}")
    try:
        panel = page.locator("#builder")
        assert "No edit session yet" in panel.inner_text()
        page.fill("#builder-text", "Add a brewing guide for the V60")
        page.click("#builder-send")
        page.wait_for_url(f"{gateway}/workspace/projects/{pid}?message=*")
        words = page.locator("#message-words")
        page.locator("#builder-message[data-status=complete]").wait_for(timeout=20_000)
        assert words.inner_text() == "Done"
        assert "Add a brewing guide for the V60" in page.locator("#message-response").inner_text()
        sha = page.locator("#message-sha").inner_text()
        assert len(sha) == 7
        assert page.locator("#message-error").is_hidden()
        # The session it started is listed and chosen for the next message.
        page.reload()
        assert page.locator("#edits li").first.inner_text().startswith("Add a brewing guide for the V60")
        assert (
            page.locator("#builder-session option:checked").inner_text().startswith("Continue: Add a brewing")
        )
        shot(page, "builder-panel")

        page.click("#message-diff")
        page.wait_for_url(f"{gateway}/workspace/projects/{pid}/diff?commit=*")
        assert f"What commit {sha} changed" in page.locator("#diff-summary").inner_text()
        added = page.locator("section.diff-file[data-file='BUILDER_NOTES.md'] .line.add")
        assert any("Add a brewing guide for the V60" in t for t in added.all_inner_texts())
        assert "added:" in added.last.inner_text()  # said, not only coloured
        shot(page, "diff")

        # From the message's panel, a second message continues its session: one session of two messages.
        page.go_back()
        assert (
            page.locator("#builder-session option:checked").inner_text().startswith("Continue: Add a brewing")
        )
        page.fill("#builder-text", "Also a Chemex guide")
        page.click("#builder-send")
        page.locator("#builder-message[data-status=complete]").wait_for(timeout=20_000)
        page.reload()
        assert page.locator("#edits li").count() == 1
        assert "2 messages" in page.locator("#edits li").first.inner_text()

        # A new session is listed first.
        page.select_option("#builder-session", "")
        page.fill("#builder-text", "Change the footer colour")
        page.click("#builder-send")
        page.locator("#builder-message[data-status=complete]").wait_for(timeout=20_000)
        page.reload()
        assert page.locator("#edits li").first.inner_text().startswith("Change the footer colour")
    finally:
        context.close()


def test_a_builder_failure_is_shown_in_words_and_the_message_kept(chromium, shop):
    gateway, sandbox, pid = shop["gateway"], shop["sandbox"], shop["id"]
    context, page = sign_in(chromium, gateway, f"/workspace/projects/{pid}")
    httpx.post(
        f"{sandbox}/__admin/faults", json={"method": "POST", "path": "/builder/*", "status": 503, "times": 10}
    )
    try:
        page.fill("#builder-text", "Add a gift card page")
        page.click("#builder-send")
        error = page.locator("#builder-error")
        error.wait_for()
        assert (
            error.inner_text() == "The site builder is not answering right now. Try again in a few minutes."
        )
        assert page.locator("#builder-text").input_value() == "Add a gift card page"
    finally:
        httpx.delete(f"{sandbox}/__admin/faults")
        context.close()


def test_without_script_a_message_is_followed_with_refresh(chromium, shop):
    gateway, sandbox, pid = shop["gateway"], shop["sandbox"], shop["id"]
    httpx.post(f"{sandbox}/__admin/builder/settings", json={"delay": 2.0})
    context, page = sign_in(chromium, gateway, f"/workspace/projects/{pid}", script=False)
    try:
        page.fill("#builder-text", "Add a decaf range")
        page.click("#builder-send")
        page.wait_for_url(f"{gateway}/workspace/projects/{pid}?message=*")
        assert page.locator("#message-words").inner_text() == "The builder is working on it"
        for _ in range(20):
            if page.get_by_role("link", name="Refresh").count() == 0:
                break
            page.wait_for_timeout(500)
            page.get_by_role("link", name="Refresh").click()
        assert page.locator("#message-words").inner_text() == "Done"
        assert page.get_by_role("link", name="See what it changed").is_visible()
    finally:
        httpx.post(f"{sandbox}/__admin/builder/settings", json={"delay": 0.5})
        context.close()


def push(page, gateway: str, project_id: str, files: list[dict]) -> str:
    answer = page.request.post(
        f"{gateway}/api/repo-host/push",
        data={"projectId": project_id, "files": files},
        headers={"Origin": gateway},
    )
    assert answer.status == 200, answer.text()
    return str(answer.json()["sha"])


def test_files_a_text_file_a_binary_file_a_large_one_and_a_diff(chromium, shop):
    gateway, pid = shop["gateway"], shop["id"]
    context, page = sign_in(chromium, gateway, f"/workspace/projects/{pid}")
    try:
        before = push(page, gateway, pid, [{"path": "src/menu.txt", "content": "espresso\nlatte\n"}])
        push(
            page,
            gateway,
            pid,
            [
                {"path": "src/menu.txt", "content": "espresso\nflat white\n"},
                {
                    "path": "img/bean.png",
                    "encoding": "base64",
                    "content": base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\xff\xfe").decode(),
                },
                {"path": "data/huge.txt", "content": "y" * (1024 * 1024 + 1)},
            ],
        )
        page.reload()
        page.click("#files-link")
        page.wait_for_url(f"{gateway}/workspace/projects/{pid}/files")
        assert "BUILDER_NOTES.md" in page.locator("#files").inner_text()
        page.get_by_role("link", name="src/menu.txt").click()
        assert page.locator("h1").inner_text() == "src/menu.txt"
        assert page.locator("#file-content").inner_text() == "espresso\nflat white\n"
        page.click("#back-to-files")
        page.get_by_role("link", name="img/bean.png").click()
        assert "binary file (11 bytes)" in page.locator("#file-binary").inner_text()
        page.goto(f"{gateway}/workspace/projects/{pid}/files")
        page.get_by_role("link", name="data/huge.txt").click()
        assert page.locator("#file-error").inner_text().startswith("data/huge.txt is over 1 MB")

        # An older ref shows the files as they were.
        page.goto(f"{gateway}/workspace/projects/{pid}/files")
        page.fill("#ref", before)
        page.get_by_role("button", name="Show").click()
        assert "data/huge.txt" not in page.locator("#files").inner_text()

        page.goto(f"{gateway}/workspace/projects/{pid}/diff")
        page.fill("#base", before)
        page.get_by_role("button", name="Compare").click()
        menu = page.locator("section.diff-file[data-file='src/menu.txt']")
        assert menu.locator(".line.del").all_text_contents() == ["removed: -latte"]
        assert menu.locator(".line.add").all_text_contents() == ["added: +flat white"]
        assert "Added" in page.locator("section.diff-file[data-file='img/bean.png'] h2").inner_text()

        page.fill("#base", "not..a-ref")
        page.get_by_role("button", name="Compare").click()
        assert (
            "base 'not..a-ref' is not a branch, tag or commit SHA" in page.locator("#diff-error").inner_text()
        )
    finally:
        context.close()


def test_knowledge_shows_its_size_as_you_type_and_refuses_over_10_kb(chromium, shop):
    gateway, pid = shop["gateway"], shop["id"]
    context, page = sign_in(chromium, gateway, "/")
    try:
        page.get_by_role("link", name="Knowledge", exact=True).click()
        assert "A project's own knowledge takes precedence" in page.locator("#precedence").inner_text()
        count = page.locator("#knowledge-count")
        page.fill("#knowledge-text", "é" * 5120)  # 10,240 bytes: the limit exactly
        assert count.inner_text() == "10,240 of 10,240 bytes"
        page.type("#knowledge-text", "!")
        assert count.inner_text() == "10,241 of 10,240 bytes: 1 over the limit"
        page.click("#knowledge-save")
        assert "at most 10240 bytes (10 KB)" in page.locator("#knowledge-error").inner_text()
        page.fill("#knowledge-text", "Write like a barista: warm, precise.")
        page.click("#knowledge-save")
        assert page.locator(".notice").inner_text().startswith("Knowledge saved.")
        assert page.locator("#knowledge-text").input_value() == "Write like a barista: warm, precise."

        page.get_by_role("link", name="Coffee roastery", exact=True).click()
        assert "take precedence over your workspace knowledge" in page.locator("#precedence").inner_text()
        page.fill("#knowledge-text", "Only single-origin beans.")
        page.click("#knowledge-save")
        assert page.locator(".notice").inner_text().startswith("Knowledge saved.")
        page.fill("#knowledge-text", "")
        page.click("#knowledge-save")
        assert page.locator(".notice").inner_text() == "Knowledge cleared."
        assert page.locator("#knowledge-count").inner_text() == "0 of 10,240 bytes"
        page.goto(f"{gateway}/workspace/projects/{pid}")
        page.click("#knowledge-link")
        assert page.locator("h1").inner_text() == "Project knowledge"
    finally:
        context.close()


def test_the_new_pages_read_at_375_px_without_sideways_scrolling(chromium, shop):
    gateway, pid = shop["gateway"], shop["id"]
    context, page = sign_in(chromium, gateway, "/", width=375)
    try:
        for path in (
            "",
            "/files",
            "/files/read?path=BUILDER_NOTES.md",
            "/diff?base=HEAD&head=HEAD",
            "/knowledge",
            "/builder",
        ):
            page.goto(f"{gateway}/workspace/projects/{pid}{path}")
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), path
        # Not published yet: the builder page says where the preview comes from, and leads there.
        assert page.locator("#preview-empty").inner_text().startswith("The preview shows the live shop once")
        page.get_by_role("link", name="Publish it from the project page").click()
        page.wait_for_url(f"{gateway}/workspace/projects/{pid}#publish")
        page.goto(f"{gateway}/workspace/knowledge")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        # Keyboard: the message field and the send button are reached with Tab.
        page.goto(f"{gateway}/workspace/projects/{pid}")
        page.focus("#builder-text")
        page.keyboard.press("Tab")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "builder-send"
    finally:
        context.close()


def test_screenshots_are_where_the_readme_shows_them():
    assert_readme_shows("builder-panel", "diff")
