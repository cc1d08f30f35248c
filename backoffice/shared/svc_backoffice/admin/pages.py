"""How an admin screen is served: `PageRouter.page(...)` declares a page once with the role it needs (or the
API route whose role it takes, so a screen and the API it mirrors are gated alike), and every page goes
through the same steps: the signed-in staff member (else the signed-out page), for a form post the same-origin
rule and the CSRF token bound to the session, the role, then the handler in a savepoint whose domain errors
become a page in words (never JSON)."""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.router import Router

from svc_backoffice.access import auth
from svc_backoffice.access.roles import ROLE_RANK
from svc_backoffice.access.sessions import SESSION_COOKIE
from svc_backoffice.admin import render
from svc_backoffice.core import config, tenancy
from svc_backoffice.core.catalogue import Group, say
from svc_backoffice.core.errors import DomainError, Forbidden, NotFound, PayloadTooLarge
from svc_backoffice.core.logs import logger
from svc_backoffice.data.db import database
from svc_backoffice.domain import store
from svc_backoffice.domain.media import MAX_IMAGE_BYTES
from svc_backoffice.edge.app import STATUS_BY_ERROR
from svc_backoffice.edge.gate import check_same_origin
from svc_backoffice.edge.requests import raw_body
from svc_backoffice.edge.web import cookie

MAX_FORM_BYTES = 256 * 1024
MAX_UPLOAD_BYTES = MAX_IMAGE_BYTES + 64 * 1024  # one image file and the few fields of its form
NOTICES = Group("admin.notice")


@dataclass(frozen=True)
class Page:
    """A declared page: its method and rule, and the minimum role (`api`: the role of that API route)."""

    method: str
    rule: str
    role: str | None
    api: str | None = None
    upload: bool = False  # a multipart/form-data form carrying a file (else urlencoded)

    @property
    def needed(self) -> str | None:
        return api_role(self.api) if self.api else self.role


def api_role(route: str) -> str:
    """The minimum role of an API route named `METHOD /api/path`, as the route table the screens were given
    (screens.routers) declares it; KeyError for a route it lacks."""
    return router.api_roles[route]


def may(staff: auth.Staff | None, route: str) -> bool:
    """Whether `staff` may do what API route `route` does: a control shows only when this is true."""
    return staff is not None and staff.rank >= ROLE_RANK[api_role(route)]


# -- answers ---------------------------------------------------------------------------------------------------
def html(status: int, body: str, headers: dict[str, str] | None = None) -> Response:
    return Response(
        status_code=status,
        content_type="text/html; charset=utf-8",
        body=body,
        headers={**render.PAGE_HEADERS, **(headers or {})},
    )


def see_other(local: str, *, at: str = "", **query: str) -> Response:
    """A 303 to a page of this backoffice (under the shop's base path when hosted); `at` names the element
    the page opens at (its fragment: where keyboard focus continues from after a move)."""
    target = tenancy.path(local) + (f"?{urlencode(query)}" if query else "") + (f"#{at}" if at else "")
    return Response(status_code=303, headers={"Location": target, "Cache-Control": "no-store"})


def workspace_url() -> str | None:
    """The platform's 'Open backoffice' link for this shop (hosted), where a new session starts; None
    self-hosted, where the platform's address is not known here."""
    shop = tenancy.current_shop()
    if shop is None or not shop.base_url.endswith(shop.base_path):
        return None
    origin = shop.base_url[: len(shop.base_url) - len(shop.base_path)]
    return f"{origin}/backoffice/sso?{urlencode({'project': shop.id})}"


def store_row() -> dict[str, Any]:
    return dict(store.get_settings_row(database()))


def page(template: str, status: int = 200, **context: Any) -> Response:
    """A page of the admin layout with what every page needs besides its own context (a form's `values`,
    `errors` and `form_error`, none unless given)."""
    staff: auth.Staff | None = context.pop("staff", None) or current_staff()
    settings = context.pop("store", None) or store_row()
    currency, locale, zone = settings["currency"], settings["locale"], settings["timezone"]
    notice_key = current_query().get("notice", "")
    body = render.render(
        template,
        base=tenancy.path(""),
        version=render.asset_version(),
        staff=staff,
        store=settings,
        csrf=csrf_token() if staff else "",
        can=functools.partial(may, staff),
        money=lambda cents, cur=None: render.money(cents, cur or currency, locale),
        when=lambda value: render.when(value, zone, locale),
        notice=NOTICES.get(notice_key) if notice_key else None,
        workspace=workspace_url(),
        **{"nav": "", "title": "", "values": {}, "errors": {}, "form_error": None, **context},
    )
    return html(status, body)


def bare(status: int, title: str, message: str) -> Response:
    """A page outside the layout (no session to show): signed out, or a request refused before the gate."""
    body = render.render(
        "bare.html",
        base=tenancy.path(""),
        version=render.asset_version(),
        title=title,
        message=message,
        workspace=workspace_url(),
    )
    return html(status, body)


def problem(status: int, title: str, message: str) -> Response:
    """An error page inside the layout when someone is signed in, else outside it."""
    if current_staff() is None:
        return bare(status, title, message)
    return page("problem.html", status, title=title, message=message)


def not_found_page() -> Response:
    """The 404 of a page: inside the layout for a signed-in member (found from the cookie, as no gate ran)."""
    if current_staff() is None:
        staff = auth.current_staff(database(), cookie(router, SESSION_COOKIE))
        if staff is not None:
            router.append_context(staff=staff)
    return problem(404, say("admin.not_found_title"), say("admin.not_found"))


# -- the request -------------------------------------------------------------------------------------------------
def current_staff() -> auth.Staff | None:
    staff = router.context.get("staff")
    return staff if isinstance(staff, auth.Staff) else None


def nav_of(path: str) -> str:
    """The section of the navigation a page is in: its path's first part (/settings/locations: settings)."""
    return path.split("/")[1]


def tab_of(path: str) -> str:
    """The settings tab a page is on (/settings/<tab>/...), or none."""
    parts = path.split("/")
    return parts[2] if parts[1] == "settings" and len(parts) > 2 else ""


def signed_in() -> auth.Staff:
    """The member making the request: a page behind a role always has one."""
    staff = current_staff()
    assert staff is not None
    return staff


def current_query() -> dict[str, str]:
    return dict(router.current_event.query_string_parameters or {})


def form() -> dict[str, str]:
    """The posted form's fields (the last value of a repeated name)."""
    return dict(router.context.get("form") or {})


def form_lists() -> dict[str, list[str]]:
    """The posted form's fields with every value of a repeated name (checkboxes)."""
    found: dict[str, list[str]] = {}
    for name, value in router.context.get("pairs") or []:
        found.setdefault(name, []).append(value)
    return found


def _csrf_key() -> bytes:
    shop = tenancy.current_shop()
    key = shop.session_key if shop is not None else config.session_secret()
    return hmac.new(key, b"admin-csrf", hashlib.sha256).digest()


def csrf_token() -> str:
    """A token bound to this session: another site's form cannot know it."""
    session = cookie(router, SESSION_COOKIE) or ""
    return hmac.new(_csrf_key(), session.encode(), hashlib.sha256).hexdigest()[:40]


def files() -> dict[str, tuple[str, bytes]]:
    """The posted upload's files by field name: (the name it had on the person's computer, its bytes)."""
    return dict(router.context.get("files") or {})


def _content_type(app: APIGatewayRestResolver) -> str:
    headers = {k.lower(): v for k, v in (app.current_event.headers or {}).items()}
    return headers.get("content-type", "")


def _parse_form(app: APIGatewayRestResolver) -> list[tuple[str, str]]:
    raw = app.current_event.decoded_body or ""
    if len(raw.encode()) > MAX_FORM_BYTES:
        raise Forbidden(say("admin.form_too_large"))
    if _content_type(app).split(";")[0].strip() != "application/x-www-form-urlencoded":
        raise Forbidden(say("admin.form_expected"))
    return parse_qsl(raw, keep_blank_values=True, max_num_fields=2000)


def _parse_upload(app: APIGatewayRestResolver) -> tuple[list[tuple[str, str]], dict[str, tuple[str, bytes]]]:
    """A multipart/form-data form: its text fields and its files (API Gateway hands the body over
    base64-encoded, multipart/form-data being one of the API's binary media types)."""
    kind = _content_type(app)
    if kind.split(";")[0].strip().lower() != "multipart/form-data" or "boundary=" not in kind:
        raise Forbidden(say("admin.form_expected"))
    raw = raw_body(router)
    if len(raw) > MAX_UPLOAD_BYTES:
        raise PayloadTooLarge(say("admin.upload_too_large", mb=MAX_IMAGE_BYTES // (1024 * 1024)))
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {kind}\r\n\r\n".encode() + raw)
    if not message.is_multipart():
        raise Forbidden(say("admin.form_expected"))
    pairs: list[tuple[str, str]] = []
    found: dict[str, tuple[str, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        data = part.get_payload(decode=True)
        if not isinstance(name, str) or not isinstance(data, bytes):
            continue
        filename = part.get_filename()
        if filename is not None:
            found[name] = (filename, data)
        else:
            pairs.append((name, data.decode("utf-8", "replace")))
    return pairs, found


# -- the router ----------------------------------------------------------------------------------------------------
class PageRouter(Router):
    """The admin screens' routes. `page(method, rule, role=... | api="METHOD /api/...")` declares one."""

    def __init__(self) -> None:
        super().__init__()
        self.declared: list[Page] = []
        self.api_roles: dict[str, str] = {}  # "METHOD /api/path" -> its minimum role (screens.routers)

    def page(
        self,
        method: str,
        rule: str,
        *,
        role: str | None = "viewer",
        api: str | None = None,
        upload: bool = False,
    ) -> Callable[[Callable[..., Response]], Callable[..., Response]]:
        declared = Page(method, rule, role, api, upload)
        self.declared.append(declared)
        middlewares = [_gate(declared)] if declared.api or declared.role else []
        return self.route(rule, method, middlewares=middlewares)


router = PageRouter()
"""The one router of every admin screen (each screen's module declares its pages on it)."""


def _gate(declared: Page) -> Callable[[APIGatewayRestResolver, NextMiddleware], Response]:
    def gate(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response:
        staff = auth.current_staff(database(), cookie(app, SESSION_COOKIE))
        if staff is None:
            return bare(401, say("admin.signed_out_title"), say("admin.signed_out"))
        app.append_context(staff=staff)
        if declared.method == "POST":
            uploaded: dict[str, tuple[str, bytes]] = {}
            try:
                check_same_origin(app)
                if declared.upload:
                    pairs, uploaded = _parse_upload(app)
                else:
                    pairs = _parse_form(app)
            except Forbidden as exc:
                return problem(403, say("admin.refused_title"), exc.message)
            except PayloadTooLarge as exc:
                return problem(413, say("admin.refused_title"), exc.message)
            fields = dict(pairs)
            if not hmac.compare_digest(fields.get("csrf", ""), csrf_token()):
                logger.info("admin form without a valid token", extra={"path": app.current_event.path})
                return problem(403, say("admin.refused_title"), say("admin.form_expired"))
            app.append_context(form=fields, pairs=pairs, files=uploaded)
        needed = declared.needed
        assert needed is not None
        if staff.rank < ROLE_RANK[needed]:
            return problem(
                403, say("admin.role_title"), say("admin.role_refused", role=staff.role, needed=needed)
            )
        return _guarded(app, next_middleware)

    return gate


def _guarded(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response:
    """The handler in a savepoint: what a failing page wrote is undone, and its error is a page in words."""
    try:
        with database().transaction():
            return next_middleware(app)
    except NotFound:
        return not_found_page()
    except Forbidden as exc:
        return problem(403, say("admin.refused_title"), exc.message)
    except DomainError as exc:
        status = next((STATUS_BY_ERROR[c] for c in type(exc).__mro__ if c in STATUS_BY_ERROR), 400)
        return problem(status, say("admin.failed_title"), exc.message)
    except Exception:  # noqa: BLE001 - a person gets a page in words; the detail goes to the log
        request_id = app.current_event.request_context.request_id
        logger.exception("admin page failed", extra={"request_id": request_id})
        return problem(500, say("admin.failed_title"), say("admin.internal", request_id=request_id))


def local_path(url: str) -> str:
    """The path of a URL as the routes see it (the shop's base path removed when hosted)."""
    path = urlsplit(url).path
    base = tenancy.path("")
    return path[len(base) :] if base and path.startswith(base) else path
