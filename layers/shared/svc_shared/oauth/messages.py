"""The OAuth messages that reach the authorization server, as pydantic models parsed at the edge: client
registration metadata (RFC 7591 §2), token requests (RFC 6749 §4.1.3, §6), revocation requests (RFC 7009 §2.1).

A wrong field is an OAuthError with the RFC's error code for that message and a description naming the field
(the texts MCP clients and the spec expect, e.g. "redirect_uris is required: a non-empty array of strings").
Unknown fields are ignored, as the RFCs ask. What needs storage (a code, a refresh token, a client) is checked
by the domain modules.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from svc_shared.core.catalogue import say
from svc_shared.oauth.errors import OAuthError
from svc_shared.oauth.metadata import AUTH_METHODS, SCOPE

MAX_REDIRECT_URIS = 10
MAX_URI_LENGTH = 2000
MAX_NAME_LENGTH = 200
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1"}


# RFC 3986 §2: the characters a URI may hold (unreserved, reserved, and `%` of an escape), less `;`, which
# some servers read as a path parameter delimiter and so could make one URI mean two places.
_URI_CHARACTERS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,=%]*")
_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_HOST = re.compile(r"[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?")


def redirect_uri_problem(uri: object) -> str | None:
    """Why a redirect URI cannot be registered (None if it can): HTTPS with a host name, or plain HTTP on a
    loopback host with any port; never a fragment, user info, `;` or a character outside RFC 3986 (OAuth 2.1
    §2.3.1, RFC 7591 §2). The same rule holds for registrations and client metadata documents."""
    from urllib.parse import urlsplit

    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI_LENGTH:
        return say("oauth.redirect_must_be_https")
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError:
        return say("oauth.redirect_must_be_https")
    if "#" in uri or not parts.hostname:
        return say("oauth.redirect_must_be_https")
    if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS):
        return say("oauth.redirect_must_be_https")
    if not _URI_CHARACTERS.fullmatch(uri) or _ESCAPE.search(uri) or "@" in parts.netloc:
        return say("oauth.redirect_uri_characters")
    if "[" in uri or "]" in uri:  # only around the IPv6 loopback host
        if (
            parts.hostname != "::1"
            or uri.count("[") != 1
            or uri.count("]") != 1
            or "[::1]" not in parts.netloc
        ):
            return say("oauth.redirect_uri_characters")
    elif not _HOST.fullmatch(parts.hostname):
        return say("oauth.redirect_uri_characters")
    return None


def redirect_uris_problem(uris: list[Any]) -> str | None:
    """Why a client's list of redirect URIs cannot be registered (None if it can): at most MAX_REDIRECT_URIS,
    each one as redirect_uri_problem says. For registrations and client metadata documents alike."""
    if len(uris) > MAX_REDIRECT_URIS:
        return say("oauth.too_many_redirect_uris", max_uris=MAX_REDIRECT_URIS)
    return next((p for p in map(redirect_uri_problem, uris) if p is not None), None)


def _refuse(message: str, code: str = "") -> PydanticCustomError:
    """A field's own check failed: `message` is the description, `code` the RFC error if not the field's."""
    return PydanticCustomError("oauth", message, {"code": code})


class OAuthMessage(BaseModel):
    """Base of an incoming OAuth message. `error_code` is the RFC error for a wrong field (`field_codes` per
    field where it differs); `field_messages` gives the description of a field whose own check did not."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    error_code: ClassVar[str] = "invalid_request"
    field_codes: ClassVar[dict[str, str]] = {}
    field_messages: ClassVar[dict[str, Callable[[], str]]] = {}


M = TypeVar("M", bound=OAuthMessage)
AuthMethod = Literal["none", "client_secret_basic", "client_secret_post"]  # metadata.AUTH_METHODS
GrantType = Literal["authorization_code", "refresh_token"]  # metadata.GRANT_TYPES


def _every_grant() -> list[GrantType]:
    return ["authorization_code", "refresh_token"]


def _code_only() -> list[Literal["code"]]:
    return ["code"]


def parse(model: type[M], data: Any) -> M:
    """`data` as `model`, or the OAuthError for its first wrong field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors(include_url=False, include_input=False)[0]
        field = str(problem["loc"][0]) if problem["loc"] else ""
        code = model.field_codes.get(field, model.error_code)
        if problem["type"] == "oauth":
            message = problem["msg"]
            code = (problem.get("ctx") or {}).get("code") or code
        else:
            own = model.field_messages.get(field)
            message = (
                own() if own else say("oauth.field_invalid", field=field or "body", problem=problem["msg"])
            )
        raise OAuthError(code, message) from None


class ClientMetadata(OAuthMessage):
    """A dynamic client registration request (RFC 7591 §2)."""

    error_code: ClassVar[str] = "invalid_client_metadata"
    field_codes: ClassVar[dict[str, str]] = {"redirect_uris": "invalid_redirect_uri"}
    field_messages: ClassVar[dict[str, Callable[[], str]]] = {
        "redirect_uris": lambda: say("oauth.redirect_uris_required"),
        "token_endpoint_auth_method": lambda: say(
            "oauth.auth_method_invalid", methods=", ".join(AUTH_METHODS)
        ),
        "grant_types": lambda: say("oauth.grant_types_invalid"),
        "response_types": lambda: say("oauth.response_types_invalid"),
        "scope": lambda: say("oauth.scope_must_be", scope=SCOPE),
        "client_name": lambda: say("oauth.client_name_invalid", max_length=MAX_NAME_LENGTH),
    }

    redirect_uris: list[Any]
    # RFC 7591's default; MCP clients send none.
    token_endpoint_auth_method: AuthMethod = "client_secret_basic"  # noqa: S105 - a method's name
    grant_types: list[GrantType] = Field(default_factory=_every_grant, min_length=1)
    response_types: list[Literal["code"]] = Field(default_factory=_code_only, min_length=1, max_length=1)
    scope: str = SCOPE
    client_name: str | None = Field(default=None, max_length=MAX_NAME_LENGTH)

    @field_validator("redirect_uris")
    @classmethod
    def _redirect_uris(cls, uris: list[Any]) -> list[str]:
        if not uris:
            raise _refuse(cls.field_messages["redirect_uris"]())
        problem = redirect_uris_problem(uris)
        if problem is not None:
            raise _refuse(problem)
        return list(dict.fromkeys(uris))

    @field_validator("scope")
    @classmethod
    def _scope(cls, scope: str) -> str:
        if set(scope.split()) - {SCOPE}:
            raise _refuse(cls.field_messages["scope"]())
        return SCOPE

    @field_validator("client_name")
    @classmethod
    def _name(cls, name: str | None) -> str | None:
        return name.strip() or None if name is not None else None


class AuthorizationQuery(OAuthMessage):
    """The query of an authorization request (RFC 6749 §4.1.1, PKCE RFC 7636 §4.3, RFC 8707). Every member is
    optional here: which are missing or wrong decides where the error goes (a page while the client and
    redirect URI are not trusted, a redirect after), so authorize.check_request checks them in that order."""

    client_id: str | None = None
    redirect_uri: str | None = None
    response_type: str | None = None
    state: str | None = None
    code_challenge: str | None = None
    code_challenge_method: str | None = None
    scope: str | None = None
    resource: str | None = None


class ClientCredentials(OAuthMessage):
    """How a client identifies itself in the body of a token or revocation request (RFC 6749 §2.3.1); HTTP
    Basic credentials come in the Authorization header instead."""

    client_id: str | None = None
    client_secret: str | None = None


class TokenRequest(ClientCredentials):
    """A token request: the authorization code grant or a refresh (RFC 6749 §4.1.3, §6; RFC 8707 resource)."""

    field_codes: ClassVar[dict[str, str]] = {"grant_type": "unsupported_grant_type"}
    field_messages: ClassVar[dict[str, Callable[[], str]]] = {
        "grant_type": lambda: say("oauth.grant_type_invalid")
    }

    grant_type: GrantType = Field(default=None, validate_default=True)
    code: str | None = None
    code_verifier: str | None = None
    redirect_uri: str | None = None
    refresh_token: str | None = None
    resource: str | None = None
    scope: str | None = None

    @field_validator("grant_type", mode="before")
    @classmethod
    def _grant_type(cls, value: Any) -> Any:
        if value is None or value == "":
            raise _refuse(say("oauth.grant_type_required"), "invalid_request")
        return value


class RevocationRequest(ClientCredentials):
    """A revocation request (RFC 7009 §2.1)."""

    field_codes: ClassVar[dict[str, str]] = {"token_type_hint": "unsupported_token_type"}
    field_messages: ClassVar[dict[str, Callable[[], str]]] = {
        "token": lambda: say("oauth.token_required"),
        "token_type_hint": lambda: say("oauth.token_type_hint_invalid"),
    }

    token_type_hint: Literal["access_token", "refresh_token"] | None = None
    token: str = Field(min_length=1)
