"""What the builder panel, the files, file and diff pages and the knowledge pages show, gathered from the same
domain calls the MCP tools make (svc_shared.domain.workbench, Projects, Accounts), so a page and a tool never disagree.
No HTML here."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.domain.accounts import User
from svc_shared.domain.projects import KNOWLEDGE_MAX_BYTES, Project
from svc_shared.wiring import services
from svc_shared.workspace import render, views

MAX_MESSAGE = 20_000  # the send_message tool's limit
FILES_PER_PAGE = 500
SHOWN_FILE_BYTES = 512 * 1024  # a page shows the first 512 KB of a text file (read_file allows 1 MB)
SHOWN_DIFF_BYTES = 1024 * 1024  # patches shown on one diff page, in total
MESSAGE_WORDS = {
    "in_progress": "The builder is working on it",
    "complete": "Done",
    "error": "The builder could not finish",
}


def owned_project(user: User, project_id: str) -> Project:
    """The project if the user owns it; Forbidden in words for those who may only see it (the tools allow
    the builder, the files and the knowledge to the owner only); NotFound for anyone else."""
    return views.owned_project(user, project_id, say("workspace.owner_only"))


def when(value: Any) -> str:
    """An ISO 8601 time (as the builder gives them) in the workspace's words."""
    if not value:
        return ""
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value)
    moment = moment.astimezone(UTC)
    return f"{moment.day} {moment:%b %Y, %H:%M} UTC"


def project_path(project_id: str, tail: str = "", **query: str) -> str:
    suffix = f"?{urlencode(query)}" if query else ""
    return f"{services.public_base_url()}/workspace/projects/{project_id}{tail}{suffix}"


def message_view(project_id: str, state: dict[str, Any], page: str = "") -> dict[str, Any]:
    """A builder message as the panel, the session page and their poll show it: the state in words, the reply or
    the error, and the commit it made with a link to what it changed. `page` is the path (under the project) a
    browser without script reloads to follow it: the session's page, or else the project page's panel."""
    status = str(state.get("status") or "in_progress")
    sha = state.get("commit_sha")
    message_id = str(state.get("message_id") or "")
    seen = str(time.time_ns() // 1_000_000)
    # A new URL each time (a link to the page's own URL and fragment would not reload it).
    if page:
        refresh = project_path(project_id, page, seen=seen) + "#latest"
    else:
        refresh = project_path(project_id, message=message_id, seen=seen) + "#builder"
    return {
        "message_id": message_id,
        "edit_session_id": state.get("edit_session_id"),
        "content": state.get("content"),
        "status": status,
        "words": MESSAGE_WORDS.get(status, status),
        "response": state.get("response"),
        "error": state.get("error"),
        "commit_sha": sha,
        "diff_url": project_path(project_id, "/diff", commit=sha) if sha else None,
        "poll_url": project_path(project_id, f"/builder/messages/{quote(message_id, safe='')}"),
        "refresh_url": refresh,
        "created": when(state.get("created_at")),
        "completed": when(state.get("completed_at")),
    }


def session_page(edit_session_id: str) -> str:
    """The path of an edit session's page under its project."""
    return f"/builder/{quote(edit_session_id, safe='')}"


def edit_rows(project_id: str, edits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """list_edits' sessions as the panel and the builder page list them, each with the address of its page."""
    return [
        {
            "id": str(e.get("edit_session_id") or ""),
            "title": str(e.get("title") or "Untitled session"),
            "messages": e.get("message_count"),
            "created": when(e.get("created_at")),
            "updated": when(e.get("updated_at") or e.get("created_at")),
            "url": project_path(project_id, session_page(str(e.get("edit_session_id") or ""))),
        }
        for e in edits
    ]


def builder_panel(
    user: User,
    project: Project,
    owner: bool,
    message_id: str | None = None,
    form: dict[str, str] | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    """The project page's builder panel: the send form, the message being followed, the edit sessions."""
    panel: dict[str, Any] = {
        "allowed": owner,
        "repo": bool(project.repo_host_repo and project.repo_host_branch),
        "form": {"message": "", "edit_session_id": "", **(form or {})},
        "error": error,
        "message": None,
        "message_error": None,
        "edits": [],
        "edits_error": None,
        "max_message": MAX_MESSAGE,
    }
    if not owner or not panel["repo"]:
        return panel
    workbench = services.workbench()
    if message_id:
        try:
            panel["message"] = message_view(project.id, workbench.get_message(user.id, message_id[:100]))
        except errors.NotFound:
            panel["message_error"] = say("workspace.builder_message_not_found")
        except errors.DomainError as exc:
            panel["message_error"] = exc.message
    try:
        edits = workbench.list_edits(user.id, project.id)
    except errors.DomainError as exc:
        panel["edits_error"] = exc.message
    else:
        panel["edits"] = edit_rows(project.id, edits)
    return panel


def preview(user: User, project: Project) -> dict[str, Any] | None:
    """The shop's live site as the builder page frames it (its address and origin), once it is published, and
    its `state`: "live"; or, until the site serves a first deploy, "building" while that build runs (the part is
    drawn again until it is live) or "failed" (with the build's `error`). A site whose deploys cannot be read now
    is framed as live."""
    url = views.publish_state(project).get("live_url")
    origin = render.frame_origin(url)
    if not origin:
        return None
    shown = {"url": url, "origin": origin, "state": "live", "error": None}
    history = services.workbench().site_deploys(user.id, project, with_log=False)
    if history is None or history.live is not None:
        return shown
    if history.latest is not None and history.latest.failed:
        return {**shown, "state": "failed", "error": history.latest.error}
    return {**shown, "state": "building"}


def builder_page(
    user: User,
    project: Project,
    edit_session_id: str | None,
    form: dict[str, str] | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    """The builder page: an edit session's conversation in the order it was sent (each message, the builder's
    reply or error and its commit), or none yet for a new session; the send form continuing it; the project's
    sessions; the live site to preview. NotFound for a session of another project, as for an unknown id."""
    session = None
    if edit_session_id is not None:
        problem = None
        try:
            found = services.workbench().get_edit(user.id, project.id, edit_session_id)
        except errors.NotFound:
            raise
        except errors.DomainError as exc:  # the builder cannot be read now: the page says so, in words
            found, problem = {}, exc.message
        here = session_page(edit_session_id)
        session = {
            "id": edit_session_id,
            "title": str(found.get("title") or "Edit session"),
            "messages": [message_view(project.id, m, here) for m in found.get("messages") or []],
            "error": problem,
        }
    chosen = {"edit_session_id": edit_session_id or "", **(form or {})}
    return {
        **builder_panel(user, project, True, form=chosen, error=error),
        "session": session,
        "preview": preview(user, project),
    }


def file_rows(files: list[dict[str, Any]], page: int) -> dict[str, Any]:
    """One page of a repository's file list (a repository can hold 100,000 files; a page shows 500)."""
    pages = max(1, -(-len(files) // FILES_PER_PAGE))
    page = min(max(page, 1), pages)
    start = (page - 1) * FILES_PER_PAGE
    return {"rows": files[start : start + FILES_PER_PAGE], "page": page, "pages": pages, "first": start + 1}


def diff_lines(patch: str) -> list[tuple[str, str]]:
    """A unified diff's lines, each with its kind: hunk (@@), add (+), del (-), note (\\ No newline) or ctx."""
    lines = []
    for line in patch.split("\n"):
        if line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        elif line.startswith("\\") or line.startswith("[... patch truncated"):
            kind = "note"
        else:
            kind = "ctx"
        lines.append((kind, line))
    return lines


def diff_files(diff: dict[str, Any]) -> list[dict[str, Any]]:
    """get_diff's files with their lines marked, at most 1 MB of patches in all (later ones are named only)."""
    shown = 0
    files = []
    for f in diff.get("files") or []:
        patch = f.get("patch")
        entry = {
            "filename": f.get("filename", ""),
            "status": f.get("status", "modified"),
            "additions": f.get("additions") or 0,
            "deletions": f.get("deletions") or 0,
            "previous_filename": f.get("previous_filename"),
            "truncated": bool(f.get("truncated")),
            "lines": None,
            "withheld": False,
        }
        if patch is not None:
            size = len(patch.encode("utf-8"))
            if shown + size > SHOWN_DIFF_BYTES:
                entry["withheld"] = True
            else:
                shown += size
                entry["lines"] = diff_lines(patch)
        files.append(entry)
    return files


def knowledge_count(text: str) -> dict[str, Any]:
    size = len(text.encode("utf-8"))
    return {"bytes": size, "max": KNOWLEDGE_MAX_BYTES, "over": size > KNOWLEDGE_MAX_BYTES}
