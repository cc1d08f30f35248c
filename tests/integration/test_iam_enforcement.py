"""IAM enforced on the functions of the local stack: a call the function's role (template.yaml, expanded by
SAM) does not allow fails as on AWS, naming the function, the action and the resource; the shipped roles
allow what the functions need and refuse what they do not (no Scan for the public beacon)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from botocore.exceptions import ClientError

from svc_local import iam
from svc_local.aws import EmbeddedAws
from svc_local.runtime import FunctionRegistry, acting_as
from svc_local.template import Template, load_yaml
from svc_shared.core.crypto import DecryptionFailed

ROOT = Path(__file__).resolve().parents[2]
SESSION_GRANT = {"AWSSecretsManagerGetSecretValuePolicy": {"SecretArn": {"Ref": "SessionSecret"}}}


def template_with(directory: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """template.yaml changed by `change` (beside the code it names)."""
    data = load_yaml(ROOT / "template.yaml")
    change(data)
    for name in ("functions", "statemachines"):
        (directory / name).symlink_to(ROOT / name)
    path = directory / "template.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def key_policy_statement(data: dict[str, Any], sid: str) -> dict[str, Any]:
    statements = data["Resources"]["DataKey"]["Properties"]["KeyPolicy"]["Statement"]
    return next(s for s in statements if s.get("Sid") == sid)


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
                # The template's DataKey, in the embedded KMS: its key policy is the template's.
                "KMS_KEY_ID": aws.client("kms").create_key()["KeyMetadata"]["KeyId"],
            }
        )
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("LOCAL_MASTER_KEY", raising=False)
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
        # It updates its own counters only: no other item of the table, not even another rate counter.
        for pk in ("PROJECT#x", "USER#x", "RATE#signin#x"):
            with pytest.raises(ClientError) as unwritten:
                client.update_item(
                    TableName=table,
                    Key={"pk": {"S": pk}, "sk": {"S": "W#0"}},
                    UpdateExpression="ADD #c :one",
                    ExpressionAttributeNames={"#c": "count"},
                    ExpressionAttributeValues={":one": {"N": "1"}},
                )
            assert "dynamodb:UpdateItem" in unwritten.value.response["Error"]["Message"], pk
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


ENCRYPTING = ("AccountsFunction", "IntegrationsFunction", "PublishStepsFunction", "WorkspaceFunction")
UNWRAPPING = ("McpFunction", "ShopsFunction")  # they read what others sealed
CONTEXT = {"purpose": "iam-test"}


def test_with_the_shipped_key_policy_each_function_seals_and_unseals_as_its_code_does(local_aws):
    aws = local_aws(ROOT / "template.yaml")
    from svc_shared.wiring import services

    for name in ENCRYPTING:
        with acting_as(spec_of(aws, name)):
            envelope = services.current().envelope
            assert envelope.decrypt_text(envelope.encrypt("sealed", CONTEXT), CONTEXT) == "sealed", name
    with acting_as(spec_of(aws, "ConnectionsFunction")):  # seals the tokens it receives, reads none
        envelope = services.current().envelope
        sealed = envelope.encrypt("a provider token", CONTEXT)
        with pytest.raises(DecryptionFailed):  # the refusal, in the words a stored secret's reader gets
            envelope.decrypt_text(sealed, CONTEXT)
    assert aws.iam is not None
    assert "ConnectionsFunction" in aws.iam.denied[-1] and "kms:Decrypt" in aws.iam.denied[-1]
    for name in UNWRAPPING:
        with acting_as(spec_of(aws, name)):
            envelope = services.current().envelope
            assert envelope.decrypt_text(sealed, CONTEXT) == "a provider token", name
            with pytest.raises(ClientError) as refused:
                envelope.encrypt("it only unseals", CONTEXT)
        message = refused.value.response["Error"]["Message"]
        assert name in message and "kms:GenerateDataKey" in message, name


def test_a_function_whose_role_the_key_policy_no_longer_lets_generate_data_keys_is_refused(
    local_aws, tmp_path: Path
):
    def without_workspace_generate(data: dict[str, Any]) -> None:
        role = {"Fn::GetAtt": ["WorkspaceFunctionRole", "Arn"]}
        key_policy_statement(data, "EncryptAndDecrypt")["Principal"]["AWS"].remove(role)
        key_policy_statement(data, "DecryptOnly")["Principal"]["AWS"].append(role)

    aws = local_aws(template_with(tmp_path, without_workspace_generate))
    from svc_shared.wiring import services

    key = f"arn:aws:kms:us-east-1:123456789012:key/{os.environ['KMS_KEY_ID']}"
    with acting_as(spec_of(aws, "WorkspaceFunction")), pytest.raises(ClientError) as refused:
        services.current().envelope.encrypt("a linked database's key", CONTEXT)
    error = refused.value.response["Error"]
    assert error["Code"] == "AccessDeniedException"
    assert "WorkspaceFunction" in error["Message"] and "kms:GenerateDataKey" in error["Message"]
    assert key in error["Message"]
    with acting_as(spec_of(aws, "IntegrationsFunction")):  # the others keep theirs
        assert services.current().envelope.encrypt("still sealed", CONTEXT)


def _what_it_does(name: str, envelope: Any, sealed: str) -> object:
    return envelope.decrypt_text(sealed, CONTEXT) if name in UNWRAPPING else envelope.encrypt("x", CONTEXT)


def test_a_key_policy_that_names_no_role_locks_every_function_out(local_aws, tmp_path: Path):
    def locked(data: dict[str, Any]) -> None:
        statements = data["Resources"]["DataKey"]["Properties"]["KeyPolicy"]["Statement"]
        statements[:] = [s for s in statements if s.get("Sid") == "KeyAdministration"]

    aws = local_aws(template_with(tmp_path, locked))
    from svc_shared.wiring import services

    sealed = services.current().envelope.encrypt("sealed by the operator", CONTEXT)  # outside any function
    for name in (*ENCRYPTING, *UNWRAPPING, "ConnectionsFunction"):
        with acting_as(spec_of(aws, name)):
            envelope = services.current().envelope
            with pytest.raises((ClientError, DecryptionFailed)):
                _what_it_does(name, envelope, sealed)
        assert aws.iam is not None and name in aws.iam.denied[-1], name


def _get_item_in_a_thread(make_client: Callable[[], Any]) -> dict[str, Any]:
    """A GetItem from a new thread (contextvars do not follow it); the error AWS-side, or {} on success."""
    outcome: dict[str, Any] = {}

    def lookup() -> None:
        try:
            make_client().get_item(
                TableName=os.environ["TABLE_NAME"], Key={"pk": {"S": "a"}, "sk": {"S": "b"}}
            )
        except ClientError as exc:
            outcome.update(exc.response["Error"])

    worker = threading.Thread(target=lookup)
    worker.start()
    worker.join()
    return outcome


def test_a_call_with_no_function_current_from_a_functions_code_is_refused_not_let_through(local_aws):
    aws = local_aws(ROOT / "template.yaml")
    from svc_shared.wiring import services

    # A thread the function's code starts: whatever client it uses, no role answers for it.
    with acting_as(spec_of(aws, "AccountsFunction")):
        refused = _get_item_in_a_thread(lambda: aws.client("dynamodb"))
    assert refused.get("Code") == "AccessDeniedException"
    assert "no function is current" in refused["Message"] and "AccountsFunction" in refused["Message"]
    assert "dynamodb:GetItem" in refused["Message"]
    # A client the function made, used from a thread it did not start.
    with acting_as(spec_of(aws, "OAuthFunction")):
        client = services.current().aws.client("dynamodb")
    refused = _get_item_in_a_thread(lambda: client)
    assert refused.get("Code") == "AccessDeniedException" and "OAuthFunction" in refused["Message"]
    # The local stack's own calls (no function started the thread or made the client) are not a function's.
    assert _get_item_in_a_thread(lambda: aws.client("dynamodb")) == {}
