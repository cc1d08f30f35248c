"""Integrations and the search-console connect flow (gsc/*: always dynamic, answered with no-store)."""

from __future__ import annotations

from svc_backoffice.domain import integrations as logic
from svc_backoffice.edge.api_router import ApiRouter

integrations = ApiRouter("/api/integrations", reader="admin", writer="admin")
integrations.lists(logic.list_integrations, summary="Integrations (secrets are write-only)")
integrations.creates(
    logic.create_integration, body="IntegrationCreate", also="409", summary="Add an integration"
)
integrations.updates(logic.update_integration, body="IntegrationUpdate", summary="Update an integration")
integrations.deletes(logic.delete_integration, summary="Remove an integration")

gsc = ApiRouter("/api/gsc")
gsc.connects(
    logic.gsc_connect,
    logic.gsc_callback,
    start_summary="Start the search-console OAuth flow (authorize URL with state and PKCE)",
    callback_summary="Search-console OAuth callback: exchange the code, store tokens encrypted",
)
gsc.serves(
    "GET",
    "/status",
    logic.gsc_status,
    role="admin",
    answers="200 302 500",
    summary="Search-console connection and verified sites",
)
gsc.serves(
    "POST",
    "/disconnect",
    logic.gsc_disconnect,
    role="admin",
    answers="200 302 500",
    summary="Revoke and forget the search-console tokens",
)

ROUTERS = (integrations, gsc)
