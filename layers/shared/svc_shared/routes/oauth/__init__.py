"""The authorization server's routes, one router per endpoint group; `ROUTERS` is what functions/oauth/app.py
serves. The SDKs fall back to /register, /authorize, /token and /revoke at the server's origin when they hold
no metadata (for example after a restart with stored tokens), so those paths answer too."""

from __future__ import annotations

from svc_shared.routes.oauth import consent, discovery, register, tokens

ROUTERS = (discovery.router, register.router, consent.router, tokens.router)
