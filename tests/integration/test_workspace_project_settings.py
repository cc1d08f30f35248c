"""A project's rename and delete on its Settings, the repository and database forms there, and the state route
the project page polls, through API Gateway proxy events with the GitHub sandbox over HTTP: limits and
refusals in words, the typed confirmation, CSRF, and who may do what (the owner; a member who sees the project
is refused in words; anyone else finds nothing)."""

from __future__ import annotations

import httpx
import pytest
from test_workspace_builder_pages import csrf_of, local, text_of

from apiclient import project_with_repository
from svc_shared.wiring import services


@pytest.fixture
def shop(api, bearer, provider_env, demo_user):
    """The demo user signed in with GitHub and Supabase connected and a project with a repository."""
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    project_id = project_with_repository(api, bearer)["project_id"]
    return {"api": api, "id": project_id, "user": demo_user, "sandbox": provider_env["sandbox"].url}


def settings_of(api, project_id: str):
    page = api.get(f"/workspace/projects/{project_id}/settings")
    assert page.status == 200, page.text
    return page


def test_a_project_is_renamed_within_its_limits(shop):
    api, pid = shop["api"], shop["id"]
    page = settings_of(api, pid)
    token = csrf_of(page)
    for name, words in (
        ("   ", "Give the project a name."),
        ("x" * 101, "A project's name is at most 100 characters; this one has 101."),
        ("Two\nlines", "A project's name is one line of text: no line breaks or tabs."),
    ):
        refused = api.post(f"/workspace/projects/{pid}/rename", form={"csrf": token, "name": name})
        assert refused.status == 400
        assert words in text_of(refused)
    assert services.projects().get(pid).name != "x" * 101
    renamed = api.post(f"/workspace/projects/{pid}/rename", form={"csrf": token, "name": "  Candle Corner  "})
    assert renamed.status == 303
    shown = api.get(local(renamed.header("location")))
    assert "Project renamed." in text_of(shown)
    assert "<title>Settings · Candle Corner · svc workspace</title>" in shown.text
    assert services.projects().get(pid).name == "Candle Corner"
    assert "<h1>Candle Corner</h1>" in api.get(f"/workspace/projects/{pid}").text
    longest = api.post(f"/workspace/projects/{pid}/rename", form={"csrf": token, "name": "y" * 100})
    assert longest.status == 303
    assert services.projects().get(pid).slug.startswith("handmade-candles")  # the slug keeps its name


def test_delete_needs_the_name_typed_and_says_what_stays_at_the_providers(shop):
    api, pid, user = shop["api"], shop["id"], shop["user"]
    project = services.projects().get(pid)
    page = settings_of(api, pid)
    words = text_of(page)
    assert f"The repository {project.repo_host_repo} stays in your GitHub account" in words
    assert "any database in your Supabase account, and any site in your Netlify account" in words
    count = services.accounts().get_workspace(user, user.default_workspace_id).project_count
    token = csrf_of(page)
    wrong = api.post(f"/workspace/projects/{pid}/delete", form={"csrf": token, "confirm_name": "handmade"})
    assert wrong.status == 400
    assert f"Type {project.name} exactly to delete it." in text_of(wrong)
    assert "nothing was deleted" in text_of(wrong)
    assert services.projects().get(pid).id == pid
    forged = api.post(f"/workspace/projects/{pid}/delete", form={"confirm_name": project.name})
    assert forged.status == 400 and services.projects().get(pid).id == pid  # no CSRF token, nothing done

    deleted = api.post(
        f"/workspace/projects/{pid}/delete", form={"csrf": token, "confirm_name": project.name}
    )
    assert deleted.status == 303 and local(deleted.header("location")) == "/?done=deleted"
    home = api.get("/?done=deleted")
    assert "The project was deleted. Its repository, database and site stay in your own GitHub" in text_of(
        home
    )
    assert project.name not in text_of(home)
    gone = api.get(f"/workspace/projects/{pid}")
    assert gone.status == 404
    assert services.accounts().get_workspace(user, user.default_workspace_id).project_count == count - 1
    # What publishing made stays at the provider: the repository is still in the merchant's GitHub account.
    github = services.connections().token(user.id, "repo_host").access_token
    repo = httpx.get(
        f"{shop['sandbox']}/github/api/repos/{project.repo_host_repo}",
        headers={"Authorization": f"Bearer {github}"},
    )
    assert repo.status_code == 200, repo.text
    again = api.post(f"/workspace/projects/{pid}/delete", form={"csrf": token, "confirm_name": project.name})
    assert again.status == 404


def test_delete_waits_for_a_publish_run(shop):
    api, pid = shop["api"], shop["id"]
    projects = services.projects()
    projects.update(projects.get(pid), {"publish_status": "running"})
    token = csrf_of(settings_of(api, pid))
    name = projects.get(pid).name
    refused = api.post(f"/workspace/projects/{pid}/delete", form={"csrf": token, "confirm_name": name})
    assert refused.status == 409
    assert "This project is being published right now." in text_of(refused)
    assert projects.get(pid).id == pid


def test_only_the_owner_renames_or_deletes_and_a_stranger_finds_nothing(shop):
    api, pid, owner = shop["api"], shop["id"], shop["user"]
    member = services.accounts().create_user(email="m@example.com", password="member-password-1")
    services.accounts().add_collaborator(owner.default_workspace_id, member.id)
    services.projects().set_visibility(services.projects().get(pid), "workspace")
    name = services.projects().get(pid).name
    api.post("/login", form={"email": "m@example.com", "password": "member-password-1"})
    assert api.get(f"/workspace/projects/{pid}").status == 200
    refused = api.get(f"/workspace/projects/{pid}/settings")
    assert refused.status == 403
    assert "Only the project's owner can change its settings, rename it or delete it." in text_of(refused)
    token = csrf_of(api.get("/workspace/knowledge"))
    for path, form in (("/rename", {"name": "Taken over"}), ("/delete", {"confirm_name": name})):
        answer = api.post(f"/workspace/projects/{pid}{path}", form={"csrf": token, **form})
        assert answer.status == 403, path
        assert "Only the project's owner can change its settings" in text_of(answer)
    assert services.projects().get(pid).name == name
    state = api.get(f"/workspace/projects/{pid}/state")
    assert state.status == 200 and set(state.json()["versions"]) == {"facts", "deploys", "builder", "setup"}

    services.accounts().create_user(email="s@example.com", password="strange-password-1")
    api.post("/login", form={"email": "s@example.com", "password": "strange-password-1"})
    token = csrf_of(api.get("/workspace/knowledge"))
    assert api.get(f"/workspace/projects/{pid}/settings").status == 404
    assert (
        api.post(f"/workspace/projects/{pid}/delete", form={"csrf": token, "confirm_name": name}).status
        == 404
    )
    unknown = api.get(f"/workspace/projects/{pid}/state")
    assert unknown.status == 404 and unknown.json() == {"message": "project not found"}
    assert services.projects().get(pid).name == name


def test_the_state_route_changes_the_version_of_the_part_that_changed(shop):
    api, pid = shop["api"], shop["id"]
    first = api.get(f"/workspace/projects/{pid}/state")
    assert first.status == 200 and first.header("cache-control") == "no-store"
    body = first.json()
    assert body["publish"]["status"] == "not_started" and body["poll_after_ms"] == 15000
    page = api.get(f"/workspace/projects/{pid}")
    for part, version in body["versions"].items():
        assert f'data-part="{part}" data-version="{version}"' in page.text  # the page and the route agree
    pushed = api.post(
        "/api/repo-host/push",
        json_body={"projectId": pid, "files": [{"path": "README.md", "content": "Candles\n"}]},
    ).json()
    second = api.get(f"/workspace/projects/{pid}/state").json()
    assert second["versions"]["facts"] != body["versions"]["facts"]  # the last pushed commit
    assert second["versions"]["builder"] == body["versions"]["builder"]
    assert pushed["sha"][:7] in api.get(f"/workspace/projects/{pid}").text


def test_the_repository_forms_live_on_settings_and_answer_there(shop):
    api, pid = shop["api"], shop["id"]
    overview = api.get(f"/workspace/projects/{pid}")
    assert 'id="repo-form"' in overview.text  # not published yet: the forms are on the overview too
    page = settings_of(api, pid)
    assert 'name="from" value="settings"' in page.text
    refused = api.post(
        f"/workspace/projects/{pid}/repo",
        form={"csrf": csrf_of(page), "from": "settings", "mode": "link", "existingRepo": "not a repo"},
    )
    assert refused.status == 400
    assert "<title>Settings" in refused.text and 'id="repo-existing-error"' in refused.text
    projects = services.projects()
    projects.update(projects.get(pid), {"publish_status": "ready", "publish_stage": "ready"})
    published = api.get(f"/workspace/projects/{pid}")
    assert 'id="repo-form"' not in published.text and 'id="repo-form"' in settings_of(api, pid).text
