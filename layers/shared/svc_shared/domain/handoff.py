"""Single sign-on into a project's backoffice: a 60-second EdDSA token the backoffice verifies with the
platform's public keys (it never holds a private one). Claims as backoffice/shared/svc_backoffice/access/handoff.py
expects: iss, aud (the backoffice URL), sub (email), role, iat, exp, jti; the header's `kid` names the signing
key (svc_shared.domain.handoff_keys)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from svc_shared.core.catalogue import say
from svc_shared.core.clock import Clock
from svc_shared.core.errors import Conflict, NotFound
from svc_shared.domain.accounts import Accounts, User
from svc_shared.domain.projects import Project, Projects

if TYPE_CHECKING:
    from svc_shared.domain.handoff_keys import HandoffKeys

ISSUER = "svc-platform"
LIFETIME = 60
# A workspace role becomes a backoffice role the first time its holder signs in there.
ROLE_BY_WORKSPACE_ROLE = {"owner": "owner", "admin": "admin", "member": "editor"}
# Anyone else signed in: the token vouches for the email only, and the backoffice lets the person in only if
# its staff invited that email (svc_backoffice/access/handoff.py).
INVITEE = "invitee"


class NotPublished(Conflict):
    """The project's backoffice is served once the project is published; it is not yet."""

    code = "backoffice_not_published"

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


class Handoffs:
    def __init__(self, projects: Projects, accounts: Accounts, clock: Clock, keys: HandoffKeys) -> None:
        self._projects = projects
        self._accounts = accounts
        self._clock = clock
        self._keys = keys

    def sign_in_url(self, user: User, project_id: str, next_path: str = "/") -> str:
        """Where to send the user's browser: the backoffice's /auth/sso with a fresh token: the owner's and
        workspace members' roles when the project is visible to them (Projects.visible_to), anyone else as an
        invitee (the backoffice admits them if it invited them). A project not published yet is NotPublished
        for those who may see it, NotFound (as an unknown id) for anyone else."""
        import jwt

        project = self._projects.get(project_id)
        # Who may see the project is the one rule of Projects.visible_to: a workspace member of a private
        # project is, here, anyone else.
        seen_as = self._projects.visible_to(user, project, self._accounts)
        role = ROLE_BY_WORKSPACE_ROLE[seen_as] if seen_as is not None else INVITEE
        audience = project.extra.get("backoffice_url")
        if not audience:
            if role == INVITEE:
                raise NotFound(say("projects.not_found"))
            raise NotPublished(project)
        kid, private_key = self._keys.signer()
        now = int(self._clock.now())
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
            },
            private_key,
            algorithm="EdDSA",
            headers={"kid": kid},
        )
        return f"{audience}/auth/sso?{urlencode({'token': token, 'next': next_path})}"
