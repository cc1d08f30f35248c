"""Embedded AWS: tables from template.yaml, state machines running our handlers, persistence across
restarts."""

from __future__ import annotations

import json
import re
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from svc_local.aws import EmbeddedAws
from svc_local.runtime import FunctionRegistry
from svc_local.state import StateDir
from svc_local.template import FunctionSpec, Template, load_yaml

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"


def double(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return {"value": event["value"] * 2, "by": context.function_name}


def fail(event: dict[str, Any], context: Any) -> dict[str, Any]:
    raise ValueError("no good")


def test_function(name: str, handler: Callable[[Any, Any], Any], registry: FunctionRegistry) -> FunctionSpec:
    spec = FunctionSpec(name, name, "tests/", "x.handler", "tests.x", "handler", timeout=5, memory_size=128)
    registry.add(spec, handler=handler)
    return spec


test_function.__test__ = False  # type: ignore[attr-defined]


def make_registry() -> FunctionRegistry:
    registry = FunctionRegistry()
    test_function("Double", double, registry)
    test_function("Fail", fail, registry)
    return registry


@pytest.fixture
def registry() -> FunctionRegistry:
    return make_registry()


@pytest.fixture(scope="module")
def aws_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("aws") / "state"


@pytest.fixture(scope="module")
def aws(aws_state: Path) -> Iterator[EmbeddedAws]:
    """One embedded AWS for the tests that only read or create uniquely named things."""
    with EmbeddedAws(
        port=0, state_dir=aws_state, registry=make_registry(), templates=[Template(TEMPLATE)]
    ) as running:
        yield running


def wait_for_execution(sfn: Any, execution_arn: str, timeout: float = 10.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        described = sfn.describe_execution(executionArn=execution_arn)
        if described["status"] != "RUNNING" or time.monotonic() > deadline:
            return described
        time.sleep(0.02)


def run_machine(aws: EmbeddedAws, name: str, function: str, payload: dict[str, Any]) -> dict[str, Any]:
    sfn = aws.client("stepfunctions")
    definition = {
        "StartAt": "Step",
        "States": {
            "Step": {
                "Type": "Task",
                "Resource": f"arn:aws:lambda:us-east-1:123456789012:function:{function}",
                "End": True,
            }
        },
    }
    machine = sfn.create_state_machine(
        name=name, definition=json.dumps(definition), roleArn="arn:aws:iam::123456789012:role/sfn"
    )
    started = sfn.start_execution(stateMachineArn=machine["stateMachineArn"], input=json.dumps(payload))
    return wait_for_execution(sfn, started["executionArn"])


def test_tables_are_created_as_the_template_declares_them(aws: EmbeddedAws):
    declared = load_yaml(TEMPLATE)["Resources"]["AppTable"]["Properties"]
    ddb = aws.client("dynamodb")
    table = ddb.describe_table(TableName="svc-dev-app")["Table"]
    assert table["KeySchema"] == declared["KeySchema"]
    assert sorted(table["AttributeDefinitions"], key=str) == sorted(declared["AttributeDefinitions"], key=str)
    assert table["BillingModeSummary"]["BillingMode"] == declared["BillingMode"]
    indexes = {ix["IndexName"]: (ix["KeySchema"], ix["Projection"]) for ix in table["GlobalSecondaryIndexes"]}
    assert indexes == {
        ix["IndexName"]: (ix["KeySchema"], ix["Projection"]) for ix in declared["GlobalSecondaryIndexes"]
    }
    ttl = ddb.describe_time_to_live(TableName="svc-dev-app")["TimeToLiveDescription"]
    assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == (
        "ENABLED",
        declared["TimeToLiveSpecification"]["AttributeName"],
    )


def test_uploads_bucket_and_session_secret_exist(aws: EmbeddedAws, aws_state: Path):
    template = Template(TEMPLATE)
    assert aws.client("s3").head_bucket(Bucket=template.buckets()[0])
    secret = aws.client("secretsmanager").get_secret_value(SecretId=aws.refs["SessionSecret"])
    assert secret["SecretString"] == StateDir(aws_state).secret("SessionSecret")
    assert len(secret["SecretString"]) == 64


def test_state_machine_task_runs_our_handler_in_process(aws: EmbeddedAws):
    execution = run_machine(aws, "double", "Double", {"value": 21})
    assert execution["status"] == "SUCCEEDED"
    assert json.loads(execution["output"]) == {"value": 42, "by": "Double"}


def test_unnamed_executions_get_distinct_names(aws: EmbeddedAws):
    first = run_machine(aws, "twice", "Double", {"value": 1})
    sfn = aws.client("stepfunctions")
    again = sfn.start_execution(stateMachineArn=first["stateMachineArn"], input='{"value": 5}')
    second = wait_for_execution(sfn, again["executionArn"])
    assert first["executionArn"] != second["executionArn"]
    assert json.loads(second["output"]) == {"value": 10, "by": "Double"}


def test_handler_error_fails_the_execution_with_its_type(aws: EmbeddedAws):
    execution = run_machine(aws, "fails", "Fail", {})
    assert execution["status"] == "FAILED"
    assert execution["error"] == "ValueError"
    assert "no good" in execution["cause"]


def test_lambda_invoke_answers_like_lambda(aws: EmbeddedAws):
    lam = aws.client("lambda")
    ok = lam.invoke(FunctionName="Double", Payload=json.dumps({"value": 2}))
    assert "FunctionError" not in ok
    assert json.load(ok["Payload"]) == {"value": 4, "by": "Double"}
    failed = lam.invoke(FunctionName="arn:aws:lambda:us-east-1:123456789012:function:Fail:$LATEST")
    assert failed["FunctionError"] == "Unhandled"
    assert json.load(failed["Payload"])["errorType"] == "ValueError"
    with pytest.raises(ClientError) as missing:
        lam.invoke(FunctionName="Nope")
    assert missing.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_items_and_objects_survive_a_restart(tmp_path: Path, registry: FunctionRegistry):
    state = tmp_path / "state"
    item = {"pk": {"S": "USER#1"}, "sk": {"S": "PROFILE"}, "blob": {"B": b"\x00\xff"}, "n": {"N": "3"}}
    with EmbeddedAws(port=0, state_dir=state, registry=registry, templates=[Template(TEMPLATE)]) as first:
        first.client("dynamodb").put_item(TableName="svc-dev-app", Item=item)
        first.client("s3").put_object(
            Bucket="svc-local-uploadsbucket", Key="a/b.bin", Body=b"\x01\x02", ContentType="image/png"
        )
    with EmbeddedAws(port=0, state_dir=state, registry=registry) as second:
        got = second.client("dynamodb").get_item(
            TableName="svc-dev-app", Key={"pk": item["pk"], "sk": item["sk"]}
        )
        assert got["Item"] == item
        obj = second.client("s3").get_object(Bucket="svc-local-uploadsbucket", Key="a/b.bin")
        assert (obj["Body"].read(), obj["ContentType"]) == (b"\x01\x02", "image/png")
        ttl = second.client("dynamodb").describe_time_to_live(TableName="svc-dev-app")[
            "TimeToLiveDescription"
        ]
        assert ttl["AttributeName"] == "expires_at"


def test_a_kms_key_and_what_it_wrapped_survive_a_restart(tmp_path: Path, registry: FunctionRegistry):
    # The deploy rehearsal creates the data key anew at each start: it must come back as the key it was.
    state, context = tmp_path / "state", {"purpose": "restart"}
    with EmbeddedAws(port=0, state_dir=state, registry=registry) as first:
        key_id = first.client("kms").create_key(Description="data key")["KeyMetadata"]["KeyId"]
        data_key = first.client("kms").generate_data_key(
            KeyId=key_id, KeySpec="AES_256", EncryptionContext=context
        )
    with EmbeddedAws(port=0, state_dir=state, registry=registry) as second:
        kms = second.client("kms")
        assert kms.create_key(Description="data key")["KeyMetadata"]["KeyId"] == key_id
        unwrapped = kms.decrypt(
            CiphertextBlob=data_key["CiphertextBlob"], EncryptionContext=context, KeyId=key_id
        )
        assert unwrapped["Plaintext"] == data_key["Plaintext"]
        assert kms.create_key(Description="another")["KeyMetadata"]["KeyId"] != key_id


def test_a_fresh_start_without_state_is_empty(tmp_path: Path):
    with EmbeddedAws(port=0, state_dir=tmp_path / "one", templates=[Template(TEMPLATE)]) as first:
        first.client("dynamodb").put_item(TableName="svc-dev-app", Item={"pk": {"S": "a"}, "sk": {"S": "b"}})
    with EmbeddedAws(port=0, state_dir=tmp_path / "two", templates=[Template(TEMPLATE)]) as second:
        assert second.client("dynamodb").scan(TableName="svc-dev-app")["Items"] == []


def test_changes_are_snapshotted_while_running(tmp_path: Path):
    state = tmp_path / "state"
    with EmbeddedAws(port=0, state_dir=state, templates=[Template(TEMPLATE)], snapshot_interval=0.05) as aws:
        aws.client("dynamodb").put_item(TableName="svc-dev-app", Item={"pk": {"S": "k"}, "sk": {"S": "v"}})
        deadline = time.monotonic() + 5
        dump = state / "dynamodb.json"
        while time.monotonic() < deadline:
            if dump.is_file() and '"k"' in dump.read_text():
                break
            time.sleep(0.02)
        assert '"k"' in dump.read_text()
    assert not list(state.glob(".*.tmp"))


def test_local_secrets_are_generated_once_with_private_mode(tmp_path: Path):
    first = StateDir(tmp_path)
    key = first.master_key()
    assert len(__import__("base64").b64decode(key)) == 32
    assert StateDir(tmp_path).master_key() == key
    assert stat.S_IMODE((tmp_path / "master.key").stat().st_mode) == 0o600
    assert StateDir(tmp_path).secret("SessionSecret") == first.secret("SessionSecret")
    assert stat.S_IMODE((tmp_path / "secret.SessionSecret").stat().st_mode) == 0o600


def presigned_put(aws: EmbeddedAws, key: str, size: int, expires: int = 3600) -> str:
    # As the platform's S3 client signs: Signature Version 4, with Content-Length and Content-Type signed.
    s3 = boto3.client(
        "s3",
        endpoint_url=aws.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}),
    )
    bucket = aws.ensure_bucket("presign-checks")
    return str(
        s3.generate_presigned_url(
            "put_object",
            Params={"Bucket": bucket, "Key": key, "ContentLength": size, "ContentType": "text/plain"},
            ExpiresIn=expires,
            HttpMethod="PUT",
        )
    )


def s3_error_code(response: httpx.Response) -> str:
    match = re.search(r"<Code>([^<]+)</Code>", response.text)
    return match[1] if match else ""


def test_presigned_put_within_its_signed_size_is_stored(aws: EmbeddedAws):
    url = presigned_put(aws, "ok.txt", 1000)
    put = httpx.put(url, content=b"x" * 1000, headers={"Content-Type": "text/plain"})
    assert put.status_code == 200, put.text
    got = aws.client("s3").get_object(Bucket="presign-checks", Key="ok.txt")
    assert got["ContentLength"] == 1000


def test_presigned_put_larger_than_signed_is_refused_like_s3(aws: EmbeddedAws):
    url = presigned_put(aws, "big.txt", 1000)
    put = httpx.put(url, content=b"x" * (11 * 1024 * 1024), headers={"Content-Type": "text/plain"})
    assert put.status_code == 403
    assert s3_error_code(put) == "SignatureDoesNotMatch"
    with pytest.raises(ClientError):
        aws.client("s3").head_object(Bucket="presign-checks", Key="big.txt")


def test_presigned_put_with_an_altered_signature_or_header_is_refused(aws: EmbeddedAws):
    url = presigned_put(aws, "altered.txt", 4)
    signature = httpx.URL(url).params["X-Amz-Signature"]
    forged = url.replace(signature, ("0" if signature[0] != "0" else "1") + signature[1:])
    assert s3_error_code(httpx.put(forged, content=b"abcd", headers={"Content-Type": "text/plain"})) == (
        "SignatureDoesNotMatch"
    )
    other_type = httpx.put(url, content=b"abcd", headers={"Content-Type": "text/html"})
    assert other_type.status_code == 403
    assert s3_error_code(other_type) == "SignatureDoesNotMatch"
    other_key = url.replace("altered.txt", "elsewhere.txt")
    assert s3_error_code(httpx.put(other_key, content=b"abcd", headers={"Content-Type": "text/plain"})) == (
        "SignatureDoesNotMatch"
    )


def test_expired_presigned_url_is_refused(aws: EmbeddedAws):
    url = presigned_put(aws, "late.txt", 4, expires=1)
    time.sleep(1.1)
    put = httpx.put(url, content=b"abcd", headers={"Content-Type": "text/plain"})
    assert put.status_code == 403
    assert s3_error_code(put) == "AccessDenied"
    assert "expired" in put.text
