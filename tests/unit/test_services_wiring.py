"""The services object is the container's wiring: tests hand it a clock and settings instead of patching globals."""

from __future__ import annotations

import pytest

from svc_shared.core.aws import AwsClients
from svc_shared.core.clock import FrozenClock
from svc_shared.core.config import Settings
from svc_shared.providers.http import HttpPool
from svc_shared.wiring import container, services

SETTINGS = Settings.model_validate(
    {
        "PUBLIC_BASE_URL": "https://svc.example.com",
        "TABLE_NAME": "wired-app",
        "SESSION_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:000000000000:secret:s",
        "LOCAL_MASTER_KEY": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "SVC_CRASH_POINTS": "db_created",
        "TOKENS_TABLE_NAME": "wired-tokens",
    }
)


@pytest.fixture(autouse=True)
def _rewire_after(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")  # clients are made, never called
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    yield
    services.wire()


def test_what_is_wired_is_what_the_services_are_built_with():
    clock = FrozenClock(start=1_000.0)
    wired = services.wire(clock=clock, settings=SETTINGS)
    assert services.current() is wired
    assert services.clock() is clock and services.settings() is SETTINGS
    assert services.table().name == "wired-app"
    assert services.workspace_url("p1") == "https://svc.example.com/workspace/projects/p1"
    clock.advance(30)
    assert services.clock().now() == 1_030.0


def test_each_wiring_has_its_own_clients_and_pool_and_builds_services_once():
    first = services.wire(settings=SETTINGS)
    assert isinstance(first.aws, AwsClients) and isinstance(first.http, HttpPool)
    assert services.table() is services.table()
    second = services.wire(settings=SETTINGS)
    assert second.aws is not first.aws and second.http is not first.http
    assert services.table() is not first.table


def test_publishing_takes_its_crash_points_from_the_settings_and_never_in_production():
    for env_name, honoured in (("dev", {"db_created"}), ("prod", set())):
        wired = services.wire(settings=SETTINGS.model_copy(update={"env_name": env_name}))
        wired._signing_keys["provider-oauth-state"] = b"k" * 32  # instead of the secret in Secrets Manager
        assert services.publisher().stages.crash_points == honoured


def test_only_the_services_read_the_settings_from_the_environment():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    readers = sorted(
        str(path.relative_to(root))
        for top in ("layers/shared/svc_shared", "functions")
        for path in (root / top).rglob("*.py")
        if "backoffice_template" not in path.parts  # build output of `make build` (gitignored)
        and ("get_settings(" in path.read_text() or "os.environ" in path.read_text())
    )
    # cli.py is the operator's command line (TABLE_NAME, PUBLISH_STATE_MACHINE_ARN), no Lambda function.
    assert readers == [
        "layers/shared/svc_shared/core/config.py",
        "layers/shared/svc_shared/wiring/cli.py",
        "layers/shared/svc_shared/wiring/container.py",
    ]


class _Holder:
    """A holder of its own, as the local stack puts one in for each function it runs."""

    def __init__(self) -> None:
        self.services: services.Services | None = None


def test_a_holder_put_in_keeps_the_services_until_the_previous_one_is_put_back():
    outside = services.wire(settings=SETTINGS)
    holder = _Holder()
    previous = container.hold_services_in(holder)
    try:
        assert services.current() is holder.services  # wired on first use, into the holder
        assert services.current() is not outside
        inside = services.wire(settings=SETTINGS.model_copy(update={"table_name": "held-app"}))
        assert holder.services is inside and services.table().name == "held-app"
    finally:
        assert container.hold_services_in(previous) is holder
    assert services.current() is outside and services.table().name == "wired-app"


class _SecretsManager:
    """A Secrets Manager client that counts its reads."""

    def __init__(self, value: str) -> None:
        self.value, self.reads = value, 0

    def get_secret_value(self, SecretId: str) -> dict[str, str]:
        self.reads += 1
        return {"SecretString": f"{self.value}:{SecretId}"}


def test_a_cache_put_in_keeps_the_secrets_read_until_the_previous_one_is_put_back():
    from svc_shared.core import secrets

    arn = "arn:aws:secretsmanager:us-east-1:000000000000:secret:held"
    outside_client = _SecretsManager("outside")
    assert secrets.get_secret(arn, outside_client) == f"outside:{arn}"
    own: secrets.SecretCache = {}
    previous = secrets.use_cache(own)
    try:
        inside_client = _SecretsManager("inside")
        assert secrets.get_secret(arn, inside_client) == f"inside:{arn}"  # not the value cached outside
        assert secrets.get_secret(arn, inside_client) == f"inside:{arn}" and inside_client.reads == 1
        assert own[arn][1] == f"inside:{arn}"
    finally:
        assert secrets.use_cache(previous) is own
    assert secrets.get_secret(arn, outside_client) == f"outside:{arn}" and outside_client.reads == 1
    secrets.reset()
