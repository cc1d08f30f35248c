"""repo_host sandbox (GitHub shape) driven through the platform's adapter over real HTTP: the OAuth app flow,
repositories, the Git Data API with GitHub's status codes, and `git clone` of what was committed."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from svc_local.providers import SandboxCredentials, base_urls, build_providers
from svc_local.sandbox import Sandbox
from svc_shared.providers.http import ProviderAuthError, ProviderConflict, ProviderError, ProviderNotFound
from svc_shared.providers.repo_host import RepoHost, RepoHostOAuth

REDIRECT = "http://127.0.0.1:9/callback/github"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory, creds: SandboxCredentials) -> Iterator[Sandbox]:
    state = tmp_path_factory.mktemp("sandbox-github")
    with Sandbox("127.0.0.1", 0, build_providers(state, creds), quiet=True) as running:
        yield running


def connect(urls: dict[str, str], creds: SandboxCredentials, state: str = "st-1") -> str:
    """The whole web flow as the platform runs it: authorize (redirect), then exchange the code."""
    oauth = RepoHostOAuth(urls["REPO_HOST_OAUTH_URL"])
    url = oauth.authorize_url(client_id=creds.repo_host_client_id, redirect_uri=REDIRECT, state=state)
    answer = httpx.get(url)
    assert answer.status_code == 302
    params = httpx.URL(answer.headers["location"]).params
    assert params["state"] == state
    token = oauth.exchange(
        client_id=creds.repo_host_client_id,
        client_secret=creds.repo_host_client_secret,
        code=params["code"],
        redirect_uri=REDIRECT,
    )
    assert token["token_type"] == "bearer"
    assert "expires_in" not in token
    return str(token["access_token"])


@pytest.fixture(scope="module")
def github(urls: dict[str, str], creds: SandboxCredentials) -> RepoHost:
    return RepoHost(urls["REPO_HOST_API_URL"], connect(urls, creds))


def test_oauth_flow_gives_a_token_for_the_signed_in_account(github: RepoHost):
    user = github.user()
    assert user.login == "sandbox-user"
    emails = github.emails()
    assert emails[0]["primary"] and emails[0]["verified"]


def test_codes_are_single_use_and_errors_come_in_a_200_body(urls: dict[str, str], creds: SandboxCredentials):
    oauth = RepoHostOAuth(urls["REPO_HOST_OAUTH_URL"])
    url = oauth.authorize_url(client_id=creds.repo_host_client_id, redirect_uri=REDIRECT, state="s")
    code = httpx.URL(httpx.get(url).headers["location"]).params["code"]
    exchange = {"client_id": creds.repo_host_client_id, "code": code, "redirect_uri": REDIRECT}
    with pytest.raises(ProviderError) as wrong_secret:
        oauth.exchange(client_secret="nope", **exchange)
    assert wrong_secret.value.body["error"] == "incorrect_client_credentials"
    with pytest.raises(ProviderError) as wrong_redirect:
        oauth.exchange(
            client_secret=creds.repo_host_client_secret, **{**exchange, "redirect_uri": REDIRECT + "x"}
        )
    assert wrong_redirect.value.body["error"] == "redirect_uri_mismatch"
    oauth.exchange(client_secret=creds.repo_host_client_secret, **exchange)
    with pytest.raises(ProviderError) as reused:
        oauth.exchange(client_secret=creds.repo_host_client_secret, **exchange)
    assert reused.value.body["error"] == "bad_verification_code"
    raw = httpx.post(
        urls["REPO_HOST_OAUTH_URL"] + "/login/oauth/access_token",
        data={**exchange, "client_secret": creds.repo_host_client_secret},
        headers={"Accept": "application/json"},
    )
    assert raw.status_code == 200


def test_denied_authorization_redirects_with_access_denied(sandbox: Sandbox, urls: dict[str, str], creds):
    decided = httpx.post(f"{sandbox.url}/__admin/oauth/next", json={"provider": "github", "decision": "deny"})
    assert decided.status_code == 201
    oauth = RepoHostOAuth(urls["REPO_HOST_OAUTH_URL"])
    answer = httpx.get(
        oauth.authorize_url(client_id=creds.repo_host_client_id, redirect_uri=REDIRECT, state="z")
    )
    params = httpx.URL(answer.headers["location"]).params
    assert (params["error"], params["state"]) == ("access_denied", "z")
    assert "code" not in params
    # Only the next authorization was denied.
    again = httpx.get(
        oauth.authorize_url(client_id=creds.repo_host_client_id, redirect_uri=REDIRECT, state="y")
    )
    assert "code" in httpx.URL(again.headers["location"]).params


def test_bad_token_is_401_bad_credentials(urls: dict[str, str]):
    with pytest.raises(ProviderAuthError) as refused:
        RepoHost(urls["REPO_HOST_API_URL"], "gho_wrong").user()
    assert refused.value.status == 401
    assert refused.value.body["message"] == "Bad credentials"


def test_taken_name_is_422_with_githubs_body_and_reused(github: RepoHost):
    first = github.create_repo("taken-name", description="d")
    with pytest.raises(ProviderConflict) as taken:
        github.create_repo("taken-name")
    assert taken.value.status == 422
    assert taken.value.body["message"] == "Repository creation failed."
    assert taken.value.body["errors"] == [
        {
            "resource": "Repository",
            "code": "custom",
            "field": "name",
            "message": "name already exists on this account",
        }
    ]
    reused = github.create_or_reuse_repo("taken-name", owner=first.owner)
    assert reused.full_name == first.full_name
    assert reused.default_branch == "main"


def test_unknown_repository_is_404_not_found(github: RepoHost):
    with pytest.raises(ProviderNotFound) as missing:
        github.get_repo("sandbox-user", "does-not-exist")
    assert missing.value.body["message"] == "Not Found"


def test_git_data_on_an_empty_repository_is_409(github: RepoHost):
    repo = github.create_repo("empty-one", auto_init=False)
    with pytest.raises(ProviderConflict) as empty:
        github.commit_files(repo.owner, repo.name, "main", {"a.txt": b"a"}, "m")
    assert empty.value.status == 409
    assert empty.value.body["message"] == "Git Repository is empty."
    with pytest.raises(ProviderConflict):
        github.request("POST", f"/repos/{repo.full_name}/git/blobs", json={"content": "x"})


def test_592_files_are_one_commit_in_4_requests_and_clone_shows_them(
    sandbox: Sandbox, github: RepoHost, tmp_path: Path
):
    repo = github.create_repo("template-push", description="A shop")
    files = {f"src/part{i % 9}/file{i}.txt": f"line {i}\n".encode() for i in range(592)}
    httpx.delete(f"{sandbox.url}/__admin/requests")
    sha = github.commit_files(repo.owner, repo.name, "main", files, "Add the template")
    counts = httpx.get(f"{sandbox.url}/__admin/requests", params={"prefix": "/github/api"}).json()
    assert counts["total"] == 4, counts
    assert counts["counts"] == {
        "GET /github/api/repos/{owner}/{repo}/commits/{ref+}": 1,
        "POST /github/api/repos/{owner}/{repo}/git/trees": 1,
        "POST /github/api/repos/{owner}/{repo}/git/commits": 1,
        "PATCH /github/api/repos/{owner}/{repo}/git/refs/{ref+}": 1,
    }
    head = github.commit(repo.owner, repo.name, "main")
    assert head.sha == sha and head.message == "Add the template" and len(head.parents) == 1
    tree = github.tree(repo.owner, repo.name, head.tree_sha)
    blobs = {e.path for e in tree.entries if e.type == "blob"}
    assert blobs == {*files, "README.md"}
    assert tree.truncated is False
    assert github.file(repo.owner, repo.name, "src/part3/file3.txt", "main") == (b"line 3\n", 7)

    token = github._token
    target = tmp_path / "clone"
    url = f"http://x-access-token:{token}@127.0.0.1:{sandbox.port}/github/git/{repo.full_name}.git"
    subprocess.run(["git", "clone", "--quiet", url, str(target)], check=True, capture_output=True, timeout=60)
    log = subprocess.run(
        ["git", "-C", str(target), "log", "--format=%H %s"], check=True, capture_output=True, text=True
    ).stdout.splitlines()
    assert log[0] == f"{sha} Add the template"
    assert log[1].endswith(" Initial commit")
    assert (target / "src/part3/file3.txt").read_text() == "line 3\n"
    assert len(list((target / "src").rglob("*.txt"))) == 592


def test_clone_needs_the_token(sandbox: Sandbox, github: RepoHost, tmp_path: Path):
    repo = github.create_repo("private-clone")
    url = f"http://x-access-token:wrong@127.0.0.1:{sandbox.port}/github/git/{repo.full_name}.git"
    failed = subprocess.run(
        ["git", "clone", "--quiet", url, str(tmp_path / "c")],
        capture_output=True,
        timeout=60,
        env={"GIT_TERMINAL_PROMPT": "0", "PATH": "/usr/bin:/bin"},
    )
    assert failed.returncode != 0


def test_non_fast_forward_ref_update_is_422_and_deletes_and_compare(github: RepoHost):
    repo = github.create_repo("history")
    owner, name = repo.owner, repo.name
    base = f"/repos/{owner}/{name}/git"
    first = github.commit_files(owner, name, "main", {"a.txt": b"one\n", "b.txt": b"bee\n"}, "first")
    second = github.commit_files(owner, name, "main", {"a.txt": b"one\ntwo\n"}, "second")
    # A sibling of `second` (parent `first`) is not a fast forward.
    tree = github.request("GET", f"{base}/commits/{first}")["tree"]["sha"]
    sibling = github.request(
        "POST", f"{base}/commits", json={"message": "x", "tree": tree, "parents": [first]}
    )
    with pytest.raises(ProviderConflict) as rejected:
        github.request("PATCH", f"{base}/refs/heads/main", json={"sha": sibling["sha"], "force": False})
    assert rejected.value.body["message"] == "Update is not a fast forward"
    ref = github.request("GET", f"{base}/ref/heads/main")
    assert ref["object"]["sha"] == second
    # sha: null deletes a path; without it the other files stay.
    head_tree = github.commit(owner, name, "main").tree_sha
    deleted = github.request(
        "POST",
        f"{base}/trees",
        json={
            "base_tree": head_tree,
            "tree": [{"path": "b.txt", "mode": "100644", "type": "blob", "sha": None}],
        },
    )
    third = github.request(
        "POST", f"{base}/commits", json={"message": "drop b", "tree": deleted["sha"], "parents": [second]}
    )
    github.request("PATCH", f"{base}/refs/heads/main", json={"sha": third["sha"]})
    compare = github.compare(owner, name, first, "main")
    files = {f.filename: f for f in compare.files}
    assert files["a.txt"].status == "modified"
    assert (files["a.txt"].additions, files["a.txt"].deletions, files["a.txt"].changes) == (1, 0, 1)
    assert "+two" in (files["a.txt"].patch or "")
    assert files["b.txt"].status == "removed"
    assert compare.ahead_by == 2
    with pytest.raises(ProviderNotFound):
        github.request("GET", f"{base}/ref/heads/nope")
    with pytest.raises(ProviderNotFound):
        github.file(owner, name, "b.txt", "main")


def test_contents_over_1_mb_are_not_inlined(github: RepoHost):
    repo = github.create_repo("big-file")
    github.commit_files(repo.owner, repo.name, "main", {"big.txt": b"x" * (1024 * 1024 + 1)}, "big")
    body = github.request("GET", f"/repos/{repo.full_name}/contents/big.txt", params={"ref": "main"})
    assert (body["encoding"], body["content"], body["size"]) == ("none", "", 1024 * 1024 + 1)
    assert github.file(repo.owner, repo.name, "big.txt", "main") == (b"", 1024 * 1024 + 1)


def test_state_survives_a_restart(tmp_path: Path, creds: SandboxCredentials):
    with Sandbox("127.0.0.1", 0, build_providers(tmp_path, creds), quiet=True) as first:
        token = httpx.post(f"{first.url}/__admin/github/tokens", json={}).json()["access_token"]
        github = RepoHost(base_urls(first.url)["REPO_HOST_API_URL"], token)
        repo = github.create_repo("kept")
        sha = github.commit_files(repo.owner, repo.name, "main", {"k.txt": b"k"}, "keep")
    with Sandbox("127.0.0.1", 0, build_providers(tmp_path, creds), quiet=True) as second:
        github = RepoHost(base_urls(second.url)["REPO_HOST_API_URL"], token)
        assert github.commit(repo.owner, repo.name, "main").sha == sha
