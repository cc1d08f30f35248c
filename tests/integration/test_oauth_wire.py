"""The OAuth endpoints' error answers (svc_shared.routes.oauth.wire): every refusal of the registration, token and
revocation endpoints is RFC 6749 §5.2 JSON with the endpoint's own code for a request it cannot read, the
status the table gives, and the headers a client relies on."""

from __future__ import annotations

import base64
import json

import pytest

REDIRECT = "http://127.0.0.1:33418/callback"
LIMIT = 64 * 1024


def _padded_json(body: dict, size: int) -> str:
    text = json.dumps(body)
    return text[:-1] + " " * (size - len(text)) + "}"


def _oauth_error(answer, status: int, code: str) -> str:
    assert answer.status == status, answer.text
    body = answer.json()
    assert set(body) == {"error", "error_description"}
    assert body["error"] == code
    assert answer.header("pragma") == "no-cache"
    assert answer.header("cache-control") == "no-store"
    return body["error_description"]


def test_a_registration_of_exactly_64_kib_is_accepted_and_one_byte_more_refused(api):
    metadata = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    at_limit = _padded_json(metadata, LIMIT)
    answer = api.post("/oauth/register", body=at_limit, headers={"Content-Type": "application/json"})
    assert answer.status == 201, answer.text
    over = _padded_json(metadata, LIMIT + 1)
    answer = api.post("/oauth/register", body=over, headers={"Content-Type": "application/json"})
    message = _oauth_error(answer, 400, "invalid_client_metadata")
    assert message == "client metadata must be at most 65536 bytes"


@pytest.mark.parametrize("path", ["/oauth/register", "/register"])
def test_registration_refuses_a_body_that_is_not_json_in_its_own_words(api, path):
    answer = api.post(path, body="redirect_uris=x", headers={"Content-Type": "text/plain"})
    assert _oauth_error(answer, 400, "invalid_client_metadata") == "Content-Type must be application/json"
    answer = api.post(path, body="{not json", headers={"Content-Type": "application/json"})
    assert _oauth_error(answer, 400, "invalid_client_metadata") == "Request body is not valid JSON."


@pytest.mark.parametrize("path", ["/oauth/token", "/token", "/oauth/revoke", "/revoke"])
def test_token_and_revocation_refuse_an_unreadable_body_as_invalid_request(api, path):
    over = "grant_type=refresh_token&refresh_token=" + "x" * LIMIT
    answer = api.post(path, body=over, headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert _oauth_error(answer, 400, "invalid_request") == "request body must be at most 65536 bytes"
    answer = api.post(path, body="{not json", headers={"Content-Type": "application/json"})
    assert _oauth_error(answer, 400, "invalid_request") == "Request body is not valid JSON."
    many = "&".join(f"f{i}=v" for i in range(101))
    answer = api.post(path, body=many, headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert _oauth_error(answer, 400, "invalid_request") == "Too many form fields."
    answer = api.post(path, body="token=x", headers={"Content-Type": "text/plain"})
    assert _oauth_error(answer, 400, "invalid_request") == (
        "Content-Type must be application/x-www-form-urlencoded or application/json"
    )


def test_a_token_request_of_exactly_64_kib_is_read(api):
    form = "grant_type=refresh_token&client_id=nope&refresh_token="
    at_limit = form + "x" * (LIMIT - len(form))
    answer = api.post(
        "/oauth/token", body=at_limit, headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert _oauth_error(answer, 401, "invalid_client") == "unknown client_id"


def test_a_failed_basic_authentication_is_challenged_and_a_body_one_is_not(api):
    form = {"grant_type": "refresh_token", "refresh_token": "x"}
    basic = base64.b64encode(b"nope:secret").decode()
    challenged = api.post("/oauth/token", form=form, headers={"Authorization": f"Basic {basic}"})
    _oauth_error(challenged, 401, "invalid_client")
    assert challenged.header("www-authenticate") == 'Basic realm="svc"'
    plain = api.post("/oauth/token", form={**form, "client_id": "nope", "client_secret": "secret"})
    _oauth_error(plain, 401, "invalid_client")
    assert plain.header("www-authenticate") is None


def test_protocol_errors_keep_their_rfc_code(api):
    client = api.post(
        "/oauth/register", json_body={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    ).json()
    answer = api.post("/oauth/token", form={"grant_type": "password", "client_id": client["client_id"]})
    _oauth_error(answer, 400, "unsupported_grant_type")
    answer = api.post(
        "/oauth/token",
        form={
            "grant_type": "authorization_code",
            "client_id": client["client_id"],
            "code": "c",
            "code_verifier": "v",
        },
    )
    assert _oauth_error(answer, 400, "invalid_grant") == "code is invalid, expired, or already used"
    answer = api.post(
        "/oauth/revoke", form={"client_id": client["client_id"], "token": "t", "token_type_hint": "x"}
    )
    _oauth_error(answer, 400, "unsupported_token_type")
