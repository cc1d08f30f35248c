"""The accounts function through real API Gateway proxy events."""

from svc_shared.domain.sessions import SESSION_COOKIE


def test_login_page_is_an_html_form(api):
    page = api.get("/login", params={"next": "/oauth/authorize?client_id=x"})
    assert page.status == 200
    assert page.header("content-type").startswith("text/html")
    assert '<form method="post" action="http://127.0.0.1:3000/login">' in page.text
    assert 'name="email"' in page.text and 'name="password"' in page.text
    assert 'value="/oauth/authorize?client_id=x"' in page.text
    assert page.header("x-frame-options") == "DENY"


def test_login_sets_a_session_cookie_and_redirects_to_next(api, demo_user):
    answer = api.post(
        "/login", form={"email": "demo@example.com", "password": "demo-password-1", "next": "/api/me"}
    )
    assert answer.status == 303
    assert answer.header("location") == "http://127.0.0.1:3000/api/me"
    cookie = answer.header("set-cookie")
    assert cookie.startswith(f"{SESSION_COOKIE}=")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # plain-HTTP loopback only
    me = api.get("/api/me")
    assert me.status == 200
    assert me.json()["email"] == "demo@example.com"
    assert me.json()["plan"] == "paid"
    assert "password_hash" not in me.json()


def test_login_to_an_absolute_next_stays_on_site(api, demo_user):
    answer = api.post(
        "/login",
        form={"email": "demo@example.com", "password": "demo-password-1", "next": "https://evil.example/"},
    )
    assert answer.header("location") == "http://127.0.0.1:3000/"


def test_wrong_password_shows_the_form_again_with_one_message(api, demo_user):
    wrong = api.post("/login", form={"email": "demo@example.com", "password": "not-it-at-all"})
    unknown = api.post("/login", form={"email": "who@example.com", "password": "not-it-at-all"})
    assert wrong.status == unknown.status == 401
    assert "Invalid email or password." in wrong.text
    assert "Invalid email or password." in unknown.text
    assert not wrong.headers_named("set-cookie")


def test_missing_fields_and_wrong_content_type_are_400(api):
    assert api.post("/login", form={"email": "a@example.com"}).status == 400
    answer = api.post("/login", json_body={"email": "a@example.com", "password": "x"})
    assert answer.status == 400
    assert "application/x-www-form-urlencoded" in answer.text


def test_sixth_failure_in_a_window_is_throttled_with_retry_after(api, demo_user):
    for _ in range(5):
        assert api.post("/login", form={"email": "demo@example.com", "password": "wrong-pass"}).status == 401
    limited = api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    assert limited.status == 429
    assert 0 < int(limited.header("retry-after")) <= 900
    assert "Too many sign-in attempts" in limited.text


def test_logout_revokes_the_session(api, demo_user):
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    stolen = dict(api.cookies)
    out = api.post("/logout")
    assert out.status == 303
    assert "Max-Age=0" in out.header("set-cookie")
    api.cookies = stolen  # the old cookie no longer works even if kept
    assert api.get("/api/me").status == 401


def test_me_without_a_session_is_401_json(api):
    answer = api.get("/api/me")
    assert answer.status == 401
    assert answer.json() == {"error": "not_signed_in", "message": "Sign in to continue."}


def test_tampered_session_cookie_is_rejected(api, demo_user):
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    value = api.cookies[SESSION_COOKIE]
    api.cookies[SESSION_COOKIE] = value[:-3] + ("AAA" if value[-3:] != "AAA" else "BBB")
    assert api.get("/api/me").status == 401


def test_workspaces_lists_the_personal_workspace(api, demo_user):
    api.post("/login", form={"email": "demo@example.com", "password": "demo-password-1"})
    spaces = api.get("/api/workspaces").json()["workspaces"]
    assert [(w["name"], w["role"], w["personal"], w["project_count"]) for w in spaces] == [
        ("Demo's workspace", "owner", True, 0)
    ]
    assert spaces[0]["created_at"].endswith("Z")
