"""The builder page through API Gateway proxy events with the builder and GitHub sandboxes: each edit session is a
page holding its whole conversation (messages, replies, commits linked to their diffs, in order) whenever it is
opened again; a session of another project or another user's is not found; the page frames the project's live
site, and only its own page's policy allows that site."""

from __future__ import annotations

import re

import httpx
import pytest
from workbenchpages import builder_shop, csrf_of, follow, local, text_of

from svc_shared.wiring import services

LIVE = "https://candles-shop.netlify.app/"


@pytest.fixture
def shop(api, bearer, provider_env, demo_user):
    return builder_shop(api, bearer, provider_env, demo_user)


def send(api, path: str, message: str, session: str = "") -> str:
    """A message sent from the builder page at `path`: where the browser is sent next."""
    form = {"csrf": csrf_of(api.get(path)), "message": message, "edit_session_id": session, "view": "builder"}
    answer = api.post(path.split("/builder")[0] + "/builder", form=form)
    assert answer.status == 303, answer.text
    return local(answer.header("location"))


def latest_message(api, page_path: str) -> str:
    ids = re.findall(r'data-message="(msg_[A-Za-z0-9]+)"', api.get(page_path).text)
    assert ids, "no message on the page"
    return ids[-1]


def test_each_session_is_a_page_with_its_whole_conversation_in_order(shop):
    api, pid = shop["api"], shop["id"]
    new = api.get(f"/workspace/projects/{pid}/builder")
    assert new.status == 200
    assert "Describe a change to your shop below" in text_of(new)
    assert "Start a new session" in text_of(new)

    location = send(api, f"/workspace/projects/{pid}/builder", "Add a page about our wicks")
    match = re.fullmatch(rf"/workspace/projects/{pid}/builder/(es_[A-Za-z0-9]+)#latest", location)
    assert match, location
    session_path = location.split("#")[0]
    first = follow(api, pid, latest_message(api, session_path))
    assert send(api, session_path, "Now a gift wrapping option", match[1]) == location
    second = follow(api, pid, latest_message(api, session_path))
    assert first["commit_sha"] != second["commit_sha"]

    # Opened again later: the whole conversation, in the order it was sent, each commit linked to its diff.
    page = api.get(session_path)
    assert page.status == 200
    text = text_of(page)
    order = [
        "You Add a page about our wicks",
        "Builder Done",
        " ".join(first["response"].split()),
        f"Commit {first['commit_sha'][:7]} See what it changed",
        "You Now a gift wrapping option",
        " ".join(second["response"].split()),
        f"Commit {second['commit_sha'][:7]} See what it changed",
    ]
    positions = [text.index(words) for words in order]
    assert positions == sorted(positions), text
    for state in (first, second):
        assert f'href="{state["diff_url"]}"' in page.text.replace("&amp;", "&")
    assert "Refresh" not in text
    # The next message continues this session.
    assert f'name="edit_session_id" value="{match[1]}"' in page.text

    # The project page's panel links the session to its page.
    panel = api.get(f"/workspace/projects/{pid}").text
    assert f'href="http://127.0.0.1:3000{session_path}"' in panel
    assert "Add a page about our wicks" in text_of(api.get(f"/workspace/projects/{pid}"))


def test_a_message_refused_on_the_builder_page_is_answered_there_and_kept(shop):
    api, pid = shop["api"], shop["id"]
    path = f"/workspace/projects/{pid}/builder"
    empty = api.post(path, form={"csrf": csrf_of(api.get(path)), "message": " \r\n", "view": "builder"})
    assert empty.status == 400
    assert "Write what the builder should change or build." in text_of(empty)
    assert "New edit session" in text_of(empty)  # the builder page, not the project page
    long = api.post(path, form={"csrf": csrf_of(api.get(path)), "message": "x" * 20_001, "view": "builder"})
    assert long.status == 400 and "A message is at most 20,000 characters" in text_of(long)
    assert "x" * 20_001 in long.text


def test_a_session_of_another_project_or_of_another_user_is_not_found(shop, api):
    pid, owner = shop["id"], shop["user"]
    location = send(api, f"/workspace/projects/{pid}/builder", "Add a candle care page")
    session_path = location.split("#")[0]
    session_id = session_path.rsplit("/", 1)[1]
    follow(api, pid, latest_message(api, session_path))

    other = services.projects().create(
        owner_id=owner.id, workspace_id=owner.default_workspace_id, prompt="Wooden toys, calm tone"
    )
    for path in (
        f"/workspace/projects/{other.id}/builder/{session_id}",  # the owner's, but of another project
        f"/workspace/projects/{pid}/builder/es_unknown",
        f"/workspace/projects/{pid}/builder/es.bad",
        f"/workspace/projects/{pid}/builder/{'e' * 101}",
    ):
        answer = api.get(path)
        assert answer.status == 404, path
        assert "This page does not exist, or it is not shared with you." in text_of(answer)

    # A member who may see the project is told the builder is its owner's; a stranger that it does not exist.
    member = services.accounts().create_user(email="m@example.com", password="member-password-1")
    services.accounts().add_collaborator(owner.default_workspace_id, member.id)
    services.projects().set_visibility(services.projects().get(pid), "workspace")
    api.post("/login", form={"email": "m@example.com", "password": "member-password-1"})
    assert api.get(session_path).status == 403
    assert "Add a candle care page" not in api.get(session_path).text
    services.accounts().create_user(email="s@example.com", password="strange-password-1")
    api.post("/login", form={"email": "s@example.com", "password": "strange-password-1"})
    for path in (session_path, f"/workspace/projects/{pid}/builder"):
        answer = api.get(path)
        assert answer.status == 404, path
        assert "Add a candle care page" not in answer.text


def csp(answer) -> str:
    return str(answer.header("content-security-policy"))


def test_the_builder_page_frames_the_live_site_and_only_its_policy_allows_it(shop):
    api, pid = shop["api"], shop["id"]
    before = api.get(f"/workspace/projects/{pid}/builder")
    assert "frame-src" not in csp(before)  # not live: nothing to frame
    assert "The preview shows the live shop once it is published." in text_of(before)
    assert "<iframe" not in before.text

    project = services.projects().get(pid)
    services.projects().update(
        project, {"publish_stage": "ready", "publish_status": "ready", "live_url": LIVE}
    )
    page = api.get(f"/workspace/projects/{pid}/builder")
    assert csp(page).endswith("; frame-src https://candles-shop.netlify.app")
    assert "script-src 'self'" in csp(page) and "frame-ancestors 'none'" in csp(page)
    assert re.search(rf'<iframe id="preview-frame" src="{re.escape(LIVE)}"', page.text)
    assert f'id="preview-open" href="{LIVE}"' in page.text
    # The project's other pages, and other projects' builder pages, frame nothing.
    assert "frame-src" not in csp(api.get(f"/workspace/projects/{pid}"))
    assert "frame-src" not in csp(api.get(f"/workspace/projects/{pid}/files"))

    # A live address that is not an http(s) origin is neither framed nor allowed.
    services.projects().update(services.projects().get(pid), {"live_url": "javascript:alert(1)//x"})
    odd = api.get(f"/workspace/projects/{pid}/builder")
    assert "frame-src" not in csp(odd) and "<iframe" not in odd.text


def test_the_message_poll_says_whether_its_commit_is_live(shop):
    api, pid = shop["api"], shop["id"]
    location = send(api, f"/workspace/projects/{pid}/builder", "Add a scent guide")
    message_id = latest_message(api, location.split("#")[0])
    state = follow(api, pid, message_id)
    assert "live" not in state
    polled = api.get(f"/workspace/projects/{pid}/builder/messages/{message_id}?live=1").json()
    assert polled["commit_sha"] == state["commit_sha"]
    assert polled["live"] is False  # this project has no site


def test_without_script_a_message_on_the_session_page_is_followed_by_reloading_that_page(shop):
    api, pid = shop["api"], shop["id"]
    sandbox = shop["env"]["sandbox"].url
    httpx.post(f"{sandbox}/__admin/builder/settings", json={"delay": 2.0})  # long enough to see it working
    try:
        location = send(api, f"/workspace/projects/{pid}/builder", "Add a soy wax range")
        session_path = location.split("#")[0]
        page = api.get(session_path)
        assert "The builder is working on it" in text_of(page)
        refresh = re.search(r'href="http://127.0.0.1:3000([^"]+)">Refresh</a>', page.text)
        assert refresh and refresh[1].startswith(f"{session_path}?seen=") and refresh[1].endswith("#latest")
    finally:
        httpx.post(f"{sandbox}/__admin/builder/settings", json={"delay": 0.5})
    follow(api, pid, latest_message(api, session_path))
    done = api.get(refresh[1].split("#")[0])
    assert "Refresh" not in text_of(done) and "Done" in text_of(done)
