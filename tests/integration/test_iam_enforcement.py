"""IAM enforced on the functions of the local stack: a call the function's role (template.yaml, expanded by
SAM) does not allow fails as on AWS, naming the function, the action and the resource; the shipped roles
allow what the functions need and refuse what they do not (no Scan for the public beacon)."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from botocore.exceptions import ClientError

from svc_local import iam
from svc_local.aws import EmbeddedAws
from svc_local.runtime import FunctionRegistry, acting_as
from svc_local.template import Template, load_yaml

ROOT = Path(__file__).resolve().parents[2]
SESSION_GRANT = {"AWSSecretsManagerGetSecretValuePolicy": {"SecretArn": {"Ref": "SessionSecret"}}}


def template_without_publish_session_grant(directory: Path) -> Path:
    """template.yaml with PublishStepsFunction's grant on SessionSecret removed (beside the code it names)."""
    data = load_yaml(ROOT / "template.yaml")
    policies = data["Resources"]["PublishStepsFunction"]["Properties"]["Policies"]
    assert SESSION_GRANT in policies
    policies.remove(SESSION_GRANT)
    for name in ("functions", "statemachines"):
        (directory / name).symlink_to(ROOT / name)
    path = directory / "template.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture
def local_aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Embedded AWS serving a template, with IAM enforced as in the local stack (the test passes the path)."""
    started: list[EmbeddedAws] = []

    def start(template_path: Path) -> EmbeddedAws:
        monkeypatch.setenv(iam.MODE_ENV, "enforce")
        monkeypatch.delenv(iam.RECORD_ENV, raising=False)
        template = Template(template_path, {"PublicBaseUrl": "http://127.0.0.1:3000"}, package_root=ROOT)
        aws = EmbeddedAws(port=0, persist=False, registry=FunctionRegistry(), templates=[template])
        aws.start()
        started.append(aws)
        env = template.environment(skip={"KMS_KEY_ID"})
        env.update(
            {
                "AWS_ENDPOINT_URL": aws.endpoint_url,
                "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_REGION": "us-east-1",
                "AWS_DEFAULT_REGION": "us-east-1",
                "LOCAL_MASTER_KEY": base64.b64encode(os.urandom(32)).decode(),
            }
        )
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("KMS_KEY_ID", raising=False)
        from svc_shared.core import secrets
        from svc_shared.wiring import services

        secrets.reset()
        services.wire()
        return aws

    yield start
    from svc_shared.core import secrets
    from svc_shared.wiring import services

    for aws in started:
        aws.stop()
    secrets.reset()
    services.wire()


def spec_of(aws: EmbeddedAws, logical_id: str) -> Any:
    found = aws.registry.find(logical_id)
    assert found is not None
    return found


def test_publish_steps_without_its_session_secret_grant_is_refused_naming_function_action_and_secret(
    local_aws, tmp_path: Path
):
    aws = local_aws(template_without_publish_session_grant(tmp_path))
    from svc_shared.wiring import services

    secret = aws.refs["SessionSecret"]
    # What the publisher's construction does first: Connections' state key, derived from the session secret.
    with acting_as(spec_of(aws, "PublishStepsFunction")), pytest.raises(ClientError) as refused:
        services.connections()  # building it reads the secret
    error = refused.value.response["Error"]
    assert error["Code"] == "AccessDeniedException"
    assert "PublishStepsFunction" in error["Message"]
    assert "secretsmanager:GetSecretValue" in error["Message"]
    assert secret in error["Message"]
    # The functions that hold the grant still read it: the refusal is the role's, not the secret's.
    with acting_as(spec_of(aws, "ConnectionsFunction")):
        assert services.current().signing_key("provider-oauth-state")


def test_with_the_shipped_template_publish_steps_builds_its_connections(local_aws):
    aws = local_aws(ROOT / "template.yaml")
    from svc_shared.wiring import services

    with acting_as(spec_of(aws, "PublishStepsFunction")):
        assert services.connections() is not None


def test_each_function_is_its_own_container(local_aws):
    """A secret one function read is not handed to another from a shared cache: each reads it itself."""
    aws = local_aws(ROOT / "template.yaml")
    from svc_shared.wiring import services

    with acting_as(spec_of(aws, "AccountsFunction")):
        accounts = services.current()
        assert accounts.signing_key("workspace-session")
    with acting_as(spec_of(aws, "AnalyticsFunction")):
        beacon = services.current()
        assert beacon is not accounts
        assert beacon.settings.session_secret_arn == ""  # not in its environment
        client = beacon.aws.client("secretsmanager")
        with pytest.raises(ClientError) as refused:
            client.get_secret_value(SecretId=aws.refs["SessionSecret"])
    assert "AnalyticsFunction" in refused.value.response["Error"]["Message"]


def test_the_public_beacon_counts_its_limits_and_queues_and_cannot_read_or_scan(local_aws):
    aws = local_aws(ROOT / "template.yaml")
    from svc_shared.wiring import services

    table = os.environ["TABLE_NAME"]
    with acting_as(spec_of(aws, "AnalyticsFunction")):
        services.analytics().admit("203.0.113.7", "some-site")  # the rate-limit counters: UpdateItem
        client = services.current().aws.client("dynamodb")
        with pytest.raises(ClientError) as unread:
            client.get_item(TableName=table, Key={"pk": {"S": "PROJECT#x"}, "sk": {"S": "PROJECT"}})
        assert "dynamodb:GetItem" in unread.value.response["Error"]["Message"]
        with pytest.raises(ClientError) as refused:
            client.scan(TableName=table)
        sqs = services.current().aws.client("sqs")
        sqs.send_message(QueueUrl=os.environ["ANALYTICS_QUEUE_URL"], MessageBody="{}")
    message = refused.value.response["Error"]["Message"]
    assert refused.value.response["Error"]["Code"] == "AccessDeniedException"
    assert "AnalyticsFunction" in message and "dynamodb:Scan" in message and f"table/{table}" in message


def test_no_function_can_scan_the_app_table(local_aws):
    aws = local_aws(ROOT / "template.yaml")
    assert aws.iam is not None
    table = iam.table_arn(os.environ["TABLE_NAME"])
    functions = [p for p in aws.iam.model.principals.values() if p.kind == "function"]
    assert len(functions) >= 11
    for principal in functions:
        assert not aws.iam.decide(principal.name, iam.Request("dynamodb:Scan", table)).allowed, principal.name
