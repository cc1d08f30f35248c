"""Repository and database integration routes against the sandbox, down to `git clone` of what was pushed."""

from __future__ import annotations

import base64
import subprocess

import pytest

from apiclient import connect_provider as connect
from apiclient import create_repo, link_repo
from svc_shared.wiring import services


@pytest.fixture
def workspace(api, provider_env, demo_user):
    assert api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"}).status == 303
    connect(api, "repo_host")
    connect(api, "db_host")
    project = services.projects().create(
        owner_id=demo_user.id,
        workspace_id=demo_user.default_workspace_id,
        prompt="Handmade candles for cosy homes, warm tone",
    )
    return {"api": api, "project": project, "user": demo_user, "env": provider_env}


def clone(env, user_id: str, full_name: str, target) -> None:
    token = services.connections().token(user_id, "repo_host").access_token
    url = f"{env['sandbox'].url.replace('http://', f'http://x-access-token:{token}@')}/github/git/{full_name}.git"
    subprocess.run(["git", "clone", "-q", url, str(target)], check=True, capture_output=True, timeout=60)


def git(target, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(target), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.mark.parametrize("name", ["a/b", "..", ".", "", "x" * 101, "with space", None, 42])
def test_create_mode_refuses_names_that_are_not_one_segment(workspace, name):
    answer = create_repo(workspace["api"], workspace["project"].id, name)
    assert answer.status == 400
    assert answer.json()["message"] == "name invalide"


@pytest.mark.parametrize("existing", ["nope", "a/b/c", "/x", "owner/", "-bad/x", 7])
def test_link_mode_refuses_malformed_owner_name(workspace, existing):
    answer = link_repo(workspace["api"], workspace["project"].id, existing)
    assert answer.status == 400
    assert answer.json()["message"] == "existingRepo invalide"


def test_create_then_manual_push_lands_as_one_commit_without_env_files(workspace, tmp_path):
    api, project = workspace["api"], workspace["project"]
    connected = create_repo(api, project.id, "candle-shop").json()
    assert connected["repo"].endswith("/candle-shop")
    assert connected["branch"] == "main"
    files = [
        {"path": "src/index.html", "content": "<h1>Candles</h1>\n"},
        {"path": ".env", "content": "SECRET=1"},
        {"path": "config/.env.local", "content": "SECRET=2"},
        {
            "path": "img/logo.png",
            "content": base64.b64encode(b"\x89PNG\x00\x01").decode(),
            "encoding": "base64",
        },
    ]
    pushed = api.post("/api/repo-host/push", json_body={"projectId": project.id, "files": files})
    assert pushed.status == 200, pushed.text
    body = pushed.json()
    assert body["files"] == 2
    assert body["dropped"] == [".env", "config/.env.local"]
    assert body["url"].endswith(f"/commit/{body['sha']}")
    stored = services.projects().get(project.id)
    assert stored.last_pushed_sha == body["sha"]
    assert stored.last_pushed_at
    clone(workspace["env"], workspace["user"].id, connected["repo"], tmp_path / "repo")
    log = git(tmp_path / "repo", "log", "--format=%H %s").splitlines()
    assert len(log) == 2  # the initial commit and the push
    assert log[0] == f"{body['sha']} chore: sync from svc builder (2 files)"
    tracked = git(tmp_path / "repo", "ls-files").split()
    assert "src/index.html" in tracked and "img/logo.png" in tracked
    assert not [p for p in tracked if p.rsplit("/", 1)[-1].startswith(".env")]
    assert (tmp_path / "repo" / "img" / "logo.png").read_bytes() == b"\x89PNG\x00\x01"


def test_creating_a_name_that_exists_reuses_the_repository(workspace):
    api, project = workspace["api"], workspace["project"]
    first = create_repo(api, project.id, "twice")
    second = create_repo(api, project.id, "twice")
    assert first.json()["repo"] == second.json()["repo"]


def test_link_mode_verifies_the_repository_exists(workspace):
    api, project = workspace["api"], workspace["project"]
    made = create_repo(api, project.id, "linked").json()
    linked = link_repo(api, project.id, made["repo"])
    assert linked.json()["repo"] == made["repo"]
    owner = made["repo"].split("/")[0]
    missing = link_repo(api, project.id, f"{owner}/does-not-exist")
    assert missing.status == 404


@pytest.mark.parametrize(
    ("body", "error", "field"),
    [
        ({"files": []}, "invalid_files", "files"),
        ({"files": "index.html"}, "invalid_files", "files"),
        (
            {"files": [{"path": "a.txt", "content": "x", "encoding": "utf-16"}]},
            "invalid_files",
            "files.0.encoding",
        ),
        ({"files": [{"path": "a.txt", "content": "x"}], "message": 7}, "invalid_message", "message"),
    ],
)
def test_a_wrong_push_field_is_400_naming_it(workspace, body, error, field):
    answer = workspace["api"].post(
        "/api/repo-host/push", json_body={"projectId": workspace["project"].id, **body}
    )
    assert answer.status == 400
    assert answer.json()["error"] == error
    assert answer.json()["message"].startswith(f"{field}: ")


def test_push_without_project_id_names_it(workspace):
    answer = workspace["api"].post(
        "/api/repo-host/push", json_body={"files": [{"path": "a", "content": "x"}]}
    )
    assert answer.status == 400
    assert answer.json() == {"error": "project_id_invalid", "message": "projectId: Field required"}


def test_push_before_a_repo_is_linked(workspace):
    answer = workspace["api"].post(
        "/api/repo-host/push",
        json_body={"projectId": workspace["project"].id, "files": [{"path": "a.txt", "content": "x"}]},
    )
    assert answer.status == 400
    assert answer.json()["message"] == "Aucun repo GitHub connecte"


def test_push_without_repo_host_connection(workspace):
    api, project = workspace["api"], workspace["project"]
    create_repo(api, project.id, "gone")
    api.post("/api/oauth/disconnect", json_body={"provider": "repo_host"})
    answer = api.post(
        "/api/repo-host/push",
        json_body={"projectId": project.id, "files": [{"path": "a.txt", "content": "x"}]},
    )
    assert answer.json()["message"] == "GitHub non connecte"


def test_push_limits_500_files_and_5_mb(workspace):
    api, project = workspace["api"], workspace["project"]
    create_repo(api, project.id, "limits")
    ok = api.post(
        "/api/repo-host/push",
        json_body={
            "projectId": project.id,
            "files": [{"path": f"f{i}.txt", "content": "x"} for i in range(500)],
        },
    )
    assert ok.status == 200, ok.text
    too_many = api.post(
        "/api/repo-host/push",
        json_body={
            "projectId": project.id,
            "files": [{"path": f"f{i}.txt", "content": "x"} for i in range(501)],
        },
    )
    assert too_many.status == 400
    five_mb = 5 * 1024 * 1024
    exact = api.post(
        "/api/repo-host/push",
        json_body={"projectId": project.id, "files": [{"path": "big.txt", "content": "x" * five_mb}]},
    )
    assert exact.status == 200
    over = api.post(
        "/api/repo-host/push",
        json_body={"projectId": project.id, "files": [{"path": "big.txt", "content": "x" * (five_mb + 1)}]},
    )
    assert over.status == 413


@pytest.mark.parametrize(
    "path",
    [
        "../etc/passwd",
        "/abs",
        "a//b",
        "a/./b",
        "",
        ".git/config",
        ".GIT/hooks/pre-commit",
        "src/.git/config",
        ".git./config",
        "a\\b",
        "a\x01b",
        "%2e%2e/etc/passwd",
        "src/%2E%2E%2F%2E%2E%2Fetc",
        "src/",
    ],
)
def test_push_refuses_unsafe_paths(workspace, path):
    api, project = workspace["api"], workspace["project"]
    create_repo(api, project.id, "paths")
    answer = api.post(
        "/api/repo-host/push", json_body={"projectId": project.id, "files": [{"path": path, "content": "x"}]}
    )
    assert answer.status == 400, answer.text
    assert answer.json()["error"] == "invalid_path"
    assert "is refused" in answer.json()["message"] or not path


def test_eleventh_push_in_five_minutes_is_refused(clock, workspace):
    api, project = workspace["api"], workspace["project"]
    clock.advance(300 - clock.now() % 300)
    create_repo(api, project.id, "often")
    for i in range(10):
        assert (
            api.post(
                "/api/repo-host/push",
                json_body={"projectId": project.id, "files": [{"path": "n.txt", "content": str(i)}]},
            ).status
            == 200
        )
    limited = api.post(
        "/api/repo-host/push",
        json_body={"projectId": project.id, "files": [{"path": "n.txt", "content": "x"}]},
    )
    assert limited.status == 429
    assert limited.header("retry-after")


def test_eleventh_connect_in_a_minute_is_refused(clock, workspace):
    api, project = workspace["api"], workspace["project"]
    clock.advance(60 - clock.now() % 60)
    for _ in range(10):
        assert create_repo(api, project.id, "same").status == 200
    assert create_repo(api, project.id, "same").status == 429


def test_repo_listing_is_limited_to_20_per_minute(clock, workspace):
    api = workspace["api"]
    clock.advance(60 - clock.now() % 60)
    for _ in range(20):
        assert api.get("/api/repo-host/repos").status == 200
    assert api.get("/api/repo-host/repos").status == 429


def test_another_users_project_is_not_found(workspace):
    services.accounts().create_user(email="other@example.com", password="other-password-1")
    other = services.accounts().get_user_by_email("other@example.com")
    theirs = services.projects().create(
        owner_id=other.id,
        workspace_id=other.default_workspace_id,
        prompt="Someone else's shop selling things",
    )
    answer = create_repo(workspace["api"], theirs.id, "x")
    assert answer.status == 404


def test_database_projects_are_listed_and_linked_with_keys(workspace):
    api, project, env = workspace["api"], workspace["project"], workspace["env"]
    token = services.connections().token(workspace["user"].id, "db_host").access_token
    from svc_shared.providers.db_host import DbHost

    db = DbHost(env["DB_HOST_API_URL"], token)
    org = db.organizations()[0].slug
    created = db.create_project(name="linked-db", db_pass="pw-1234567890", organization_slug=org)
    listed = api.get("/api/integrations/db-host/projects/list").json()["projects"]
    assert created.ref in {p["ref"] for p in listed}
    linked = api.post(
        "/api/integrations/db-host/link", json_body={"projectId": project.id, "ref": created.ref}
    )
    assert linked.status == 200, linked.text
    stored = services.projects().get(project.id)
    assert stored.db_project_ref == created.ref
    assert stored.db_public_key
    assert stored.db_privileged_key and stored.db_privileged_key.startswith("v1.")
    assert (
        api.post(
            "/api/integrations/db-host/link", json_body={"projectId": project.id, "ref": "zzzzzzzzzzzz"}
        ).status
        == 404
    )
