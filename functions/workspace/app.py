"""The workspace pages a merchant uses after signing in: home (`/`), connections, a project with its publish
progress, MCP access, and their static files. Server-rendered (svc_shared.workspace), same-origin with the
§4.2 routes and authenticated by the same session cookie; forms carry a CSRF token bound to the session."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from svc_shared import errors, services, web
from svc_shared.accounts import User
from svc_shared.connections import PROVIDERS
from svc_shared.logs import get_logger
from svc_shared.providers import label
from svc_shared.providers.http import REQUEST_BUDGET_SECONDS, time_budget
from svc_shared.sessions import SESSION_COOKIE
from svc_shared.workspace import render, views

logger = get_logger()
app = web.create_resolver()


class SignInRequired(Exception):
    """No valid session: the browser goes to /login and comes back here afterwards."""


class BadForm(Exception):
    """A form that did not come from our page (missing or wrong CSRF token)."""


def _base() -> str:
    return services.public_base_url()


def _page(status: int, template: str, user: User | None, *, nav: str = "", **context: Any) -> Response:
    cookie = web.cookie(app, SESSION_COOKIE) or ""
    html = render.render(
        template,
        base=_base(),
        version=render.asset_version(),
        csrf=render.csrf_token(services.signing_key("workspace-csrf"), cookie) if cookie else "",
        user=user,
        nav=nav,
        notice=context.pop("notice", None),
        notice_kind=context.pop("notice_kind", None),
        **context,
    )
    return Response(
        status_code=status,
        content_type="text/html; charset=utf-8",
        body=html,
        headers=dict(render.PAGE_HEADERS),
    )


def _user() -> User:
    user_id = services.sessions().resolve(web.cookie(app, SESSION_COOKIE))
    if user_id is None:
        raise SignInRequired
    return services.accounts().get_user(user_id)


def _form() -> dict[str, str]:
    """The posted form, once its origin (web.check_same_origin) and its CSRF token, bound to the session,
    are checked."""
    web.check_same_origin(app)
    try:
        form = web.form_body(app)
    except errors.InvalidInput as exc:
        raise BadForm(exc.message) from None
    key = services.signing_key("workspace-csrf")
    if not render.csrf_valid(key, web.cookie(app, SESSION_COOKIE), form.get("csrf")):
        raise BadForm(
            "This form has expired or did not come from the workspace. Reload the page and try again."
        )
    return form


def _back(path: str, **query: str) -> Response:
    suffix = f"?{urlencode(query)}" if query else ""
    return web.redirect(f"{_base()}{path}{suffix}")


@app.exception_handler(SignInRequired)
def _sign_in(_: SignInRequired) -> Response:
    event = app.current_event
    target = event.path
    if event.query_string_parameters:
        target += "?" + urlencode(event.query_string_parameters)
    next_path = web.safe_next(target) if event.http_method == "GET" else "/"
    return web.redirect(f"{_base()}/login?{urlencode({'next': next_path})}")


@app.exception_handler(BadForm)
def _bad_form(exc: BadForm) -> Response:
    return _page(400, "error.html", _maybe_user(), title="Something went wrong", message=str(exc))


@app.exception_handler(errors.DomainError)
def _domain_error(exc: errors.DomainError) -> Response:
    status = web.status_for(exc)
    if isinstance(exc, errors.NotFound):
        return _page(
            404,
            "error.html",
            _maybe_user(),
            title="Not found",
            message="This page does not exist, or it is not shared with you.",
        )
    return _page(status, "error.html", _maybe_user(), title="Something went wrong", message=exc.message)


@app.exception_handler(Exception)
def _unexpected(exc: Exception) -> Response:
    request_id = app.current_event.request_context.request_id
    logger.exception("unhandled error", extra={"request_id": request_id})
    return _page(
        500,
        "error.html",
        None,
        title="Something went wrong",
        message=f"An internal error occurred. Try again; if it persists, quote request {request_id}.",
    )


@app.not_found
def _not_found(_: Exception) -> Response:
    return _page(404, "error.html", _maybe_user(), title="Not found", message="This page does not exist.")


def _maybe_user() -> User | None:
    try:
        return _user()
    except Exception:  # noqa: BLE001 - an error page renders even when the session cannot be read
        return None


# ---- pages ------------------------------------------------------------------------------------------------
def _home(user: User, status: int = 200, **extra: Any) -> Response:
    from svc_shared.projects import TEMPLATES

    return _page(
        status,
        "home.html",
        user,
        nav="home",
        templates=TEMPLATES,
        new_form=extra.pop("new_form", {"template_id": "", "prompt": ""}),
        new_errors=extra.pop("new_errors", {}),
        **views.home(user),
        **extra,
    )


@app.get("/")
def home() -> Response:
    return _home(_user())


@app.post("/workspace/projects")
def create_project() -> Response:
    """A new shop from a template or a description, as the create_project tool makes it."""
    from svc_shared.projects import TEMPLATES_BY_ID

    user = _user()
    form = _form()
    template_id = form.get("template_id", "").strip() or None
    prompt = form.get("prompt", "").strip()
    new_form = {"template_id": template_id or "", "prompt": prompt}
    if template_id is not None and template_id not in TEMPLATES_BY_ID:
        raise BadForm("Choose one of the templates listed, or describe the shop yourself.")
    if not prompt and template_id is not None:
        prompt = TEMPLATES_BY_ID[template_id].prompt
    try:
        services.connections().require_for_projects(user.id)
        project = services.projects().create(
            owner_id=user.id, workspace_id=user.default_workspace_id, prompt=prompt, template_id=template_id
        )
    except (errors.Conflict, errors.InvalidInput) as exc:
        return _home(user, web.status_for(exc), new_form=new_form, new_errors={"prompt": exc.message})
    return _back(f"/workspace/projects/{project.id}")


@app.get("/workspace")
def workspace_root() -> Response:
    return _back("/")


# The connections page's failure banner, by the `reason` code of `?failed=<provider>&reason=<code>`.
CONNECT_FAILURES = {
    "": "Connecting {provider} did not finish. Try again.",
    "denied": "{provider} did not grant access. Try again and approve the request.",
    "expired": "The connection request expired. Try again.",
}


@app.get("/workspace/connections")
def connections() -> Response:
    user = _user()
    query = app.current_event.query_string_parameters or {}
    # Banners are fixed messages chosen by a code in the query, never text taken from it.
    failed = None
    if query.get("failed") in PROVIDERS:
        reason = CONNECT_FAILURES.get(query.get("reason") or "", CONNECT_FAILURES[""])
        failed = {"provider": query["failed"], "message": reason.format(provider=label(query["failed"]))}
    notice = None
    if query.get("disconnected") in PROVIDERS:
        notice = f"{label(query['disconnected'])} disconnected. Your repositories, databases and sites are untouched."
    return _page(
        200,
        "connections.html",
        user,
        nav="connections",
        cards=views.connections(user),
        failed=failed,
        notice=notice,
    )


@app.get("/workspace/connections/state")
def connections_state() -> Response:
    user = _user()
    return web.json_response(200, {"connections": services.connections().details(user.id)})


@app.get("/workspace/connections/connect")
def connect() -> Response:
    """Without script, Connect is a link: straight to the provider in this tab."""
    user = _user()
    provider = app.current_event.get_query_string_value("provider") or ""
    if provider not in PROVIDERS:
        return _page(
            400,
            "error.html",
            user,
            title="Unknown service",
            message="Choose GitHub, Supabase or Netlify on the Connections page.",
        )
    return web.redirect(services.connections().initiate(user.id, provider))


@app.post("/workspace/connections/disconnect")
def disconnect() -> Response:
    user = _user()
    form = _form()
    provider = form.get("provider", "")
    if provider not in PROVIDERS:
        raise BadForm("Choose GitHub, Supabase or Netlify on the Connections page.")
    if form.get("confirm") != "yes":
        return _page(
            400,
            "connections.html",
            user,
            nav="connections",
            cards=views.connections(user),
            failed={"provider": provider, "message": "Tick the box to confirm, then press Disconnect."},
        )
    services.connections().disconnect(user.id, provider)
    return _back("/workspace/connections", disconnected=provider)


def _project_page(user: User, project_id: str, status: int = 200, **extra: Any) -> Response:
    context = views.project_page(user, project_id)
    db_projects: list[dict[str, Any]] = []
    db_note = None
    if context["owner"] and context["connections"].get("db_host", {}).get("connected"):
        try:
            db_projects = services.integrations().list_db_projects(user.id)
        except errors.DomainError as exc:
            db_note = exc.message
    elif context["owner"]:
        db_note = "Connect Supabase on the Connections page to choose one of your database projects."
    form = {"mode": "create", "name": "", "existingRepo": "", "ref": "", **extra.pop("form", {})}
    return _page(
        status,
        "project.html",
        user,
        nav="home",
        db_projects=db_projects,
        db_note=db_note,
        form=form,
        field_errors=extra.pop("field_errors", {}),
        **context,
        **extra,
    )


@app.get("/workspace/projects/<projectId>")
def project(projectId: str) -> Response:
    user = _user()
    notice = {"published": "Publishing started.", "repo": "Repository saved.", "database": "Database linked."}
    done = app.current_event.get_query_string_value("done") or ""
    return _project_page(user, projectId, notice=notice.get(done))


@app.post("/workspace/projects/<projectId>/publish")
def publish(projectId: str) -> Response:
    user = _user()
    _form()
    try:
        services.provisioning().provision(user, projectId, start=True)
    except (errors.PaymentRequired, errors.Conflict) as exc:
        return _project_page(
            user, projectId, status=web.status_for(exc), notice=exc.message, notice_kind="bad"
        )
    return _back(f"/workspace/projects/{projectId}", done="published")


# Which form field an integrations error names (its code), so the message shows next to that field.
FIELD_OF_CODE = {"name_invalid": "name", "existing_repo_invalid": "existingRepo", "ref_invalid": "ref"}


@app.post("/workspace/projects/<projectId>/repo")
def connect_repo(projectId: str) -> Response:
    from svc_shared.bodies import ConnectRepoRequest

    user = _user()
    form = _form()
    fields = {k: form.get(k, "").strip() for k in ("mode", "name", "existingRepo")}
    try:
        body = web.parse(
            ConnectRepoRequest,
            {
                "projectId": projectId,
                "mode": fields["mode"] or "create",
                "name": fields["name"] if fields["mode"] != "link" else None,
                "existingRepo": fields["existingRepo"] if fields["mode"] == "link" else None,
            },
        )
        services.integrations().connect_repo(user.id, body)
    except (errors.InvalidInput, errors.NotFound) as exc:
        if isinstance(exc, errors.NotFound) and exc.field != "existingRepo":
            raise
        field = FIELD_OF_CODE.get(exc.code, "existingRepo" if fields["mode"] == "link" else "name")
        return _project_page(
            user, projectId, status=web.status_for(exc), form=fields, field_errors={field: exc.message}
        )
    return _back(f"/workspace/projects/{projectId}", done="repo")


@app.post("/workspace/projects/<projectId>/database")
def link_database(projectId: str) -> Response:
    user = _user()
    form = _form()
    ref = form.get("ref", "").strip()
    try:
        services.integrations().link_db_project(user.id, projectId, ref)
    except (errors.InvalidInput, errors.NotFound) as exc:
        if isinstance(exc, errors.NotFound) and exc.field != "ref":
            raise
        return _project_page(
            user, projectId, status=web.status_for(exc), form={"ref": ref}, field_errors={"ref": exc.message}
        )
    return _back(f"/workspace/projects/{projectId}", done="database")


@app.get("/workspace/mcp")
def mcp_access() -> Response:
    user = _user()
    context = views.mcp_access(user)
    names = {p.id: p.name for p in services.projects().list_owned(user.id)}
    # A fixed message chosen by the code, never the query's text (a link could carry any words otherwise).
    revoked = app.current_event.get_query_string_value("revoked") == "1"
    notice = "The client can no longer use your account." if revoked else None
    return _page(200, "mcp.html", user, nav="mcp", project_names=names, notice=notice, **context)


@app.post("/workspace/mcp/revoke")
def revoke() -> Response:
    user = _user()
    form = _form()
    grant_id = form.get("grant_id", "")
    clients = {c.grant_id: c.client_name for c in services.mcp_clients().list(user.id)}
    if grant_id not in clients or not services.mcp_clients().revoke(user.id, grant_id):
        raise errors.NotFound("client not found")
    return _back("/workspace/mcp", revoked="1")


@app.get("/workspace/billing")
def billing() -> Response:
    """Where a credit top-up's checkout returns: the balance as it stands."""
    return _back("/")


@app.get("/workspace/static/<name>")
def static(name: str) -> Response:
    found = render.static_file(name)
    if found is None:
        return _page(404, "error.html", None, title="Not found", message="This file does not exist.")
    content, kind, etag = found
    if app.current_event.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers={"ETag": etag})
    return Response(
        status_code=200,
        content_type=kind,
        body=content.decode(),
        headers={"ETag": etag, "Cache-Control": "public, max-age=300", "X-Content-Type-Options": "nosniff"},
    )


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    with time_budget(REQUEST_BUDGET_SECONDS):
        return app.resolve(event, context)
