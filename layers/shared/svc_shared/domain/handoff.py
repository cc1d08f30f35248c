"""Single sign-on into a project's backoffice: a 60-second EdDSA token the backoffice verifies with the
platform's public keys (it never holds a private one). Claims as backoffice/shared/svc_backoffice/access/handoff.py
expects: iss, aud (the backoffice URL), sub (email), role, iat, exp, jti; the header's `kid` names the signing
key (svc_shared.domain.handoff_keys)."""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.errors import Conflict, NotFound, RateLimited
from svc_shared.domain.accounts import Accounts, User
from svc_shared.domain.projects import Project, Projects

if TYPE_CHECKING:
    from svc_shared.domain.handoff_keys import HandoffKeys
    from svc_shared.storage.ratelimit import RateLimiter

ISSUER = "svc-platform"
LIFETIME = 60
# A workspace role becomes a backoffice role the first time its holder signs in there.
ROLE_BY_WORKSPACE_ROLE = {"owner": "owner", "admin": "admin", "member": "editor"}
# Anyone else signed in: the token vouches for the email only, and the backoffice lets the person in only if
# its staff invited that email (svc_backoffice/access/handoff.py).
INVITEE = "invitee"
# Hand-offs a person may ask for in a minute: opening backoffices by hand is a few; more is a script.
SIGN_INS_PER_MINUTE = 20
# The cookie binding a hand-off to the browser that asked for it (hosted shops, on the platform's origin):
# the token names its digest, the shop's /auth/sso compares (svc_backoffice.access.handoff).
BINDING_COOKIE = "svc_handoff"
# A project id (uuid4, as Projects makes them): the only ids a shop can be served under.
PROJECT_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def binding_digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


class NotPublished(Conflict, code="backoffice_not_published"):
    """The project's backoffice is served once the project is published; it is not yet."""

    def __init__(self, project: Project) -> None:
        super().__init__(say("handoff.not_published"))
        self.project = project


def public_key_pem(private_pem: str) -> str:
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(private_pem.encode(), password=None)
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def new_private_key_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return (
        Ed25519PrivateKey.generate()
        .private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        .decode()
    )


@dataclass(eq=False)
class Handoffs:
    projects: Projects
    accounts: Accounts
    clock: Clock
    keys: HandoffKeys
    limiter: RateLimiter | None = None

    def sign_in_url(
        self,
        user: User,
        project_id: str,
        next_path: str = "/",
        *,
        binding: str | None = None,
        hosted_base: str | None = None,
    ) -> str:
        """Where to send the user's browser: the backoffice's /auth/sso with a fresh token: the owner's and
        workspace members' roles when the project is visible to them (Projects.visible_to), anyone else as an
        invitee (the backoffice admits them if it invited them). A project not published yet is NotPublished
        for those who may see it; anyone else is sent to the shop's address under `hosted_base` (the
        platform's `/shops`) as if it were published there, whatever the project (NotFound without it). `binding`, the value of the
        cookie the route gives the browser, is named in the token by its digest; RateLimited past
        SIGN_INS_PER_MINUTE hand-offs of the user."""
        import jwt

        if self.limiter is not None:
            allowed, wait = self.limiter.take("backoffice-sso", user.id, 60, SIGN_INS_PER_MINUTE)
            if not allowed:
                raise RateLimited(
                    say("handoff.too_many", limit=SIGN_INS_PER_MINUTE, wait=wait), retry_after=wait
                )
        try:
            project: Project | None = self.projects.get(project_id)
        except NotFound:
            project = None
        # Who may see the project is the one rule of Projects.visible_to: a workspace member of a private
        # project is, here, anyone else.
        seen_as = self.projects.visible_to(user, project, self.accounts) if project is not None else None
        role = ROLE_BY_WORKSPACE_ROLE[seen_as] if seen_as is not None else INVITEE
        audience = project.extra.get("backoffice_url") if project is not None else None
        if not audience:
            if project is not None and role != INVITEE:
                raise NotPublished(project)
            # Anyone else goes where the platform would host the shop, whether the project exists, is
            # published or not; a shop that is not there answers as one that has not invited them.
            if hosted_base is None or not PROJECT_ID.fullmatch(project_id):
                raise NotFound(say("projects.not_found"))
            audience = f"{hosted_base.rstrip('/')}/{project_id}"
        kid, private_key = self.keys.signer()
        now = int(self.clock.now())
        token = jwt.encode(
            {
                "iss": ISSUER,
                "aud": audience,
                "sub": user.email,
                "role": role,
                "iat": now,
                "exp": now + LIFETIME,
                "jti": str(uuid.uuid4()),
                # The account and its session epoch: the hosted shop asks, on each request of the session
                # this makes, whether that account may still be there (svc_shared.domain.shops).
                "acct": user.id,
                "aep": user.session_epoch,
                **({"bnd": binding_digest(binding)} if binding is not None else {}),
            },
            private_key,
            algorithm="EdDSA",
            headers={"kid": kid},
        )
        return f"{audience}/auth/sso?{urlencode({'token': token, 'next': next_path})}"
