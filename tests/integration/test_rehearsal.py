"""The deploy rehearsal: template.yaml, built by the SAM transform, created as a stack in an embedded AWS; the
resources the local stack runs on are the ones that stack created, with the template's properties."""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"
PUBLIC_URL = "http://127.0.0.1:3000"
BACKOFFICE_SECRET_VALUE = "a backoffice secret put in after the deploy"


@pytest.fixture(scope="module")
def rehearsed():
    from svc_local.aws import EmbeddedAws
    from svc_local.rehearsal import Rehearsal
    from svc_local.runtime import FunctionRegistry
    from svc_local.template import Template

    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        os.environ.setdefault(name, value)
    aws = EmbeddedAws(port=0, persist=False, registry=FunctionRegistry(Template(TEMPLATE).functions()))
    aws.start()
    try:
        rehearsal = Rehearsal(
            TEMPLATE,
            {"PublicBaseUrl": PUBLIC_URL},
            secret_values={"BackofficeSecret": BACKOFFICE_SECRET_VALUE},
        ).run(aws)
        print(f"rehearsal timings: {rehearsal.timings}")
        yield aws, rehearsal
    finally:
        aws.stop()


def _physical(rehearsal, logical: str) -> str:
    return rehearsal.physical_id(logical)


def test_the_stack_is_created_and_nothing_stripped_is_left_unchecked(rehearsed):
    aws, rehearsal = rehearsed
    stack = aws.client("cloudformation").describe_stacks(StackName=rehearsal.stack_id)["Stacks"][0]
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    kinds = {kind for kind, _ in rehearsal.resources.values()}
    from svc_local.rehearsal import REQUIRED_TYPES  # what a rehearsal refuses to strip

    assert {"AWS::DynamoDB::Table", "AWS::Lambda::Function", "AWS::StepFunctions::StateMachine"} <= kinds
    assert set(REQUIRED_TYPES) <= kinds
    stripped_types = {reason.split(": ", 1)[0] for reason in rehearsal.stripped.values()}
    assert stripped_types == {
        "AWS::ApiGatewayV2::Api",
        "AWS::ApiGatewayV2::Stage",
        "AWS::Lambda::Permission",
        "AWS::Lambda::EventSourceMapping",
        "AWS::S3::BucketPolicy",
        "AWS::SNS::Subscription",
        "AWS::SNS::TopicPolicy",
        "AWS::CloudWatch::Alarm",
        "AWS::CloudWatch::Dashboard",
    }
    # A permission goes because the API it lets in is not created, and says so.
    permissions = [r for r in rehearsal.stripped.values() if r.startswith("AWS::Lambda::Permission")]
    assert permissions and all("references PlatformHttpApi" in r for r in permissions)
    # The checks of the stripped resources (routes = gateway, mapping = poller, references resolve) pass.
    assert rehearsal.problems == []


def test_tables_have_the_template_key_schema_indexes_and_ttl(rehearsed):
    aws, rehearsal = rehearsed
    ddb = aws.client("dynamodb")
    app = ddb.describe_table(TableName=_physical(rehearsal, "AppTable"))["Table"]
    assert app["TableName"] == "svc-dev-app"
    assert {(k["AttributeName"], k["KeyType"]) for k in app["KeySchema"]} == {("pk", "HASH"), ("sk", "RANGE")}
    assert app["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    (gsi,) = app["GlobalSecondaryIndexes"]
    assert gsi["IndexName"] == "gsi1"
    assert [k["AttributeName"] for k in gsi["KeySchema"]] == ["gsi1pk", "gsi1sk"]
    tokens = ddb.describe_table(TableName=_physical(rehearsal, "OAuthTokensTable"))["Table"]
    assert {(k["AttributeName"], k["KeyType"]) for k in tokens["KeySchema"]} == {
        ("user_id", "HASH"),
        ("provider", "RANGE"),
    }
    for logical in ("AppTable", "OAuthTokensTable"):
        ttl = ddb.describe_time_to_live(TableName=_physical(rehearsal, logical))["TimeToLiveDescription"]
        assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == ("ENABLED", "expires_at")
        backups = ddb.describe_continuous_backups(TableName=_physical(rehearsal, logical))
        recovery = backups["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]
        assert recovery["PointInTimeRecoveryStatus"] == "ENABLED"


def test_queues_have_the_template_retention_visibility_and_dead_letter_redrive(rehearsed):
    aws, rehearsal = rehearsed
    sqs = aws.client("sqs")
    queue = sqs.get_queue_attributes(QueueUrl=_physical(rehearsal, "AnalyticsQueue"), AttributeNames=["All"])
    dlq = sqs.get_queue_attributes(
        QueueUrl=_physical(rehearsal, "AnalyticsDeadLetterQueue"), AttributeNames=["All"]
    )["Attributes"]
    attributes = queue["Attributes"]
    assert attributes["VisibilityTimeout"] == "360"
    assert attributes["MessageRetentionPeriod"] == "345600"
    redrive = json.loads(attributes["RedrivePolicy"])
    assert redrive["deadLetterTargetArn"] == dlq["QueueArn"]
    assert int(redrive["maxReceiveCount"]) == 5
    assert dlq["QueueArn"].endswith(":svc-dev-analytics-dlq")
    assert dlq["MessageRetentionPeriod"] == "1209600"


def test_secrets_are_generated_as_the_template_asks_and_take_the_values_put_in_after_deploy(rehearsed):
    aws, rehearsal = rehearsed
    sm = aws.client("secretsmanager")
    session = sm.get_secret_value(SecretId=_physical(rehearsal, "SessionSecret"))["SecretString"]
    assert len(session) == 64 and session.isalnum()  # PasswordLength 64, ExcludePunctuation
    described = sm.describe_secret(SecretId=_physical(rehearsal, "SessionSecret"))
    assert described["Description"].startswith("Signing key of workspace session cookies")
    backoffice = sm.get_secret_value(SecretId=_physical(rehearsal, "BackofficeSecret"))["SecretString"]
    assert backoffice == BACKOFFICE_SECRET_VALUE
    # Each function is told the ARN of the secret the stack created.
    env = rehearsal.environment()
    assert env["SESSION_SECRET_ARN"] == _physical(rehearsal, "SessionSecret")
    assert env["BACKOFFICE_SECRET_ARN"] == _physical(rehearsal, "BackofficeSecret")


def test_the_data_key_rotates_has_its_alias_and_is_the_key_the_local_functions_encrypt_with(rehearsed):
    aws, rehearsal = rehearsed
    kms = aws.client("kms")
    key_id = _physical(rehearsal, "DataKey")
    key = kms.describe_key(KeyId=key_id)["KeyMetadata"]
    assert key["Description"].startswith("Key-encryption key for envelope encryption")
    assert kms.get_key_rotation_status(KeyId=key_id)["KeyRotationEnabled"] is True
    aliases = {a["AliasName"]: a.get("TargetKeyId") for a in kms.list_aliases()["Aliases"]}
    assert aliases["alias/svc-dev-data"] == key_id
    # The created functions get the key, and so do the local ones: they encrypt with the embedded KMS.
    assert rehearsal.functions["McpFunction"].environment["KMS_KEY_ID"] == key_id
    assert rehearsal.environment()["KMS_KEY_ID"] == key_id


def test_each_function_has_its_own_role_with_the_template_policies(rehearsed):
    aws, rehearsal = rehearsed
    iam = aws.client("iam")
    roles = rehearsal.roles()
    assert set(roles) == set(rehearsal.functions) and len(set(roles.values())) == len(roles)
    publish = rehearsal.functions["PublishStepsFunction"]
    role = iam.get_role(RoleName=publish.role_name)["Role"]
    assert role["Arn"] == publish.role_arn
    trust = role["AssumeRolePolicyDocument"]
    trust = json.loads(trust) if isinstance(trust, str) else trust
    assert trust["Statement"][0]["Principal"]["Service"] == ["lambda.amazonaws.com"]
    documents = [
        iam.get_role_policy(RoleName=publish.role_name, PolicyName=name)["PolicyDocument"]
        for name in iam.list_role_policies(RoleName=publish.role_name)["PolicyNames"]
    ]
    text = json.dumps(documents)
    assert "arn:aws:dynamodb:us-east-1:123456789012:table/svc-dev-app" in text
    assert "dynamodb:PutItem" in text and "kms:" not in text
    # Its KMS grant is the data key's policy, naming the role the stack created by its ARN.
    key_policy = aws.client("kms").get_key_policy(KeyId=_physical(rehearsal, "DataKey"), PolicyName="default")
    statements = {s.get("Sid"): s for s in json.loads(key_policy["Policy"])["Statement"]}
    assert publish.role_arn in statements["EncryptAndDecrypt"]["Principal"]["AWS"]
    assert statements["EncryptAndDecrypt"]["Action"] == ["kms:Decrypt", "kms:GenerateDataKey"]
    # The analytics beacon function may only send to the queue, not write the table.
    analytics = rehearsal.functions["AnalyticsFunction"]
    names = iam.list_role_policies(RoleName=analytics.role_name)["PolicyNames"]
    text = json.dumps([iam.get_role_policy(RoleName=analytics.role_name, PolicyName=n) for n in names])
    assert "sqs:SendMessage" in text and "dynamodb:PutItem" not in text


def test_functions_carry_the_environment_the_cloud_gives_them(rehearsed):
    _, rehearsal = rehearsed
    env = rehearsal.environment()
    assert env["TABLE_NAME"] == "svc-dev-app"
    assert env["TOKENS_TABLE_NAME"] == "svc-dev-oauth_tokens"
    assert env["PUBLIC_BASE_URL"] == PUBLIC_URL
    assert env["ANALYTICS_QUEUE_URL"] == _physical(rehearsal, "AnalyticsQueue")
    assert env["UPLOADS_BUCKET"] == _physical(rehearsal, "UploadsBucket")
    assert env["PUBLISH_STATE_MACHINE_ARN"] == rehearsal.state_machines["PublishStateMachine"]


def test_the_state_machine_calls_the_created_function_through_the_local_invoke_endpoint(rehearsed):
    aws, rehearsal = rehearsed
    arn = rehearsal.state_machines["PublishStateMachine"]
    machine = aws.client("stepfunctions").describe_state_machine(stateMachineArn=arn)
    assert machine["name"] == "svc-dev-publish"
    assert machine["roleArn"].endswith(":role/" + _physical(rehearsal, "PublishStateMachineRole"))
    definition = json.loads(machine["definition"])
    target = definition["States"]["ReadStage"]["Parameters"]["FunctionName"]
    assert target == rehearsal.functions["PublishStepsFunction"].arn  # DefinitionSubstitutions applied
    assert aws.registry.find(target).logical_id == "PublishStepsFunction"


@pytest.fixture
def rehearsal_env(rehearsed, monkeypatch: pytest.MonkeyPatch):
    """The functions' environment as the local stack sets it from the rehearsal (plus its local overrides)."""
    from svc_shared.wiring import services

    aws, rehearsal = rehearsed
    for name, value in rehearsal.environment().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL", aws.endpoint_url)
    monkeypatch.setenv("LOCAL_MASTER_KEY", base64.b64encode(os.urandom(32)).decode())
    monkeypatch.delenv("KMS_KEY_ID", raising=False)
    services.wire()
    yield aws, rehearsal
    monkeypatch.undo()
    services.wire()


def test_a_publish_step_runs_through_the_created_state_machine(rehearsal_env):
    from svc_shared.wiring import services

    aws, rehearsal = rehearsal_env
    user = services.accounts().create_user(
        email="rehearsal@example.com", password="rehearsal-password-1", display_name="R", plan="paid"
    )
    project = services.projects().create(
        owner_id=user.id,
        workspace_id=user.default_workspace_id,
        prompt="A ceramics studio selling mugs and bowls to collectors",
    )
    services.projects().update(project, {"publish_stage": "ready"})
    sfn = aws.client("stepfunctions")
    execution = sfn.start_execution(
        stateMachineArn=rehearsal.state_machines["PublishStateMachine"],
        input=json.dumps({"projectId": project.id}),
    )["executionArn"]
    deadline = time.monotonic() + 20
    status = "RUNNING"
    while status == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.1)
        status = sfn.describe_execution(executionArn=execution)["status"]
    assert status == "SUCCEEDED"
    # The read step ran in-process against the stack's table: the project is marked ready there.
    item = aws.client("dynamodb").scan(TableName="svc-dev-app")["Items"]
    assert any(i.get("publish_status", {}).get("S") == "ready" for i in item)


def test_a_resource_that_cannot_be_created_is_named_with_the_reason(tmp_path, rehearsed):
    from svc_local.rehearsal import Rehearsal, RehearsalError

    aws, _ = rehearsed
    template = tmp_path / "template.yaml"
    template.write_text(
        "Transform: AWS::Serverless-2016-10-31\n"
        "Resources:\n"
        "  BrokenFunction:\n"
        "    Type: AWS::Serverless::Function\n"
        "    Properties:\n"
        "      CodeUri: s3://no-such-bucket/code.zip\n"
        "      Handler: app.handler\n"
        "      Runtime: python3.11\n"
    )
    with pytest.raises(RehearsalError, match=r"BrokenFunction \(AWS::Lambda::Function\) failed to create: "):
        Rehearsal(template, stack_name="broken").run(aws)


def test_a_template_whose_required_resources_moto_cannot_create_is_refused(tmp_path):
    from svc_local.rehearsal import RehearsalError, plan

    built = {
        "Resources": {
            "Api": {"Type": "AWS::ApiGatewayV2::Api", "Properties": {"Name": "x"}},
            "Table": {
                "Type": "AWS::DynamoDB::Table",
                "Properties": {"TableName": {"Fn::Sub": "t-${Api}"}},
            },
        }
    }
    with pytest.raises(RehearsalError, match=r"Table \(AWS::DynamoDB::Table: .*references Api"):
        plan(built)
