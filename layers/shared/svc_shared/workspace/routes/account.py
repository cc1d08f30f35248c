"""The account page: change the password, sign out everywhere, delete the account."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from svc_shared.core import errors
from svc_shared.core.catalogue import say
from svc_shared.core.logs import get_logger
from svc_shared.domain.accounts import MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, User
from svc_shared.domain.sessions import SESSION_COOKIE
from svc_shared.edge import web
from svc_shared.wiring import services
from svc_shared.workspace import site

logger = get_logger()
router = Router()


def _page(user: User, status: int = 200, **context: object) -> Response:
    context.setdefault("notice", None)
    context.setdefault("failed", "")
    context.setdefault("error", "")
    deletion = services.account_deletion()
    return site.page(
        router,
        status,
        "account.html",
        user,
        nav="account",
        min_length=MIN_PASSWORD_LENGTH,
        max_length=MAX_PASSWORD_LENGTH,
        members=deletion.other_members(user.default_workspace_id, user.id),
        projects=len(services.projects().list_owned(user.id)),
        **context,
    )


def _refused(user: User, status: int, form: str, message: str, retry_after: int | None = None) -> Response:
    answer = _page(user, status, failed=form, error=message)
    if retry_after is not None:
        answer.headers["Retry-After"] = str(retry_after)
    return answer


def _confirmed(user: User, form: str, password: str) -> Response | None:
    """None when `password` is the user's (throttled as signing in is); otherwise the page saying why not."""
    if not password:
        return _refused(user, 400, form, say("workspace.password_current_required"))
    try:
        services.signin().check_password(user, password, web.client_ip(router))
    except errors.RateLimited as exc:
        return _refused(user, 429, form, exc.message, exc.retry_after)
    except errors.Unauthenticated:
        return _refused(user, 401, form, say("workspace.password_wrong"))
    return None


@router.get("/workspace/account")
def account() -> Response:
    user = site.current_user(router)
    # The page's banner, by the `done` code of `?done=<code>` (a fixed message, never text from the query).
    done = router.current_event.get_query_string_value("done")
    notice = say("workspace.password_changed") if done == "password" else None
    return _page(user, notice=notice)


@router.post("/workspace/account/password")
def change_password() -> Response:
    user = site.current_user(router)
    form = site.form(router)
    current, new, again = (
        form.get(name, "") for name in ("current_password", "new_password", "new_password_again")
    )
    if not new or not again:
        return _refused(user, 400, "password", say("workspace.password_twice"))
    if new != again:
        return _refused(user, 400, "password", say("workspace.passwords_differ"))
    if not MIN_PASSWORD_LENGTH <= len(new) <= MAX_PASSWORD_LENGTH:
        message = say(
            "workspace.password_length", min_length=MIN_PASSWORD_LENGTH, max_length=MAX_PASSWORD_LENGTH
        )
        return _refused(user, 400, "password", message)
    refused = _confirmed(user, "password", current)
    if refused is not None:
        return refused
    if new == current:
        return _refused(user, 400, "password", say("workspace.password_unchanged"))
    signin = services.signin()
    signin.change_password(user.id, new)  # every session ends and every MCP grant is revoked
    session = signin.new_session(user.id)
    cookie = web.session_cookie(
        SESSION_COOKIE,
        session.cookie,
        max_age=services.settings().session_ttl_seconds,
        secure=services.cookie_secure(),
    )
    return web.redirect(f"{site.base()}/workspace/account?done=password", cookies=[cookie])


@router.post("/workspace/account/delete")
def delete_account() -> Response:
    user = site.current_user(router)
    form = site.form(router)
    if form.get("confirm") != "yes":
        return _refused(user, 400, "delete", say("workspace.delete_confirm"))
    refused = _confirmed(user, "delete", form.get("password", ""))
    if refused is not None:
        return refused
    deleted = services.account_deletion().delete(user.id)
    logger.info(
        "account deleted",
        extra={
            "user_id": user.id,
            "projects": deleted.projects,
            "connections": deleted.connections,
            "grants": deleted.grants,
            "members_removed": deleted.members_removed,
        },
    )
    gone = web.expired_cookie(SESSION_COOKIE, secure=services.cookie_secure())
    return web.redirect(f"{site.base()}/workspace/account/deleted", cookies=[gone])


@router.get("/workspace/account/deleted")
def deleted() -> Response:
    """What was deleted and what stays; shown to anyone (it says nothing about an account)."""
    return site.page(router, 200, "account_deleted.html", None)
