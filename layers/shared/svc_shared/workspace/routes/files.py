"""A project's repository in the workspace: its files at a ref (as list_files), one file (read_file) and the
diff between two refs or of one commit (get_diff), each a page in words, errors included."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.domain.accounts import User
from svc_shared.domain.connections import ReconnectRequired
from svc_shared.domain.projects import Project
from svc_shared.edge import web
from svc_shared.providers.http import ProviderAuthError, ProviderConflict, ProviderNotFound
from svc_shared.wiring import services
from svc_shared.workspace import site
from svc_shared.workspace import workbench_views as wv

router = Router()


def _query(name: str, default: str = "") -> str:
    return (router.current_event.get_query_string_value(name) or default).strip()


def _failure(exc: errors.DomainError, missing: str) -> tuple[int, str, bool]:
    """(status, words, whether to point to the Connections page) of a failed repository read: `missing` when
    the provider found no such ref or file (GitHub answers 404, or 422 for a ref that names no commit); the
    page's own words when the user's GitHub token is missing or refused (the API's text for that is French)."""
    if isinstance(exc, ProviderNotFound | ProviderConflict):
        return 404, missing, False
    if isinstance(exc, errors.NotFound):
        raise exc
    if isinstance(exc, ReconnectRequired | ProviderAuthError):
        return web.status_for(exc), say("workspace.github_unusable"), True
    return web.status_for(exc), exc.message, False


def _page(user: User, project: Project, status: int, template: str, **context: Any) -> Response:
    return site.page(router, status, template, user, nav="home", project=project, **context)


@router.get("/workspace/projects/<projectId>/files")
def files(projectId: str) -> Response:
    user = site.current_user(router)
    project = wv.owned_project(user, projectId)
    ref = _query("ref", "HEAD") or "HEAD"
    try:
        page = int(_query("page", "1") or "1")
    except ValueError:
        page = 1
    try:
        listed = services.workbench().list_files(user.id, project.id, ref)
    except errors.DomainError as exc:
        status, words, reconnect = _failure(
            exc, say("workspace.no_ref", ref=ref, repo=project.repo_host_repo)
        )
        return _page(
            user, project, status, "files.html", ref=ref, listed=None, error=words, reconnect=reconnect
        )
    return _page(
        user,
        project,
        200,
        "files.html",
        ref=ref,
        listed=listed,
        error=None,
        **wv.file_rows(listed["files"], page),
    )


@router.get("/workspace/projects/<projectId>/files/read")
def read(projectId: str) -> Response:
    user = site.current_user(router)
    project = wv.owned_project(user, projectId)
    ref = _query("ref", "HEAD") or "HEAD"
    path = router.current_event.get_query_string_value("path") or ""
    context: dict[str, Any] = {"ref": ref, "path": path, "file": None, "error": None, "shown": None}
    try:
        found = services.workbench().read_file(user.id, project.id, path, ref)
    except errors.DomainError as exc:
        status, context["error"], context["reconnect"] = _failure(
            exc, say("workspace.no_file", path=path, ref=ref)
        )
        if isinstance(exc, errors.PayloadTooLarge):
            context["error"] = say("workspace.file_too_large", path=path)
        return _page(user, project, status, "file.html", **context)
    context["file"] = found
    if found["encoding"] == "utf-8":
        raw = found["content"].encode("utf-8")
        if len(raw) > wv.SHOWN_FILE_BYTES:
            context["shown"] = raw[: wv.SHOWN_FILE_BYTES].decode("utf-8", "ignore")
        else:
            context["shown"] = found["content"]
    return _page(user, project, 200, "file.html", limit=wv.SHOWN_FILE_BYTES, **context)


@router.get("/workspace/projects/<projectId>/diff")
def diff(projectId: str) -> Response:
    user = site.current_user(router)
    project = wv.owned_project(user, projectId)
    commit = _query("commit")
    base, head = _query("base"), _query("head", "HEAD") or "HEAD"
    context: dict[str, Any] = {"older": base, "newer": head, "commit": commit, "diff": None, "error": None}
    if not commit and not base:
        return _page(user, project, 200, "diff.html", **context)
    workbench = services.workbench()
    try:
        if commit:
            found = workbench.commit_diff(user.id, project.id, commit)
            context.update(older=found["base"], newer=found["head"])
        else:
            found = workbench.diff(user.id, project.id, base, head)
    except errors.DomainError as exc:
        missing = (
            say("workspace.no_commit", commit=commit, repo=project.repo_host_repo)
            if commit
            else say("workspace.no_refs", base=base, head=head, repo=project.repo_host_repo)
        )
        status, context["error"], context["reconnect"] = _failure(exc, missing)
        return _page(user, project, status, "diff.html", **context)
    context["diff"] = found
    context["files"] = wv.diff_files(found)
    return _page(user, project, 200, "diff.html", **context)
