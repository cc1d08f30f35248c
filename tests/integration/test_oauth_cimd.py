"""Client ID Metadata Documents: an MCP client whose client_id is the URL of its metadata document, served by
its own web server on loopback (local mode), through the real authorization and token endpoints."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from docserver import DocumentServer, Reply, TestAuthority
from test_oauth import REDIRECT, authorize_params, exchange, pkce, refresh, sign_in

from svc_shared.oauth.documents import MAX_DOCUMENT_BYTES, address_allowed, cache_seconds, check_url
from svc_shared.storage import keys
from svc_shared.wiring import services

# What a signed-in person reads about a document that cannot be used: fixed words, then a reason chosen by the
# server; never the client_id URL the query carried.
REFUSED = "This app's client metadata document cannot be used: "


@pytest.fixture
def local_mode(app_env, monkeypatch):
    monkeypatch.setenv("CIMD_ALLOW_LOOPBACK", "true")
    services.wire()


@pytest.fixture
def docs():
    with DocumentServer() as server:
        yield server


def authorize_page(api, client_id, challenge, **extra):
    return api.get("/oauth/authorize", params=authorize_params(client_id, challenge, **extra))


def allow(api, page):
    token = re.search(r'name="consent_token" value="([^"]+)"', page.text).group(1)
    answer = api.post("/oauth/authorize", form={"consent_token": token, "decision": "allow"})
    assert answer.status == 302, answer.text
    return parse_qs(urlsplit(answer.header("location")).query)["code"][0]


def page_error(page) -> str:
    return html.unescape(re.search(r'role="alert">([^<]*)<', page.text).group(1))


def test_metadata_offers_client_id_metadata_documents(api, app_env):
    assert api.get("/.well-known/oauth-authorization-server").json()["client_id_metadata_document_supported"]


def test_a_document_client_authorizes_exchanges_and_refreshes_with_one_fetch(
    api, demo_user, local_mode, docs, clock
):
    url = docs.document("/oauth/client.json", client_name="Loopback Agent")
    sign_in(api)
    verifier, challenge = pkce()
    page = authorize_page(api, url, challenge)
    assert page.status == 200, page.text
    # The consent screen names the client and the host that vouches for it.
    assert "Allow Loopback Agent to use your account?" in page.text
    assert "Identified by <strong>127.0.0.1</strong>" in page.text
    code = allow(api, page)
    tokens = exchange(api, url, code, verifier)
    assert tokens.status == 200, tokens.text
    renewed = refresh(api, url, tokens.json()["refresh_token"])
    assert renewed.status == 200, renewed.text
    # Consent page, decision, code exchange and refresh: the document was fetched once (max-age=300).
    assert docs.hits["/oauth/client.json"] == 1
    # The workspace names the client without fetching anything.
    listed = services.mcp_clients().list(demo_user.id)
    assert [c.client_name for c in listed] == ["Loopback Agent"]


def test_a_stale_document_is_fetched_again_and_its_changes_apply(api, demo_user, local_mode, docs, clock):
    url = docs.document("/c.json")
    sign_in(api)
    _, challenge = pkce()
    assert authorize_page(api, url, challenge).status == 200
    clock.advance(301)
    services.wire(clock=clock)  # a new instance: nothing in its memory, the stored copy is stale
    docs.document("/c.json", redirect_uris=["http://127.0.0.1:40000/other"])
    page = authorize_page(api, url, challenge)
    assert page.status == 400
    assert page_error(page) == "redirect_uri does not match any registered redirect URI."
    assert docs.hits["/c.json"] == 2


def test_no_store_means_every_use_fetches_again(api, demo_user, local_mode, docs):
    url = docs.document("/fresh.json")
    docs.replies["/fresh.json"].headers = {"Cache-Control": "no-store"}
    sign_in(api)
    verifier, challenge = pkce()
    code = allow(api, authorize_page(api, url, challenge))
    assert exchange(api, url, code, verifier).status == 200
    assert docs.hits["/fresh.json"] == 3


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (
            {"client_id": "https://elsewhere.example/client.json"},
            "its client_id must be exactly the URL it is served from",
        ),
        ({"redirect_uris": []}, "redirect_uris is required: a non-empty array of strings"),
        (
            {"redirect_uris": ["http://attacker.example/cb"]},
            "redirect_uris must be https URLs (or http://localhost for native clients)",
        ),
        (
            {"redirect_uris": ["https://claude.ai@evil.example/cb"]},
            "redirect_uris must not contain user info (user@host), a fragment, ';', or characters outside RFC 3986",
        ),
        (
            {"redirect_uris": ["https://evil.example/cb;jsessionid=1"]},
            "redirect_uris must not contain user info (user@host), a fragment, ';', or characters outside RFC 3986",
        ),
        (
            {"token_endpoint_auth_method": "client_secret_basic"},
            "token_endpoint_auth_method must be none (a public document cannot carry a shared secret)",
        ),
        ({"grant_types": ["client_credentials"]}, "grant_types must include authorization_code"),
        ({"client_name": 42}, "client_name must be a string of at most 200 characters"),
    ],
)
def test_a_document_that_does_not_hold_is_refused_on_the_page(
    api, demo_user, local_mode, docs, change, reason
):
    url = docs.document("/bad.json", **change)
    sign_in(api)
    _, challenge = pkce()
    page = authorize_page(api, url, challenge)
    assert page.status == 400
    assert page_error(page) == f"{REFUSED}{reason}."
    # Never a redirect to a URI the document did not vouch for.
    assert page.header("location") is None


# Words an attacker puts in a client_id URL, hoping the consent page repeats them to the person signed in.
BAIT = "Support-says-your-account-is-locked-call-0800-555-0100"


def test_the_consent_page_never_repeats_the_client_id_url_of_the_query(api, demo_user, local_mode, docs):
    sign_in(api)
    _, challenge = pkce()
    # An invalid document: a fixed message, without the URL.
    broken = docs.serve(f"/{BAIT}/bad.json", {"client_id": "https://elsewhere.example/c.json"})
    page = authorize_page(api, broken, challenge)
    assert page.status == 400
    assert page_error(page) == f"{REFUSED}its client_id must be exactly the URL it is served from."
    assert BAIT not in html.unescape(page.text)
    page = authorize_page(api, f"{broken}?note={BAIT}-2", challenge)  # nothing served there
    assert page_error(page) == f"{REFUSED}the document URL answered HTTP 404."
    assert BAIT not in html.unescape(page.text)
    # A valid one: only what the document says (its name) and the hosts (its own and the redirect's).
    url = docs.document(f"/{BAIT}/client.json", client_name="Path Agent")
    page = authorize_page(api, url, challenge)
    assert page.status == 200, page.text
    assert "Allow Path Agent to use your account?" in page.text
    assert "Identified by <strong>127.0.0.1</strong>" in page.text
    assert "<code>127.0.0.1:33418</code>" in page.text
    assert BAIT not in page.text


def test_the_redirect_uri_must_be_one_the_document_lists_exactly(api, demo_user, local_mode, docs):
    url = docs.document("/exact.json")
    sign_in(api)
    _, challenge = pkce()
    page = authorize_page(api, url, challenge, redirect_uri=REDIRECT + "/")
    assert page.status == 400
    assert page_error(page) == "redirect_uri does not match any registered redirect URI."


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (
            Reply(status=302, headers={"Location": "/elsewhere.json"}),
            "the document URL answered with a redirect; it must serve the document itself",
        ),
        (Reply(status=404, body={}), "the document URL answered HTTP 404"),
        (
            Reply(raw=b"{" + b" " * MAX_DOCUMENT_BYTES + b"}"),
            f"the document is larger than {MAX_DOCUMENT_BYTES} bytes",
        ),
        (Reply(raw=b"<html>not json</html>"), "the document is not JSON"),
        (Reply(body=["a", "list"]), "the document must be a JSON object"),
        (Reply(body={}, delay=4), "the document URL did not answer in time"),
    ],
)
def test_fetch_failures_are_refused_with_the_reason(api, demo_user, local_mode, docs, reply, reason):
    docs.serve("/elsewhere.json", {"client_id": "x"})
    url = docs.serve("/doc.json", reply)
    sign_in(api)
    _, challenge = pkce()
    page = authorize_page(api, url, challenge)
    assert page.status == 400
    assert page_error(page) == f"{REFUSED}{reason}."
    assert docs.hits.get("/elsewhere.json", 0) == 0  # redirects are not followed


def test_deployed_the_server_never_fetches_from_loopback(api, demo_user, docs):
    url = docs.document("/client.json")
    sign_in(api)
    _, challenge = pkce()
    page = authorize_page(api, url, challenge)
    assert page.status == 400
    assert page_error(page) == f"{REFUSED}the client_id URL must use https."
    https_url = url.replace("http://", "https://")
    page = authorize_page(api, https_url, challenge)
    assert page_error(page) == (f"{REFUSED}its host name resolves to an address that is not public.")
    named = https_url.replace("127.0.0.1", "localhost")
    page = authorize_page(api, named, challenge)
    assert page_error(page) == f"{REFUSED}its host name resolves to an address that is not public."
    assert docs.hits == {}


def test_https_documents_are_fetched_only_over_a_verified_connection(
    api, demo_user, local_mode, tmp_path, monkeypatch
):
    authority = TestAuthority(tmp_path / "tls")
    sign_in(api)
    verifier, challenge = pkce()
    with DocumentServer(tls=authority) as server:
        url = server.document("/client.json", host="localhost", client_name="TLS Agent")
        page = authorize_page(api, url, challenge)
        assert page_error(page) == (
            f"{REFUSED}the document URL could not be reached over a verified connection."
        )
        # Trusted (as a developer's machine trusts its own authority), the same URL works; the TLS name is
        # the host's even though the connection goes to the checked address.
        monkeypatch.setenv("SSL_CERT_FILE", str(authority.ca_file))
        services.wire()
        page = authorize_page(api, url, challenge)
        assert "Allow TLS Agent to use your account?" in page.text
        assert exchange(api, url, allow(api, page), verifier).status == 200


def test_the_token_endpoint_says_only_invalid_client_for_a_document_it_cannot_use(
    api, demo_user, local_mode, docs
):
    url = docs.document("/gone.json")
    sign_in(api)
    verifier, challenge = pkce()
    code = allow(api, authorize_page(api, url, challenge))
    docs.replies["/gone.json"] = Reply(status=410, body={})
    services.wire()  # another instance, and the stored copy is stale
    services.current().table.update(keys.oauth_client(url), keys.CLIENT, set={"fresh_until": 0})
    answer = exchange(api, url, code, verifier)
    assert answer.status == 401
    assert answer.json() == {
        "error": "invalid_client",
        "error_description": "the client's metadata document cannot be used",
    }


@pytest.mark.parametrize("loopback", [True, False], ids=["loopback-allowed", "default"])
def test_an_anonymous_authorize_learns_nothing_of_what_a_fetch_found(
    api, app_env, docs, monkeypatch, loopback
):
    """The attack: with the local defaults, a request that is not signed in named loopback URLs as client_id
    and read on the page what each answered (a status, "not JSON", ...). Now it reads only "invalid client"."""
    monkeypatch.setenv("CIMD_ALLOW_LOOPBACK", "true" if loopback else "false")
    services.wire()
    _, challenge = pkce()
    docs.replies["/admin"] = Reply(status=403, body={"secret": "internal-admin-panel"})
    docs.document("/wrong.json", client_id="https://elsewhere.example/x.json", client_name="Leaky <b>")
    answers = [
        authorize_page(api, docs.url(path), challenge) for path in ("/admin", "/wrong.json", "/missing")
    ]
    answers.append(authorize_page(api, "https://client.invalid/oauth/metadata.json", challenge))
    for page in answers:
        assert page.status == 400
        assert page_error(page) == (
            "Invalid client: this client_id cannot be used. Sign in, then start again from your app to see why."
        )
        for leak in ("403", "404", "internal-admin-panel", "Leaky", "elsewhere", "resolve", "https", "JSON"):
            assert leak not in page.text


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("93.184.215.14", True),
        ("2606:4700::1111", True),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("127.0.0.1", False),
        ("169.254.169.254", False),  # the instance metadata service
        ("100.64.0.1", False),  # shared address space
        ("0.0.0.0", False),  # noqa: S104 - an address refused, not bound
        ("::1", False),
        ("fe80::1", False),
        ("fd00::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("224.0.0.1", False),
    ],
)
def test_only_public_addresses_are_fetched(address, allowed):
    assert address_allowed(address, allow_loopback=False) is allowed


def test_local_mode_adds_loopback_and_nothing_else():
    assert address_allowed("127.0.0.1", allow_loopback=True)
    assert address_allowed("::1", allow_loopback=True)
    assert not address_allowed("10.0.0.1", allow_loopback=True)
    assert not address_allowed("169.254.169.254", allow_loopback=True)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://example.com", "the client_id URL must have a path, without . or .. segments"),
        ("https://example.com/", "the client_id URL must have a path, without . or .. segments"),
        ("https://example.com/a/../b.json", "the client_id URL must have a path, without . or .. segments"),
        ("https://example.com/c.json#frag", "the client_id URL must not have a fragment"),
        (
            "https://user:pw@example.com/c.json",
            "the client_id URL must name a host, without user or password",
        ),
        ("http://example.com/c.json", "the client_id URL must use https"),
        ("https://example.com/" + "a" * 500, "the client_id URL must be at most 500 characters"),
        ("https://example.com:99999/c.json", "the client_id is not a valid URL"),
    ],
)
def test_client_id_urls_follow_the_drafts_rules(url, reason):
    from svc_shared.oauth.documents import DocumentError

    with pytest.raises(DocumentError) as refused:
        check_url(url, allow_loopback=False)
    assert refused.value.reason == reason


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        (None, 300),
        ("max-age=60", 60),
        ("public, max-age=7200", 7200),
        ("max-age=9999999", 86400),
        ("no-store", 0),
        ("no-cache, max-age=600", 0),
        ("private", 300),
    ],
)
def test_cache_control_sets_how_long_a_document_is_reused(header, seconds):
    assert cache_seconds(header) == seconds


def test_a_client_id_url_of_the_longest_allowed_length_gets_tokens_mcp_accepts(
    api, demo_user, local_mode, docs
):
    origin = docs.url("")
    url = docs.document("/" + "c" * (500 - len(origin) - len("/.json")) + ".json")
    assert len(url) == 500
    sign_in(api)
    verifier, challenge = pkce()
    code = allow(api, authorize_page(api, url, challenge))
    tokens = exchange(api, url, code, verifier)
    assert tokens.status == 200, tokens.text
    answer = api.post(
        "/mcp",
        body='{"jsonrpc":"2.0","id":1,"method":"ping"}',
        headers={
            "Authorization": f"Bearer {tokens.json()['access_token']}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    assert answer.status == 200, answer.text


def test_a_host_that_does_not_resolve_is_refused_in_fixed_words(api, demo_user):
    sign_in(api)
    _, challenge = pkce()
    url = "https://client.invalid/oauth/metadata.json"
    page = authorize_page(api, url, challenge)
    assert page.status == 400
    assert page_error(page) == (f"{REFUSED}its host name could not be resolved.")
