"""Discovery documents: authorization server (RFC 8414) and protected resource (RFC 9728) metadata."""

from __future__ import annotations

from typing import Any

from svc_shared.core.catalogue import say

SCOPE = "mcp:all"
AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
GRANT_TYPES = ("authorization_code", "refresh_token")


def issuer(base_url: str) -> str:
    return base_url


def resource_url(base_url: str) -> str:
    """The protected resource: the public /mcp URL, exactly as clients use it."""
    return f"{base_url}/mcp"


def resource_metadata_url(base_url: str) -> str:
    return f"{base_url}/.well-known/oauth-protected-resource/mcp"


def authorization_server(base_url: str) -> dict[str, Any]:
    return {
        "issuer": issuer(base_url),
        "authorization_endpoint": f"{base_url}/oauth/authorize",
        "token_endpoint": f"{base_url}/oauth/token",
        "registration_endpoint": f"{base_url}/oauth/register",
        "revocation_endpoint": f"{base_url}/oauth/revoke",
        "revocation_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "scopes_supported": [SCOPE],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": list(GRANT_TYPES),
        "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
        # A client may use the https URL of its metadata document as its client_id (no registration).
        "client_id_metadata_document_supported": True,
    }


def protected_resource(base_url: str) -> dict[str, Any]:
    return {
        "resource": resource_url(base_url),
        "authorization_servers": [issuer(base_url)],
        "scopes_supported": [SCOPE],
        "bearer_methods_supported": ["header"],
        "resource_name": "svc MCP tool server",
    }


def www_authenticate(base_url: str, *, token_sent: bool, insufficient_scope: str | None = None) -> str:
    """The challenge /mcp answers a missing or bad token with (or, with `insufficient_scope`, a token that
    does not allow the call: RFC 6750 §3.1, naming the scope to ask for)."""
    # resource_metadata is what MCP clients follow; the token endpoint is named too, as the spec asks.
    parts = [
        f'resource_metadata="{resource_metadata_url(base_url)}"',
        f'scope="{insufficient_scope or SCOPE}"',
        f'token_endpoint="{base_url}/oauth/token"',
    ]
    if insufficient_scope:
        parts.append('error="insufficient_scope"')
        parts.append(f'error_description="{say("oauth.token_lacks_scope")}"')
    elif token_sent:
        parts.append('error="invalid_token"')
        parts.append(f'error_description="{say("oauth.token_invalid")}"')
    return "Bearer " + ", ".join(parts)
