"""What the builder pages' integration tests share: a signed-in merchant with a project whose repository holds
a few files, the page's CSRF token and text as a person reads it, and a builder message followed to its end."""

from __future__ import annotations

import base64
import html
import re
import time
from typing import Any

from apiclient import project_with_repository


def csrf_of(page) -> str:
    match = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
    assert match, "no CSRF token on the page"
    return match[1]


def text_of(page) -> str:
    """The page's text as a person reads it (tags dropped, entities decoded, spaces collapsed)."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.text)).split())


def local(location: str) -> str:
    return location.split("127.0.0.1:3000", 1)[1]


def builder_shop(api, bearer, provider_env, demo_user) -> dict[str, Any]:
    """The demo user signed in with GitHub and Supabase connected, a project with a repository holding a few
    files (one binary), and the first commit's SHA."""
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    project_id = project_with_repository(api, bearer)["project_id"]
    first = api.post(
        "/api/repo-host/push",
        json_body={
            "projectId": project_id,
            "files": [
                {"path": "src/app.txt", "content": "hello <b>\n"},
                {
                    "path": "img/logo.png",
                    "content": base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\xff").decode(),
                    "encoding": "base64",
                },
            ],
        },
    ).json()
    return {
        "api": api,
        "bearer": bearer,
        "id": project_id,
        "first": first["sha"],
        "env": provider_env,
        "user": demo_user,
    }


def follow(api, project_id: str, message_id: str) -> dict:
    """The message's state from the panel's poll endpoint until the builder has finished."""
    for _ in range(100):
        state = api.get(f"/workspace/projects/{project_id}/builder/messages/{message_id}")
        assert state.status == 200, state.text
        if state.json()["status"] != "in_progress":
            return state.json()
        time.sleep(0.1)
    raise AssertionError("the builder did not finish")
