"""The workspace's builder panel, files, file, diff and knowledge pages through API Gateway proxy events, with
the builder and GitHub sandboxes over HTTP: what each page shows, the limits at their edges, errors in words,
and who may use them (the owner, as the tools allow)."""

from __future__ import annotations

import re
import time

import httpx
import pytest
from workbenchpages import builder_shop, csrf_of, follow, local, text_of

from apiclient import call_tool
from apiclient import tool_ok as ok
from svc_shared.wiring import services


@pytest.fixture
def shop(api, bearer, provider_env, demo_user):
    return builder_shop(api, bearer, provider_env, demo_user)


def test_a_message_sent_from_the_panel_is_followed_to_its_reply_and_commit(shop):
    api, pid = shop["api"], shop["id"]
    page = api.get(f"/workspace/projects/{pid}")
    assert 'id="builder-form"' in page.text
    assert "No edit session yet" in page.text
    sandbox = shop["env"]["sandbox"].url
    httpx.post(f"{sandbox}/__admin/builder/settings", json={"delay": 2.0})  # long enough to see it working
    try:
        sent = api.post(
            f"/workspace/projects/{pid}/builder",
            form={
                "csrf": csrf_of(page),
                "message": "Make the header green\r\nand bold",
                "edit_session_id": "",
            },
        )
    finally:
        httpx.post(f"{sandbox}/__admin/builder/settings", json={"delay": 0.5})
    assert sent.status == 303
    location = local(sent.header("location"))
    assert location.startswith(f"/workspace/projects/{pid}?message=msg_") and location.endswith("#builder")
    message_id = location.split("message=")[1].split("#")[0]

    in_progress = api.get(location.split("#")[0])
    assert "The builder is working on it" in text_of(in_progress)
    assert "Refresh to see how far the builder has got." in text_of(in_progress)
    refresh = re.search(
        r'href="http://127.0.0.1:3000(/workspace/projects/[^"]+)">Refresh</a>', in_progress.text
    )
    assert refresh and refresh[1].startswith(f"/workspace/projects/{pid}?message={message_id}&amp;seen=")

    state = follow(api, pid, message_id)
    assert state["status"] == "complete" and state["words"] == "Done"
    assert (
        state["diff_url"]
        == f"http://127.0.0.1:3000/workspace/projects/{pid}/diff?commit={state['commit_sha']}"
    )
    # The same message as the get_message tool reports it.
    tool = ok(call_tool(api, shop["bearer"], "get_message", message_id=message_id))
    assert (tool["response"], tool["commit_sha"]) == (state["response"], state["commit_sha"])

    done = text_of(api.get(location.split("#")[0]))
    assert " ".join(state["response"].split()) in done and f"Commit {state['commit_sha'][:7]}" in done
    assert "Refresh" not in done
    # The edit session is listed, and chosen for the next message so the conversation continues.
    edits = ok(call_tool(api, shop["bearer"], "list_edits", project_id=pid))["edit_sessions"]
    done_page = api.get(location.split("#")[0])
    assert f'<option value="{edits[0]["edit_session_id"]}" selected>' in done_page.text
    assert "Make the header green and bold 1 message" in text_of(done_page)

    diff = api.get(local(state["diff_url"]))
    assert diff.status == 200
    assert f"What commit {state['commit_sha'][:7]} changed" in text_of(diff)
    assert re.search(
        r'<span class="line add"><span class="sr">added: </span>\+- Make the header green', diff.text
    )


def test_edit_sessions_are_listed_newest_first(shop):
    api, pid = shop["api"], shop["id"]
    for words in ("First change to the shop", "Second change to the shop"):
        sent = api.post(
            f"/workspace/projects/{pid}/builder",
            form={"csrf": csrf_of(api.get(f"/workspace/projects/{pid}")), "message": words},
        )
        follow(api, pid, local(sent.header("location")).split("message=")[1].split("#")[0])
        time.sleep(1.1)  # the sandbox's times are to the second
    listed = text_of(api.get(f"/workspace/projects/{pid}"))
    edits = listed.split("Edit sessions")[-1]
    assert edits.index("Second change") < edits.index("First change")


@pytest.mark.parametrize(("length", "accepted"), [(20_000, True), (20_001, False)])
def test_a_message_is_at_most_20000_characters(shop, length, accepted):
    api, pid = shop["api"], shop["id"]
    answer = api.post(
        f"/workspace/projects/{pid}/builder",
        form={"csrf": csrf_of(api.get(f"/workspace/projects/{pid}")), "message": "é" * length},
    )
    if accepted:
        assert answer.status == 303
    else:
        assert answer.status == 400
        assert "A message is at most 20,000 characters; this one has 20,001." in text_of(answer)


def test_empty_messages_foreign_forms_and_builder_failures_are_refused_in_words(shop):
    api, pid = shop["api"], shop["id"]
    token = csrf_of(api.get(f"/workspace/projects/{pid}"))
    empty = api.post(f"/workspace/projects/{pid}/builder", form={"csrf": token, "message": "  \r\n "})
    assert empty.status == 400 and "Write what the builder should change or build." in text_of(empty)
    foreign = api.post(
        f"/workspace/projects/{pid}/builder", form={"csrf": "0" * 40, "message": "Hello there"}
    )
    assert foreign.status == 400 and "did not come from the workspace" in foreign.text

    sandbox = shop["env"]["sandbox"].url
    httpx.post(
        f"{sandbox}/__admin/faults", json={"method": "POST", "path": "/builder/*", "status": 503, "times": 5}
    )
    try:
        down = api.post(
            f"/workspace/projects/{pid}/builder", form={"csrf": token, "message": "Add a FAQ page"}
        )
    finally:
        httpx.delete(f"{sandbox}/__admin/faults")
    assert down.status == 502
    assert "The site builder is not answering right now. Try again in a few minutes." in text_of(down)
    assert "Add a FAQ page" in down.text  # the message is kept to send again
    unknown = api.get(f"/workspace/projects/{pid}/builder/messages/msg_not_mine")
    assert unknown.status == 404 and unknown.json()["message"].startswith("This message was not found")


def test_a_failed_builder_edit_shows_the_builders_words(shop):
    api, pid = shop["api"], shop["id"]
    project = services.projects().get(pid)
    services.projects().update(project, {"repo_host_branch": "gone"})  # the builder cannot commit there
    sent = api.post(
        f"/workspace/projects/{pid}/builder",
        form={"csrf": csrf_of(api.get(f"/workspace/projects/{pid}")), "message": "Add a FAQ page"},
    )
    message_id = local(sent.header("location")).split("message=")[1].split("#")[0]
    state = follow(api, pid, message_id)
    assert state["status"] == "error"
    page = text_of(api.get(f"/workspace/projects/{pid}?message={message_id}"))
    assert "The builder could not finish" in page
    assert f"Branch gone does not exist in {project.repo_host_repo}." in page


def test_files_at_a_ref_a_text_file_a_binary_file_and_errors_in_words(shop):
    api, pid = shop["api"], shop["id"]
    listing = api.get(f"/workspace/projects/{pid}/files")
    assert listing.status == 200
    listed = ok(call_tool(api, shop["bearer"], "list_files", project_id=pid))
    assert f"{listed['count']} files in" in text_of(listing)
    for f in listed["files"]:
        assert f">{f['path']}</a>" in listing.text
    text = api.get(f"/workspace/projects/{pid}/files/read", params={"path": "src/app.txt"})
    assert "<code>hello &lt;b&gt;\n</code>" in text.text  # plain text, escaped
    binary = api.get(f"/workspace/projects/{pid}/files/read", params={"path": "img/logo.png"})
    assert "This is a binary file (10 bytes): it is not shown as text." in text_of(binary)
    at_first = api.get(f"/workspace/projects/{pid}/files", params={"ref": shop["first"]})
    assert f"(commit {shop['first'][:7]} )" in text_of(at_first)

    missing = api.get(f"/workspace/projects/{pid}/files/read", params={"path": "src/none.txt"})
    assert missing.status == 404 and "There is no file src/none.txt at HEAD." in text_of(missing)
    bad_ref = api.get(f"/workspace/projects/{pid}/files", params={"ref": "main~1"})
    assert bad_ref.status == 400 and "ref 'main~1'" in text_of(bad_ref)
    no_ref = api.get(f"/workspace/projects/{pid}/files", params={"ref": "nope"})
    assert no_ref.status == 404 and "There is no branch, tag or commit named nope" in text_of(no_ref)
    outside = api.get(f"/workspace/projects/{pid}/files/read", params={"path": "../etc/passwd"})
    assert outside.status == 400 and "paths cannot leave or walk the repository" in text_of(outside)


def test_large_files_are_cut_at_512_kb_and_refused_over_1_mb(shop):
    api, pid = shop["api"], shop["id"]
    api.post(
        "/api/repo-host/push",
        json_body={
            "projectId": pid,
            "files": [
                {"path": "big/ok.txt", "content": "x" * (1024 * 1024)},
                {"path": "big/too.txt", "content": "x" * (1024 * 1024 + 1)},
            ],
        },
    )
    shown = api.get(f"/workspace/projects/{pid}/files/read", params={"path": "big/ok.txt"})
    assert shown.status == 200
    assert "Showing the first 524,288 bytes of 1,048,576" in text_of(shown)
    assert shown.text.count("x") >= 512 * 1024 and len(shown.text) < 600 * 1024
    refused = api.get(f"/workspace/projects/{pid}/files/read", params={"path": "big/too.txt"})
    assert refused.status == 413
    assert "big/too.txt is over 1 MB: too large to show here." in text_of(refused)


def test_the_diff_between_two_refs_marks_added_and_removed_lines(shop):
    api, pid = shop["api"], shop["id"]
    api.post(
        "/api/repo-host/push",
        json_body={"projectId": pid, "files": [{"path": "src/app.txt", "content": "goodbye\n"}]},
    )
    page = api.get(f"/workspace/projects/{pid}/diff", params={"base": shop["first"], "head": "HEAD"})
    assert page.status == 200
    assert '<span class="line del"><span class="sr">removed: </span>-hello &lt;b&gt;</span>' in page.text
    assert '<span class="line add"><span class="sr">added: </span>+goodbye</span>' in page.text
    assert re.search(r'<span class="line hunk">@@ -1 \+1 @@', page.text)
    assert "1 file changed" in text_of(page) and "+1 \u22121" in text_of(page)
    same = api.get(f"/workspace/projects/{pid}/diff", params={"base": "HEAD", "head": "HEAD"})
    assert "No differences" in text_of(same)
    bad = api.get(f"/workspace/projects/{pid}/diff", params={"base": "a..b"})
    assert bad.status == 400 and "base 'a..b'" in text_of(bad)
    first_commit = ok(call_tool(api, shop["bearer"], "list_files", project_id=pid, ref=shop["first"]))
    assert first_commit
    form = api.get(f"/workspace/projects/{pid}/diff")
    assert form.status == 200 and 'id="diff-form"' in form.text


@pytest.mark.parametrize(("size", "accepted"), [(10 * 1024, True), (10 * 1024 + 1, False)])
def test_workspace_knowledge_is_at_most_10_kb(shop, size, accepted):
    api = shop["api"]
    page = api.get("/workspace/knowledge")
    assert "A project's own knowledge takes precedence over these" in text_of(page)
    text = "é" * (size // 2) + "a" * (size % 2)  # two bytes a character: bytes, not characters, count
    answer = api.post("/workspace/knowledge", form={"csrf": csrf_of(page), "text": text})
    stored = ok(call_tool(api, shop["bearer"], "get_workspace_knowledge"))["text"]
    if accepted:
        assert answer.status == 303 and stored == text
        assert "10,240 of 10,240 bytes" in text_of(api.get(local(answer.header("location"))))
    else:
        assert answer.status == 400
        assert "knowledge text must be at most 10240 bytes (10 KB)" in text_of(answer)
        assert "10,241 of 10,240 bytes: 1 over the limit" in text_of(answer)
        assert stored == ""


def test_project_knowledge_saves_as_typed_and_empty_clears(shop):
    api, pid = shop["api"], shop["id"]
    page = api.get(f"/workspace/projects/{pid}/knowledge")
    assert "They take precedence over your workspace knowledge" in text_of(page)
    saved = api.post(
        f"/workspace/projects/{pid}/knowledge",
        form={"csrf": csrf_of(page), "text": "\nUse warm colours.\r\nNo emoji."},
    )
    assert saved.status == 303
    assert ok(call_tool(api, shop["bearer"], "get_project_knowledge", project_id=pid))["text"] == (
        "\nUse warm colours.\nNo emoji."
    )
    shown = api.get(local(saved.header("location")))
    assert "Knowledge saved." in shown.text
    assert ">\n\nUse warm colours.\nNo emoji.</textarea>" in shown.text  # the leading line break survives
    cleared = api.post(f"/workspace/projects/{pid}/knowledge", form={"csrf": csrf_of(page), "text": ""})
    assert "Knowledge cleared." in api.get(local(cleared.header("location"))).text
    assert ok(call_tool(api, shop["bearer"], "get_project_knowledge", project_id=pid))["text"] == ""


def test_members_see_the_project_but_only_the_owner_uses_builder_files_and_knowledge(shop):
    api, pid, owner = shop["api"], shop["id"], shop["user"]
    member = services.accounts().create_user(email="m@example.com", password="member-password-1")
    services.accounts().add_collaborator(owner.default_workspace_id, member.id)
    services.projects().set_visibility(services.projects().get(pid), "workspace")
    api.post("/login", form={"email": "m@example.com", "password": "member-password-1"})
    page = api.get(f"/workspace/projects/{pid}")
    assert page.status == 200 and 'id="builder-form"' not in page.text
    assert "Only the project's owner can message its builder" in text_of(page)
    for path in ("/files", "/files/read?path=src/app.txt", "/diff", "/knowledge"):
        refused = api.get(f"/workspace/projects/{pid}{path}")
        assert refused.status == 403, path
        assert "Only the project's owner can use its builder" in text_of(refused)
    token = csrf_of(api.get("/workspace/knowledge"))
    posted = api.post(f"/workspace/projects/{pid}/builder", form={"csrf": token, "message": "Hello builder"})
    assert posted.status == 403
    stranger = services.accounts().create_user(email="s@example.com", password="strange-password-1")
    assert stranger
    api.post("/login", form={"email": "s@example.com", "password": "strange-password-1"})
    assert api.get(f"/workspace/projects/{pid}/files").status == 404


def test_a_project_without_a_repository_says_what_the_builder_needs(api, demo_user):
    project = services.projects().create(
        owner_id=demo_user.id,
        workspace_id=demo_user.default_workspace_id,
        prompt="Vintage bicycles, calm tone",
    )
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    page = api.get(f"/workspace/projects/{project.id}")
    assert (
        "The builder edits the shop's repository: publish the shop, or link a repository below, first."
        in text_of(page)
    )
    files = api.get(f"/workspace/projects/{project.id}/files")
    assert files.status == 409  # the project's state, not the request, is what stands in the way
    assert "This project has no repository yet" in text_of(files)
    assert "Branch, tag or commit" not in text_of(files)  # nothing to pick a version of
    assert "Compare two versions" not in text_of(files) and f"Back to {project.name}" in text_of(files)


def test_with_github_disconnected_the_repository_pages_point_to_the_connections_page(shop):
    from svc_shared.wiring import services

    api, pid = shop["api"], shop["id"]
    assert 'id="reconnect"' not in api.get(f"/workspace/projects/{pid}/files").text
    services.connections().disconnect(shop["user"].id, "repo_host")
    for path, params in (
        ("files", {}),
        ("files/read", {"path": "src/app.txt"}),
        ("diff", {"commit": shop["first"]}),
    ):
        page = api.get(f"/workspace/projects/{pid}/{path}", params=params)
        assert page.status >= 400, path
        assert "Your GitHub connection is missing or no longer works" in text_of(page), path
        assert "non connecte" not in text_of(page), path  # the API's French text is not the page's
        assert '/workspace/connections">Connect GitHub on the Connections page</a>' in page.text, path
