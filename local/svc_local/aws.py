"""Embedded AWS: moto's server in-process (state machines really execute), Lambda Invoke answered by our own
handlers, and DynamoDB items and S3 objects persisted in the state directory across restarts."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import logging
import os
import re
import sys
import threading
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from svc_local import iam as local_iam
from svc_local import s3presign
from svc_local.iam import Iam
from svc_local.kmskeys import keep_keys
from svc_local.runtime import FunctionRegistry, LambdaContext, error_payload
from svc_local.serving import StartStop
from svc_local.state import StateDir, atomic_write
from svc_local.template import LOCAL_REGION, FunctionSpec, StateMachineSpec, Template

DEFAULT_PORT = 4566
# The one key pair the local stack hands out (functions, CLI, tests): what S3 would check presigned URLs with.
LOCAL_CREDENTIALS = {"testing": "testing"}
SNAPSHOT_INTERVAL_SECONDS = 5.0
_INVOKE_PATH = re.compile(r"^/2015-03-31/functions/(?P<name>[^/]+)/invocations/?$")
# JSON-protocol actions that only read: they do not make the snapshot stale.
_READ_ACTIONS = ("Get", "Describe", "List", "Query", "Scan", "BatchGet")
_DUMP_VERSION = 1
# moto's Step Functions interpreter calls Lambda with this access key: the state machine's role session.
_STEP_FUNCTIONS_KEY = "ak"
_CREDENTIAL = re.compile(r"Credential=(?P<key>[^/,\s]+)/")
_START_EXECUTION_TARGETS = {"AWSStepFunctions.StartExecution", "AWSStepFunctions.StartSyncExecution"}

log = logging.getLogger("svc_local.aws")

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


def create_state_machine(stepfunctions: Any, machine: StateMachineSpec) -> None:
    """Create a template's state machine through a Step Functions client."""
    stepfunctions.create_state_machine(
        name=machine.name,
        definition=json.dumps(machine.definition),
        roleArn=machine.role_arn,
        type=machine.type,
    )


def invoke_function(
    registry: FunctionRegistry, spec: FunctionSpec, event: Any, request_id: str
) -> tuple[bytes, str | None]:
    """Run a handler in-process as Lambda would: (payload, function error or None)."""
    context = LambdaContext.for_function(spec, request_id)
    try:
        result = registry.invoke(spec, event, context)
    except Exception as exc:  # noqa: BLE001 - any handler error becomes a Lambda function error
        # What CloudWatch Logs would show.
        print(f"[{spec.logical_id} {request_id}] unhandled error", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        return json.dumps(error_payload(exc, request_id)).encode(), "Unhandled"
    try:
        return json.dumps(result).encode(), None
    except (TypeError, ValueError) as exc:
        payload = {"errorMessage": f"Unable to marshal response: {exc}", "errorType": "Runtime.MarshalError"}
        return json.dumps({**payload, "requestId": request_id}).encode(), "Unhandled"


class LambdaInvokeMiddleware:
    """WSGI middleware: Lambda Invoke runs our handlers in-process; everything else goes to moto."""

    def __init__(
        self,
        app: WsgiApp,
        registry: FunctionRegistry,
        on_write: Callable[[], None] | None = None,
        iam: Iam | None = None,
    ):
        self.app = app
        self.registry = registry
        self.on_write = on_write
        self.iam = iam
        # DynamoDB makes each conditional write and transaction atomic; moto's in-memory tables do not
        # lock, so concurrent requests could both pass a condition. One DynamoDB request at a time.
        self._dynamodb = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        match = _INVOKE_PATH.match(environ.get("PATH_INFO", ""))
        if match and environ.get("REQUEST_METHOD") == "POST":
            return self._invoke(unquote(match["name"]), environ, start_response)
        if s3presign.is_presigned(environ):
            try:
                s3presign.verify(environ, LOCAL_CREDENTIALS)
            except s3presign.PresignError as exc:
                _drain(environ)
                return s3presign.refuse(exc, start_response)
            denial = self._presigned_denial(environ)
            if denial is not None:
                _drain(environ)
                return s3presign.refuse(s3presign.PresignError("AccessDenied", denial), start_response)
        if environ.get("HTTP_X_AMZ_TARGET", "") in _START_EXECUTION_TARGETS:
            _name_unnamed_execution(environ)
        if self.on_write is not None and _is_write(environ):
            self.on_write()
        if environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB_"):
            with self._dynamodb:
                return list(self.app(environ, start_response))
        return self.app(environ, start_response)

    def _invoke(self, name: str, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        request_id = str(uuid.uuid4())
        spec = self.registry.find(name)
        if spec is None:
            body = {"Type": "User", "message": f"Function not found: {name}"}
            return _reply(start_response, "404 Not Found", body, request_id, "ResourceNotFoundException")
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length) if length else b""
        try:
            event = json.loads(raw) if raw.strip() else {}
        except ValueError:
            body = {"Type": "User", "message": "Could not parse request body into json"}
            return _reply(
                start_response, "400 Bad Request", body, request_id, "InvalidRequestContentException"
            )
        if self.iam is not None and _access_key(environ) == _STEP_FUNCTIONS_KEY:
            denial = self.iam.invoke_denial(spec)
            if denial is not None:
                body = {"Type": "User", "message": denial}
                return _reply(start_response, "403 Forbidden", body, request_id, "AccessDeniedException")
        invocation_type = environ.get("HTTP_X_AMZ_INVOCATION_TYPE", "RequestResponse")
        if invocation_type == "DryRun":
            start_response("204 No Content", [("x-amzn-RequestId", request_id)])
            return [b""]
        if invocation_type == "Event":
            threading.Thread(
                target=invoke_function, args=(self.registry, spec, event, request_id), daemon=True
            ).start()
            start_response("202 Accepted", [("x-amzn-RequestId", request_id), ("Content-Length", "0")])
            return [b""]
        payload, function_error = invoke_function(self.registry, spec, event, request_id)
        headers = [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(payload))),
            ("X-Amz-Executed-Version", "$LATEST"),
            ("x-amzn-RequestId", request_id),
        ]
        if function_error:
            headers.append(("X-Amz-Function-Error", function_error))
        start_response("200 OK", headers)
        return [payload]

    def _presigned_denial(self, environ: dict[str, Any]) -> str | None:
        """A presigned request is authorized with the permissions of the function that signed it."""
        if self.iam is None:
            return None
        parts = unquote(environ.get("PATH_INFO", "")).lstrip("/").split("/", 1)
        if len(parts) != 2:
            return None
        return self.iam.presigned_denial(environ.get("REQUEST_METHOD", "GET"), parts[0], parts[1])


def _access_key(environ: dict[str, Any]) -> str | None:
    match = _CREDENTIAL.search(environ.get("HTTP_AUTHORIZATION", ""))
    return match["key"] if match else None


def _reply(
    start_response: StartResponse, status: str, body: Any, request_id: str, error_type: str
) -> list[bytes]:
    data = json.dumps(body).encode()
    start_response(
        status,
        [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(data))),
            ("x-amzn-RequestId", request_id),
            ("x-amzn-ErrorType", error_type),
        ],
    )
    return [data]


def _fast_sqs_clock() -> None:
    """moto's SQS asks the time for every message of the queue on every ReceiveMessage, each time through
    naive-datetime arithmetic: with a few thousand beacons waiting, one receive took seconds. The current time
    read from time.time() is the same number, about 40 times faster (3,000 messages: 56 ms per receive)."""
    import time

    import moto.sqs.models as sqs_models

    if getattr(sqs_models, "_svc_fast_clock", False):
        return
    slow_millis, slow_seconds = sqs_models.unix_time_millis, sqs_models.unix_time
    sqs_models.unix_time_millis = lambda dt=None: time.time() * 1000.0 if dt is None else slow_millis(dt)
    sqs_models.unix_time = lambda dt=None: time.time() if dt is None else slow_seconds(dt)
    setattr(sqs_models, "_svc_fast_clock", True)  # noqa: B010 - a marker on a module of moto


def _drain(environ: dict[str, Any]) -> None:
    """Read a refused request's body so the client, still sending, gets the answer rather than a reset."""
    remaining = int(environ.get("CONTENT_LENGTH") or 0)
    stream = environ["wsgi.input"]
    while remaining > 0:
        chunk = stream.read(min(remaining, 1 << 16))
        if not chunk:
            break
        remaining -= len(chunk)


def _name_unnamed_execution(environ: dict[str, Any]) -> None:
    """Give StartExecution a UUID name when the caller sent none, as AWS does. moto 5.2's executing backend
    uses the missing name as-is (ARN ending in ":None"), so a second unnamed start fails as a duplicate."""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    raw = environ["wsgi.input"].read(length) if length else b""
    try:
        body = json.loads(raw) if raw else {}
    except ValueError:
        body = None
    if isinstance(body, dict) and not body.get("name"):
        body["name"] = str(uuid.uuid4())
        raw = json.dumps(body).encode()
    environ["wsgi.input"] = io.BytesIO(raw)
    environ["CONTENT_LENGTH"] = str(len(raw))


def _is_write(environ: dict[str, Any]) -> bool:
    if environ.get("REQUEST_METHOD") in ("GET", "HEAD", "OPTIONS"):
        return False
    target = environ.get("HTTP_X_AMZ_TARGET", "")
    action = target.rsplit(".", 1)[-1]
    return not (action and action.startswith(_READ_ACTIONS))


# ---- DynamoDB JSON <-> plain JSON (binary values as base64)


def _map_binary(value: dict[str, Any], convert: Callable[[Any], Any]) -> dict[str, Any]:
    """A DynamoDB JSON value with `convert` applied to every binary in it (B, BS, inside M and L)."""
    ((kind, inner),) = value.items()
    if kind == "B":
        return {"B": convert(inner)}
    if kind == "BS":
        return {"BS": [convert(v) for v in inner]}
    if kind == "M":
        return {"M": {k: _map_binary(v, convert) for k, v in inner.items()}}
    if kind == "L":
        return {"L": [_map_binary(v, convert) for v in inner]}
    return value


def _encode_value(value: dict[str, Any]) -> dict[str, Any]:
    return _map_binary(value, lambda raw: base64.b64encode(raw).decode("ascii"))


def _decode_value(value: dict[str, Any]) -> dict[str, Any]:
    return _map_binary(value, base64.b64decode)


def _create_kwargs(table: dict[str, Any]) -> dict[str, Any]:
    """create_table kwargs that rebuild a table from its describe_table answer."""
    billing = (table.get("BillingModeSummary") or {}).get("BillingMode", "PROVISIONED")
    kwargs: dict[str, Any] = {
        "TableName": table["TableName"],
        "KeySchema": table["KeySchema"],
        "AttributeDefinitions": table["AttributeDefinitions"],
        "BillingMode": billing,
    }
    throughput = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
    if billing == "PROVISIONED":
        kwargs["ProvisionedThroughput"] = throughput
    for key in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        indexes = []
        for index in table.get(key) or []:
            spec = {k: index[k] for k in ("IndexName", "KeySchema", "Projection")}
            if billing == "PROVISIONED" and key == "GlobalSecondaryIndexes":
                spec["ProvisionedThroughput"] = throughput
            indexes.append(spec)
        if indexes:
            kwargs[key] = indexes
    return kwargs


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class EmbeddedAws(StartStop):
    """moto's server on a threaded werkzeug server in this process.
    One per process at a time: moto's state is global, and start() resets it."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        state_dir: str | Path | None = None,
        persist: bool = True,
        registry: FunctionRegistry | None = None,
        templates: Iterable[Template] = (),
        snapshot_interval: float = SNAPSHOT_INTERVAL_SECONDS,
        setup: Iterable[Callable[[EmbeddedAws], Any]] = (),
        iam_template: Template | None = None,
    ) -> None:
        self.host = host
        self.requested_port = port
        self.state = StateDir(state_dir) if persist else None
        self.registry = registry or FunctionRegistry()
        self.templates = list(templates)
        for template in self.templates:
            for spec in template.functions():
                self.registry.add(spec)
        self.snapshot_interval = snapshot_interval
        # Run once the server answers, after the templates' resources and before the state is restored (the
        # deploy rehearsal creates its stack here, so that saved items land in the tables it created).
        self.setup = list(setup)
        # Ref values of provisioned resources whose local id is only known once created (secret ARNs).
        self.refs: dict[str, str] = {}
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._snapshotter: threading.Thread | None = None
        self._stopping = threading.Event()
        self._dirty = threading.Event()
        self._save_lock = threading.Lock()
        self._clients: dict[str, Any] = {}
        self._session: boto3.session.Session | None = None
        self._clients_lock = threading.Lock()
        self._saved_sfn_config: dict[str, Any] | None = None
        self._saved_moto_port: str | None = None
        # IAM of the first template's roles (or `iam_template`'s, when a setup step creates the resources: the
        # deploy rehearsal), enforced on the functions' calls (svc_local.iam; SVC_IAM=off).
        self.iam_template = iam_template or (self.templates[0] if self.templates else None)
        self.iam: Iam | None = None
        # Only a fully restored state may be written back: a half restore must not overwrite the dump.
        self._restored = False
        self._forget_keys: Callable[[], None] | None = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("not started")
        return int(self._server.server_port)

    @property
    def endpoint_url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> None:
        from moto.core.config import default_user_config
        from moto.moto_api._internal.models import moto_api_backend
        from moto.moto_server.werkzeug_app import (
            DomainDispatcherApplication,
            MotoRequestHandler,
            create_backend_app,
        )
        from werkzeug.serving import make_server

        # A fresh moto: what exists comes from the templates and the state directory, nothing else.
        moto_api_backend.reset()
        if (
            self.state is not None
        ):  # KMS keys keep their id and material across restarts, as tables keep items
            self._forget_keys = keep_keys(self.state.path / "kms-keys.json")
        _fast_sqs_clock()
        self._saved_moto_port = os.environ.get("MOTO_PORT")
        self._saved_sfn_config = dict(default_user_config.get("stepfunctions", {}))
        default_user_config["stepfunctions"] = {"execute_state_machine": True}

        class QuietHandler(MotoRequestHandler):
            def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
                """Every SDK call would be a line on stderr: only errors are logged."""

        if self.iam_template is not None:
            self.iam = local_iam.for_template(
                self.iam_template, self.refs, self.state.path if self.state is not None else None
            )
            if self.iam is not None:
                local_iam.install(self.iam, self.iam_template)
        app = LambdaInvokeMiddleware(
            DomainDispatcherApplication(create_backend_app), self.registry, self._dirty.set, self.iam
        )
        self._server = make_server(
            self.host, self.requested_port, app, threaded=True, request_handler=QuietHandler
        )
        # moto's Step Functions interpreter calls Lambda at http://localhost:$MOTO_PORT: that is us.
        os.environ["MOTO_PORT"] = str(self.port)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="svc-aws", daemon=True
        )
        self._thread.start()
        self._stopping.clear()
        for template in self.templates:
            self.provision(template)
        for step in self.setup:
            step(self)
        if self.state is not None:
            self.restore()
            self._restored = True
            self._dirty.clear()
            self._snapshotter = threading.Thread(
                target=self._snapshot_loop, name="svc-aws-snapshot", daemon=True
            )
            self._snapshotter.start()

    def stop(self) -> None:
        """Persist the state, then stop the server and forget moto's in-memory state."""
        if self._server is None:
            return
        self._stopping.set()
        if self._snapshotter is not None:
            self._snapshotter.join()
            self._snapshotter = None
        try:
            if self._restored:
                self.save()
        finally:
            self._restored = False
            self._server.shutdown()
            self._server.server_close()
            if self._thread is not None:
                self._thread.join()
            self._server = None
            self._release()
            if self.iam is not None:
                local_iam.uninstall()
                self.iam = None

    def _release(self) -> None:
        from moto.core.config import default_user_config
        from moto.moto_api._internal.models import moto_api_backend

        with self._clients_lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()
        if self._saved_sfn_config is not None:
            default_user_config["stepfunctions"] = self._saved_sfn_config  # type: ignore[typeddict-item]
        if self._forget_keys is not None:
            self._forget_keys()
            self._forget_keys = None
        if self._saved_moto_port is None:
            os.environ.pop("MOTO_PORT", None)
        else:
            os.environ["MOTO_PORT"] = self._saved_moto_port
        moto_api_backend.reset()

    def client(self, service: str) -> Any:
        """A boto3 client for this endpoint (cached; boto3 clients are thread-safe)."""
        with self._clients_lock:
            if service not in self._clients:
                if self._session is None:
                    # One session: its loaders cache the endpoint and service models between clients.
                    self._session = boto3.session.Session(
                        aws_access_key_id="testing",
                        aws_secret_access_key="testing",  # noqa: S106 - moto's fake credentials
                        region_name=LOCAL_REGION,
                    )
                self._clients[service] = self._session.client(
                    service,
                    endpoint_url=self.endpoint_url,
                    config=Config(retries={"max_attempts": 1}, s3={"addressing_style": "path"}),
                )
            return self._clients[service]

    # ---- resources from a template

    def provision(self, template: Template) -> dict[str, str]:
        """Create the template's tables, buckets, secrets and state machines; returns their Ref values."""
        refs = {}
        for table in self.create_tables(template):
            refs[table.logical_id] = table.table_name
        for logical, _ in template.resources_of_type("AWS::S3::Bucket"):
            refs[logical] = self.ensure_bucket(template.physical_id(logical))
        for logical, _ in template.resources_of_type("AWS::SecretsManager::Secret"):
            name = template.physical_id(logical).rsplit(":", 1)[-1]
            value = self.state.secret(logical) if self.state else uuid.uuid4().hex
            refs[logical] = self.ensure_secret(name, value)
        for queue in template.queues():
            refs[queue.logical_id] = self.client("sqs").create_queue(
                QueueName=queue.name, Attributes=dict(queue.attributes)
            )["QueueUrl"]
            template.refs[queue.logical_id] = refs[queue.logical_id]
        self.refs.update(refs)
        template.refs.update(refs)
        for machine in template.state_machines():
            create_state_machine(self.client("stepfunctions"), machine)
            refs[machine.logical_id] = machine.arn
        return refs

    def create_tables(self, template: Template) -> list[Any]:
        """Create the template's DynamoDB tables (TTL included) unless they exist; returns their specs."""
        ddb = self.client("dynamodb")
        existing = set(ddb.list_tables()["TableNames"])
        specs = template.tables()
        for spec in specs:
            if spec.table_name not in existing:
                ddb.create_table(**spec.create_kwargs)
            if spec.ttl_attribute:
                ddb.update_time_to_live(
                    TableName=spec.table_name,
                    TimeToLiveSpecification={"Enabled": True, "AttributeName": spec.ttl_attribute},
                )
        return specs

    def ensure_bucket(self, name: str) -> str:
        s3 = self.client("s3")
        try:
            s3.create_bucket(Bucket=name)
        except ClientError as exc:
            if exc.response["Error"]["Code"] not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                raise
        return name

    def ensure_secret(self, name: str, value: str) -> str:
        """Create (or update) a Secrets Manager secret; returns its ARN."""
        sm = self.client("secretsmanager")
        try:
            return str(sm.create_secret(Name=name, SecretString=value)["ARN"])
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ResourceExistsException":
                raise
        sm.put_secret_value(SecretId=name, SecretString=value)
        return str(sm.describe_secret(SecretId=name)["ARN"])

    # ---- persistence

    def _snapshot_loop(self) -> None:
        while not self._stopping.wait(self.snapshot_interval):
            if self._dirty.is_set():
                self._dirty.clear()
                try:
                    self.save()
                except Exception:
                    log.exception("periodic snapshot failed; will retry")
                    self._dirty.set()

    def save(self) -> None:
        """Write every DynamoDB item and S3 object to the state directory (each file replaced atomically)."""
        if self.state is None:
            return
        with self._save_lock:
            self._save_dynamodb(self.state.path / "dynamodb.json")
            self._save_s3(self.state.path / "s3.json", self.state.path / "s3-blobs")

    def restore(self) -> None:
        if self.state is None:
            return
        self._restore_dynamodb(self.state.path / "dynamodb.json")
        self._restore_s3(self.state.path / "s3.json", self.state.path / "s3-blobs")

    def _save_dynamodb(self, file: Path) -> None:
        ddb = self.client("dynamodb")
        tables = []
        for page in ddb.get_paginator("list_tables").paginate():
            for name in page["TableNames"]:
                description = ddb.describe_table(TableName=name)["Table"]
                ttl = ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
                items = [
                    {k: _encode_value(v) for k, v in item.items()}
                    for scan in ddb.get_paginator("scan").paginate(TableName=name)
                    for item in scan["Items"]
                ]
                tables.append(
                    {
                        "create": _create_kwargs(description),
                        "ttl_attribute": ttl.get("AttributeName")
                        if ttl.get("TimeToLiveStatus") == "ENABLED"
                        else None,
                        "items": items,
                    }
                )
        atomic_write(file, json.dumps({"version": _DUMP_VERSION, "tables": tables}).encode())

    def _restore_dynamodb(self, file: Path) -> None:
        if not file.is_file():
            return
        ddb = self.client("dynamodb")
        existing = set(ddb.list_tables()["TableNames"])
        for table in json.loads(file.read_bytes()).get("tables", []):
            name = table["create"]["TableName"]
            if name not in existing:
                ddb.create_table(**table["create"])
                if table.get("ttl_attribute"):
                    ddb.update_time_to_live(
                        TableName=name,
                        TimeToLiveSpecification={"Enabled": True, "AttributeName": table["ttl_attribute"]},
                    )
            for chunk in _chunks(table["items"], 25):
                requests = [
                    {"PutRequest": {"Item": {k: _decode_value(v) for k, v in i.items()}}} for i in chunk
                ]
                try:
                    ddb.batch_write_item(RequestItems={name: requests})
                except ClientError as exc:
                    # A template change (new key schema) can make old items invalid: keep going.
                    log.warning("could not restore items into %s: %s", name, exc)

    def _save_s3(self, manifest: Path, blobs: Path) -> None:
        s3 = self.client("s3")
        previous: dict[tuple[str, str, str], dict[str, Any]] = {}
        if manifest.is_file():
            for bucket in json.loads(manifest.read_bytes()).get("buckets", []):
                for obj in bucket["objects"]:
                    previous[(bucket["name"], obj["key"], obj["etag"])] = obj
        buckets = []
        for bucket in s3.list_buckets()["Buckets"]:
            name = bucket["Name"]
            objects = []
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=name):
                for listed in page.get("Contents", []):
                    known = previous.get((name, listed["Key"], listed["ETag"]))
                    if known and (blobs / known["sha256"]).is_file():
                        objects.append(known)  # unchanged since the last snapshot: no download
                        continue
                    got = s3.get_object(Bucket=name, Key=listed["Key"])
                    body = got["Body"].read()
                    digest = hashlib.sha256(body).hexdigest()
                    if not (blobs / digest).is_file():
                        atomic_write(blobs / digest, body)
                    objects.append(
                        {
                            "key": listed["Key"],
                            "etag": listed["ETag"],
                            "sha256": digest,
                            "content_type": got.get("ContentType"),
                            "metadata": got.get("Metadata") or {},
                        }
                    )
            buckets.append({"name": name, "objects": objects})
        atomic_write(manifest, json.dumps({"version": _DUMP_VERSION, "buckets": buckets}).encode())
        referenced = {obj["sha256"] for bucket in buckets for obj in bucket["objects"]}
        if blobs.is_dir():
            for blob in blobs.iterdir():
                if blob.name not in referenced and not blob.name.startswith("."):
                    blob.unlink(missing_ok=True)

    def _restore_s3(self, manifest: Path, blobs: Path) -> None:
        if not manifest.is_file():
            return
        s3 = self.client("s3")
        for bucket in json.loads(manifest.read_bytes()).get("buckets", []):
            self.ensure_bucket(bucket["name"])
            for obj in bucket["objects"]:
                blob = blobs / obj["sha256"]
                if not blob.is_file():
                    log.warning("missing blob for s3://%s/%s", bucket["name"], obj["key"])
                    continue
                extra = {"ContentType": obj["content_type"]} if obj.get("content_type") else {}
                s3.put_object(
                    Bucket=bucket["name"],
                    Key=obj["key"],
                    Body=blob.read_bytes(),
                    Metadata=obj["metadata"],
                    **extra,
                )
