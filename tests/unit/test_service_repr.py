"""A domain service's repr names what it is built from, never the keys, secrets or clients it holds: a service
printed in a log line or an error message must not carry them."""

from __future__ import annotations

from typing import Any

import pytest

from svc_shared.core.clock import FrozenClock
from svc_shared.core.metrics import Metrics
from svc_shared.domain.accounts import Accounts
from svc_shared.domain.connections import Connections, ProviderApp
from svc_shared.domain.integrations import Integrations
from svc_shared.domain.projects import Projects
from svc_shared.domain.provisioning import Provisioning
from svc_shared.domain.publish_stages import Adapters, PublishStages
from svc_shared.domain.publish_state import PublishRecord
from svc_shared.domain.publishing import Publisher
from svc_shared.domain.workbench import Workbench
from svc_shared.oauth.grants import Grants
from svc_shared.storage.dal import Table
from svc_shared.storage.ratelimit import RateLimiter

LEAK = "LEAKED"


class _Secret:
    """Stands for a key, an envelope or a client: its repr is what a leak would print."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{LEAK} {self.name}>"

    def __call__(self, *args: object) -> _Secret:  # a factory hands out the secret itself
        return self


CLOCK = FrozenClock()
TABLE = Table("app")
ACCOUNTS = Accounts(TABLE, CLOCK)
PROJECTS = Projects(TABLE, CLOCK)


def _connections() -> Connections:
    app = ProviderApp(oauth=None, client_id="client-id", client_secret=f"{LEAK}-client-secret")
    return Connections(
        Table("tokens"),
        _Secret("envelope"),  # type: ignore[arg-type]
        ACCOUNTS,
        {"repo_host": app},
        state_key=f"{LEAK}-state-key".encode(),
        redirect_uri=lambda: "https://svc.example.com/api/oauth/callback",
        clock=CLOCK,
        repo_host_api=print,  # type: ignore[arg-type]
    )


def _services() -> dict[str, Any]:
    connections = _connections()
    return {
        "Connections": connections,
        "Integrations": Integrations(
            PROJECTS,
            connections,
            RateLimiter(TABLE, CLOCK),
            _Secret("envelope"),  # type: ignore[arg-type]
            CLOCK,
            repo_host=print,  # type: ignore[arg-type]
            db_host=print,  # type: ignore[arg-type]
        ),
        "Publisher": Publisher(
            PublishStages(
                PublishRecord(PROJECTS, CLOCK),
                connections,
                _Secret("envelope"),  # type: ignore[arg-type]
                CLOCK,
                Adapters(repo_host=print, db_host=print, static_host=print),  # type: ignore[arg-type]
            )
        ),
        "Workbench": Workbench(
            TABLE,
            PROJECTS,
            ACCOUNTS,
            connections,
            CLOCK,
            repo_host=print,  # type: ignore[arg-type]
            static_host=print,  # type: ignore[arg-type]
            builder=_Secret("builder with its API key"),  # type: ignore[arg-type]
            s3=_Secret("s3 client"),
            bucket="uploads",
        ),
        "Provisioning": Provisioning(
            PROJECTS,
            CLOCK,
            sfn=_Secret("stepfunctions client"),
            state_machine_arn="arn:aws:states:us-east-1:000000000000:stateMachine:publish",
            metrics=Metrics("test"),
        ),
        "Grants": Grants(
            TABLE,
            CLOCK,
            "https://svc.example.com/mcp",
            _Secret("access-token key"),  # type: ignore[arg-type]
            grace_seconds=30,
        ),
    }


@pytest.mark.parametrize("name", sorted(_services()))
def test_the_repr_of_a_service_holds_no_secret(name):
    text = repr(_services()[name])
    assert text.startswith(f"{name}(")  # it still says what the service is made of
    assert LEAK not in text


def test_the_repr_shows_the_settings_that_are_not_secret():
    services = _services()
    assert "bucket='uploads'" in repr(services["Workbench"])
    assert "grace_seconds=30" in repr(services["Grants"])
    assert "Connections(tokens=" in repr(services["Integrations"])  # its collaborators, their secrets hidden
