"""AI builder sandbox (docs/builder-api.md) through the platform's adapter: a message completes with a real
commit in the GitHub sandbox repository, idempotent sends, edit sessions newest first and each read back with its
messages, the service key."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from svc_local.providers import SandboxCredentials, base_urls, build_providers
from svc_local.sandbox import Sandbox
from svc_shared.providers.builder import Builder, BuilderMessage
from svc_shared.providers.http import ProviderAuthError, ProviderConflict, ProviderNotFound
from svc_shared.providers.repo_host import RepoHost


@pytest.fixture(scope="module")
def sandbox(creds: SandboxCredentials) -> Iterator[Sandbox]:
    with Sandbox("127.0.0.1", 0, build_providers(None, creds, builder_delay=0.2), quiet=True) as running:
        yield running


@pytest.fixture(scope="module")
def builder(sandbox: Sandbox, creds: SandboxCredentials) -> Builder:
    return Builder(base_urls(sandbox.url)["BUILDER_API_URL"], creds.builder_api_key)


@pytest.fixture(scope="module")
def repo(sandbox: Sandbox) -> tuple[RepoHost, str, str]:
    token = httpx.post(f"{sandbox.url}/__admin/github/tokens", json={}).json()["access_token"]
    github = RepoHost(base_urls(sandbox.url)["REPO_HOST_API_URL"], token)
    return github, github.create_repo("built-shop").full_name, token


def send(
    builder: Builder, repo, content: str, key: str, session: str | None = None, token: str | None = None
):
    _github, full_name, repo_token = repo
    return builder.send(
        project_id="prj_1",
        repo=full_name,
        branch="main",
        repo_token=token or repo_token,
        content=content,
        edit_session_id=session,
        knowledge="Project: a shop. Workspace: be brief.",
        idempotency_key=key,
    )


def wait(builder: Builder, message_id: str) -> BuilderMessage:
    deadline = time.monotonic() + 10
    while True:
        message = builder.message(message_id)
        if message.status != "in_progress" or time.monotonic() > deadline:
            return message
        time.sleep(0.05)


def test_message_completes_with_a_visible_commit(builder: Builder, repo):
    github, full_name, _token = repo
    owner, name = full_name.split("/")
    sent = send(builder, repo, "Make the header green", "k-1")
    assert sent.message_id and sent.edit_session_id
    assert wait(builder, sent.message_id).edit_session_id == sent.edit_session_id
    assert send(builder, repo, "Make the header green", "k-1") == sent  # replayed, nothing new started
    with pytest.raises(ProviderConflict):
        send(builder, repo, "Something else", "k-1")
    done = wait(builder, sent.message_id)
    assert done.status == "complete"
    assert done.response
    assert github.commit(owner, name, "main").sha == done.commit_sha
    notes = github.file(owner, name, "BUILDER_NOTES.md", "main")[0].decode()
    assert "Make the header green" in notes

    follow_up = send(builder, repo, "Now the footer", "k-2", session=sent.edit_session_id)
    assert follow_up.edit_session_id == sent.edit_session_id
    assert wait(builder, follow_up.message_id).status == "complete"
    other = send(builder, repo, "A second session", "k-3")
    sessions = builder.edit_sessions("prj_1")
    assert [s["edit_session_id"] for s in sessions] == [other.edit_session_id, sent.edit_session_id]
    assert sessions[1]["message_count"] == 2

    # One session read back: its messages in the order they were sent, with what the merchant wrote.
    read = builder.edit_session("prj_1", sent.edit_session_id)
    assert read["title"] == "Make the header green" and read["message_count"] == 2
    assert [m["content"] for m in read["messages"]] == ["Make the header green", "Now the footer"]
    assert [m["message_id"] for m in read["messages"]] == [sent.message_id, follow_up.message_id]
    assert read["messages"][0]["commit_sha"] == done.commit_sha
    assert all(m["status"] == "complete" and m["response"] for m in read["messages"])
    with pytest.raises(ProviderNotFound):  # a session is read under its own project only
        builder.edit_session("prj_2", sent.edit_session_id)


def test_a_refused_repository_token_ends_in_error(builder: Builder, repo):
    sent = send(builder, repo, "Change things", "k-bad", token="gho_wrong")
    done = wait(builder, sent.message_id)
    assert done.status == "error"
    assert "token" in (done.error or "")


def test_bad_service_key_is_401_and_unknown_ids_404(sandbox: Sandbox, builder: Builder, repo):
    with pytest.raises(ProviderAuthError):
        Builder(base_urls(sandbox.url)["BUILDER_API_URL"], "wrong").edit_sessions("prj_1")
    with pytest.raises(ProviderNotFound):
        builder.message("msg_unknown")
