"""Open backoffice (`GET /backoffice/sso?project=ID`) through real proxy events: a published shop redirects
with a signed hand-off to its hosted backoffice; anything else is a page in the workspace's style, never JSON."""

from __future__ import annotations

import re
import uuid
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest

from svc_shared.domain.handoff import ISSUER
from svc_shared.wiring import services


def sign_in(api, email="demo@example.com", password="demo-password-1"):
    assert api.post("/login", form={"email": email, "password": password}).status == 303


@pytest.fixture
def project(demo_user):
    return services.projects().create(
        owner_id=demo_user.id,
        workspace_id=demo_user.default_workspace_id,
        prompt="Handmade candles for cosy homes, warm tone",
        name="Candle <Shop>",
    )


def assert_workspace_page(answer, status: int) -> None:
    assert answer.status == status
    assert answer.header("content-type").startswith("text/html")
    csp = answer.header("content-security-policy")
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "/workspace/static/workspace.css" in answer.text  # the workspace's layout and stylesheet
    assert "<script>" not in answer.text and "style=" not in answer.text


def test_an_unpublished_shop_explains_in_words_and_links_to_its_project_page(api, project):
    sign_in(api)
    answer = api.get("/backoffice/sso", params={"project": project.id})
    assert_workspace_page(answer, 409)
    assert "backoffice opens once the shop is published" in answer.text
    assert "Candle &lt;Shop&gt;" in answer.text  # autoescaped
    link = re.search(r'<a class="button" id="project-page" href="([^"]+)"', answer.text)
    assert link and link[1] == f"http://127.0.0.1:3000/workspace/projects/{project.id}"
    assert "Publish the shop from its project page" in answer.text
    assert api.get(link[1].removeprefix("http://127.0.0.1:3000")).status == 200  # the page where Publish is


def test_a_workspace_member_is_told_the_owner_publishes(api, demo_user, project):
    services.projects().set_visibility(project, "workspace")
    member = services.accounts().create_user(email="m@example.com", password="member-password-1")
    services.accounts().add_collaborator(demo_user.default_workspace_id, member.id)
    sign_in(api, "m@example.com", "member-password-1")
    answer = api.get("/backoffice/sso", params={"project": project.id})
    assert_workspace_page(answer, 409)
    assert "The shop's owner publishes it from its project page" in answer.text


NOT_INVITED = "This store has not invited your email address."


@pytest.fixture
def backoffice_secret(app_env, monkeypatch):
    """The platform's backoffice secret (every shop's keys derive from it), as the stack has it."""
    from awsadmin import admin_client

    secret = admin_client("secretsmanager").create_secret(
        Name=f"backoffice-{app_env['TABLE_NAME']}", SecretString=uuid.uuid4().hex * 2
    )
    monkeypatch.setenv("BACKOFFICE_SECRET_ARN", secret["ARN"])
    services.wire()


def follow_as_outsider(api, project_id: str) -> list[tuple[int, str]]:
    """The statuses and paths an outsider's browser goes through from Open backoffice, and the page it ends
    on, with the project's id written as <id>."""
    hops, answer = [], api.get("/backoffice/sso", params={"project": project_id})
    while answer.status in (302, 303):
        target = urlsplit(answer.header("location"))
        hops.append((answer.status, target.path.replace(project_id, "<id>")))
        answer = api.get(target.path, params={k: v[0] for k, v in parse_qs(target.query).items()})
    return [*hops, (answer.status, answer.text)]


@pytest.mark.parametrize("which", ["someone else's", "unknown"])
def test_whoever_may_not_see_a_project_is_answered_as_by_a_shop_that_has_not_invited_them(
    api, backoffice_secret, demo_user, project, which
):
    """An outsider learns nothing of a project from Open backoffice: an unknown id, someone else's project
    not published yet and a published shop that has not invited them answer alike (the token is for the shop
    the platform would host, and a shop that is not there has invited nobody)."""
    services.accounts().create_user(email="s@example.com", password="strange-password-1")
    sign_in(api, "s@example.com", "strange-password-1")
    project_id = project.id if which == "someone else's" else str(uuid.uuid4())
    answer = api.get("/backoffice/sso", params={"project": project_id})
    token = parse_qs(urlsplit(answer.header("location")).query)["token"][0]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert (claims["role"], claims["aud"]) == ("invitee", f"http://127.0.0.1:3000/shops/{project_id}")
    assert follow_as_outsider(api, project_id)[:-1] == [
        (303, "/shops/<id>/auth/sso"),
        (302, "/shops/<id>/auth/signed-out"),
    ]
    status, page = follow_as_outsider(api, project_id)[-1]
    assert status == 200 and NOT_INVITED in page and "Candle" not in page
    # A link minted for another browser (without its binding cookie) is refused as a real shop refuses it.
    api.cookies.pop("svc_handoff", None)
    refused = api.get(f"/shops/{project_id}/auth/sso", params={"token": token})
    assert refused.header("location").endswith("/auth/signed-out?reason=invalid_handoff")
    # Only its sign-in pages answer: the rest of a shop that is not there is not found.
    assert api.get(f"/shops/{project_id}/api/products").status == 404


def test_without_a_project_the_link_is_the_not_found_page(api, demo_user):
    services.accounts().create_user(email="s@example.com", password="strange-password-1")
    sign_in(api, "s@example.com", "strange-password-1")
    for params in (None, {"project": "not-a-project-id"}):
        answer = api.get("/backoffice/sso", params=params)
        assert_workspace_page(answer, 404)
        assert "This page does not exist, or it is not shared with you." in answer.text


@pytest.mark.parametrize("visibility", ["private", "public"])
def test_a_private_project_is_unknown_to_members_of_its_workspace(api, demo_user, project, visibility):
    """The attack: a workspace member opened the hand-off of a private project and got a backoffice role (and
    an unpublished one answered 409, unlike an unknown id's 404)."""
    services.projects().set_visibility(project, visibility)
    member = services.accounts().create_user(email="m@example.com", password="member-password-1")
    services.accounts().add_collaborator(demo_user.default_workspace_id, member.id, role="admin")
    sign_in(api, "m@example.com", "member-password-1")
    hidden = api.get("/backoffice/sso", params={"project": project.id})
    unknown_id = str(uuid.uuid4())
    unknown = api.get("/backoffice/sso", params={"project": unknown_id})
    # Both sent to where the platform would host the shop, as someone it has not invited.
    assert urlsplit(hidden.header("location")).path == f"/shops/{project.id}/auth/sso"
    assert urlsplit(unknown.header("location")).path == f"/shops/{unknown_id}/auth/sso"
    for answer in (hidden, unknown):
        token = parse_qs(urlsplit(answer.header("location")).query)["token"][0]
        assert jwt.decode(token, options={"verify_signature": False})["role"] == "invitee"

    url = f"http://127.0.0.1:3000/shops/{project.id}"
    services.projects().update(project, {"backoffice_url": url})
    published = api.get("/backoffice/sso", params={"project": project.id})
    token = parse_qs(urlsplit(published.header("location")).query)["token"][0]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["role"] == "invitee"  # no workspace role: the backoffice admits only whom it invited


def test_a_project_shared_with_the_workspace_gives_members_their_role(api, demo_user, project):
    services.projects().set_visibility(project, "workspace")
    member = services.accounts().create_user(email="m@example.com", password="member-password-1")
    services.accounts().add_collaborator(demo_user.default_workspace_id, member.id, role="admin")
    services.projects().update(project, {"backoffice_url": f"http://127.0.0.1:3000/shops/{project.id}"})
    sign_in(api, "m@example.com", "member-password-1")
    answer = api.get("/backoffice/sso", params={"project": project.id})
    token = parse_qs(urlsplit(answer.header("location")).query)["token"][0]
    assert jwt.decode(token, options={"verify_signature": False})["role"] == "admin"


def test_a_published_shop_opens_signed_in_at_its_hosted_backoffice(api, demo_user, project):
    url = f"http://127.0.0.1:3000/shops/{project.id}"
    services.projects().update(project, {"backoffice_url": url})
    sign_in(api)
    answer = api.get("/backoffice/sso", params={"project": project.id})
    assert answer.status == 303
    location = answer.header("location")
    assert location.startswith(f"{url}/auth/sso?")
    token = parse_qs(urlsplit(location).query)["token"][0]
    (public_key,) = services.handoff_keys().public_keys()
    claims = jwt.decode(token, public_key, algorithms=["EdDSA"], audience=url, issuer=ISSUER)
    assert (claims["sub"], claims["role"]) == ("demo@example.com", "owner")
    assert jwt.get_unverified_header(token)["kid"]


def test_signed_out_visitors_sign_in_first(api, project):
    answer = api.get("/backoffice/sso", params={"project": project.id})
    assert answer.status == 303
    assert answer.header("location").startswith("http://127.0.0.1:3000/login?next=")


def test_an_unexpected_failure_is_the_error_page_naming_the_request(api, app_env, project):
    from svc_shared.storage import keys
    from svc_shared.storage.dal import Table

    # A keyring item the code cannot read (no current key): the failure is logged, the browser gets a page.
    Table(app_env["TABLE_NAME"]).put({"pk": keys.HANDOFF_KEYS, "sk": keys.KEYRING, "version": 1})
    services.projects().update(project, {"backoffice_url": f"http://127.0.0.1:3000/shops/{project.id}"})
    sign_in(api)
    answer = api.get("/backoffice/sso", params={"project": project.id})
    assert_workspace_page(answer, 500)
    assert "An internal error occurred" in answer.text and "quote request" in answer.text


def test_the_hand_off_is_bound_to_the_browser_that_asked(api, demo_user, project):
    """The redirect gives this browser a cookie, sent only to the shop's /auth/sso for the token's minute,
    and the token names its digest: the shop lets in only a browser holding it (login CSRF)."""
    import hashlib

    url = f"http://127.0.0.1:3000/shops/{project.id}"
    services.projects().update(project, {"backoffice_url": url})
    sign_in(api)
    answer = api.get("/backoffice/sso", params={"project": project.id})
    (binding,) = [c for c in answer.headers_named("set-cookie") if c.startswith("svc_handoff=")]
    value = binding.split(";")[0].removeprefix("svc_handoff=")
    assert len(value) >= 40
    attributes = {part.strip().split("=")[0].lower(): part.strip() for part in binding.split(";")[1:]}
    assert attributes["path"] == f"Path=/shops/{project.id}/auth/sso"
    assert attributes["max-age"] == "Max-Age=60"
    assert "httponly" in attributes and attributes["samesite"].lower() == "samesite=lax"
    token = parse_qs(urlsplit(answer.header("location")).query)["token"][0]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["bnd"] == hashlib.sha256(value.encode()).hexdigest()
    assert (claims["acct"], claims["aep"]) == (demo_user.id, 0)


def test_a_backoffice_on_another_origin_gets_no_binding_cookie(api, demo_user, project):
    services.projects().update(project, {"backoffice_url": "https://shop.merchant.example/backoffice"})
    sign_in(api)
    answer = api.get("/backoffice/sso", params={"project": project.id})
    assert answer.status == 303
    assert not [c for c in answer.headers_named("set-cookie") if c.startswith("svc_handoff=")]


def test_sign_ins_are_limited_per_person_with_a_page_in_words(api, demo_user, project):
    from svc_shared.domain.handoff import SIGN_INS_PER_MINUTE

    services.projects().update(project, {"backoffice_url": f"http://127.0.0.1:3000/shops/{project.id}"})
    sign_in(api)
    for _ in range(SIGN_INS_PER_MINUTE):
        assert api.get("/backoffice/sso", params={"project": project.id}).status == 303
    refused = api.get("/backoffice/sso", params={"project": project.id})
    assert_workspace_page(refused, 429)
    assert int(refused.header("retry-after")) >= 1
    assert f"You opened backoffices more than {SIGN_INS_PER_MINUTE} times in a minute." in refused.text
    # Per person: someone else is not held back by it.
    services.accounts().create_user(email="o@example.com", password="other-password-1")
    sign_in(api, "o@example.com", "other-password-1")
    assert api.get("/backoffice/sso", params={"project": project.id}).status == 303  # an invitee hand-off
