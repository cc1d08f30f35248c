"""The workspace knows what is live: a push through the workspace or straight to the repository deploys on
its own; get_project_status names the deployed commit and the last pushed one; a failed build leaves the
previous deploy live and is shown in words with its log, on the project page and in the tool's answer."""

from __future__ import annotations

import time

import httpx
import pytest

from apiclient import call_tool, create_repo, push_files
from apiclient import connect_provider as connect
from apiclient import tool_ok as ok
from svc_shared.providers.repo_host import RepoHost
from svc_shared.providers.static_host import StaticHost
from svc_shared.wiring import services

TOML = '[build]\ncommand = "mkdir -p out && cp page.html out/index.html"\npublish = "out"\n'


@pytest.fixture
def shop(api, bearer, provider_env, demo_user):
    """A project with a repository and a site linked to its branch (what publishing's last stage leaves)."""
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    for provider in ("repo_host", "db_host", "static_host"):
        connect(api, provider)
    project_id = ok(call_tool(api, bearer, "create_project", prompt="Loose-leaf teas, calm tone"))[
        "project_id"
    ]
    assert create_repo(api, project_id, f"teas-{project_id[:8]}").status == 200
    project = services.projects().get(project_id)
    token = services.connections().token(demo_user.id, "static_host").access_token
    site = StaticHost(provider_env["STATIC_HOST_API_URL"], token).create_site(
        name=f"teas-{project_id[:8]}", repo_path=project.repo_host_repo, branch=project.repo_host_branch
    )
    services.projects().update(project, {"static_site_id": site.id, "live_url": site.ssl_url})
    return {"api": api, "bearer": bearer, "project_id": project_id, "env": provider_env, "user": demo_user}


def settled_status(shop, sha: str, seconds: float = 60) -> dict:
    """get_project_status once the newest deploy is of `sha` and done."""
    deadline = time.monotonic() + seconds
    while True:
        status = ok(
            call_tool(shop["api"], shop["bearer"], "get_project_status", project_id=shop["project_id"])
        )
        project = services.projects().get(shop["project_id"], consistent=True)
        newest = project.last_deploy_id and status["build_status"] in ("ready", "error")
        if newest and status["last_pushed_sha"] == sha and _newest_commit(shop) == sha:
            return status
        assert time.monotonic() < deadline, status
        time.sleep(0.2)


def _newest_commit(shop) -> str | None:
    token = services.connections().token(shop["user"].id, "static_host").access_token
    project = services.projects().get(shop["project_id"], consistent=True)
    deploys = StaticHost(shop["env"]["STATIC_HOST_API_URL"], token).deploys(
        project.static_site_id or "", limit=1
    )
    return deploys[0].commit_ref if deploys and deploys[0].state in ("ready", "error") else None


def test_pushes_deploy_on_their_own_and_a_failed_build_is_shown_with_its_log(shop):
    api = shop["api"]
    good = push_files(
        api, shop["project_id"], {"netlify.toml": TOML, "page.html": "<h1>Teas v1</h1>"}
    ).json()["sha"]
    status = settled_status(shop, good)
    assert (status["build_status"], status["deployed_sha"], status["build_error"]) == ("ready", good, None)

    # A builder message: its commit deploys on its own too, without Publish or deploy_project.
    built = ok(
        call_tool(
            api, shop["bearer"], "send_message", project_id=shop["project_id"], message="Warmer colours"
        )
    )
    assert built["status"] == "complete" and built["commit_sha"]
    status = settled_status(shop, built["commit_sha"])
    assert (status["build_status"], status["deployed_sha"]) == ("ready", built["commit_sha"])
    good = built["commit_sha"]

    # A push that does not go through the workspace (a builder's commit, a developer's push): seen too.
    project = services.projects().get(shop["project_id"])
    owner, name = project.repo_host_repo.split("/")
    github = RepoHost(
        shop["env"]["REPO_HOST_API_URL"],
        services.connections().token(shop["user"].id, "repo_host").access_token,
    )
    broken = github.commit_files(
        owner,
        name,
        "main",
        {"netlify.toml": b'[build]\ncommand = "echo no such tool >&2; exit 7"\n'},
        "Break the build",
    )
    status = settled_status(shop, broken)
    assert status["build_status"] == "error"
    assert status["build_error"] == "Build script returned non-zero exit code: 7"
    assert status["deployed_sha"] == good  # the previous deploy stays live
    assert status["last_pushed_sha"] == broken

    page = api.get(f"/workspace/projects/{shop['project_id']}")
    assert page.status == 200
    html = page.text
    assert f"Live now: commit <code>{good[:7]}</code>" in html
    assert (
        f"The newest build, of commit <code>{broken[:7]}</code>, failed: Build script returned non-zero exit code: 7."
        in html
    )
    assert f"The site still shows commit <code>{good[:7]}</code>." in html
    assert "no such tool" in html  # the build log
    rows = html.split('<table id="deploy-list">', 1)[1].split("</table>", 1)[0]
    assert rows.index(broken[:7]) < rows.index(good[:7])  # newest first
    assert (
        rows.count('data-live="true"') == 1
        and f"<code>{good[:7]}</code>" in rows.split('data-live="true"', 1)[1]
    )
    assert f'<dd id="commit"><code>{broken[:7]}</code>' in html  # the last pushed commit is the branch's head


def test_the_builder_frames_the_site_only_once_a_first_deploy_is_live(shop):
    api, pid = shop["api"], shop["project_id"]
    project = services.projects().get(pid)
    services.projects().update(project, {"publish_stage": "ready", "publish_status": "ready"})
    builder = f"/workspace/projects/{pid}/builder"

    # No deploy yet: nothing to frame, the preview says so and is drawn again until there is.
    page = api.get(builder)
    assert page.status == 200
    assert "The site's first build is running: the preview opens here once the shop is live." in page.text
    assert 'id="preview" aria-labelledby="preview-title" data-refresh="3"' in page.text
    assert "<iframe" not in page.text and 'id="preview-open"' not in page.text

    # The first build failed: said with the host's words, and no longer drawn again.
    broken = push_files(api, pid, {"netlify.toml": '[build]\ncommand = "exit 7"\n'}).json()["sha"]
    settled_status(shop, broken)
    sandbox = shop["env"]["sandbox"].url
    httpx.delete(f"{sandbox}/__admin/requests")
    page = api.get(builder)
    assert "The site's first build failed: Build script returned non-zero exit code: 7." in page.text
    assert ">See the preview</a>" in page.text  # on a phone, the link to a preview with nothing live yet
    assert "data-refresh" not in page.text and "<iframe" not in page.text
    # What the builder page asks the site host: the recent deploys and the live one, never a build's log,
    # which only the project page shows.
    asked = httpx.get(f"{sandbox}/__admin/requests", params={"prefix": "/netlify"}).json()["counts"]
    assert set(asked) == {
        "GET /netlify/api/v1/sites/{site_id}/deploys",
        "GET /netlify/api/v1/sites/{site_id}",
    }, asked

    # A build that went live: framed.
    good = push_files(api, pid, {"netlify.toml": TOML, "page.html": "<h1>Teas</h1>"}).json()["sha"]
    settled_status(shop, good)
    page = api.get(builder)
    assert f'<iframe id="preview-frame" src="{project.live_url}"' in page.text
    assert "data-refresh" not in page.text and "first build" not in page.text
    assert ">See the live preview</a>" in page.text
