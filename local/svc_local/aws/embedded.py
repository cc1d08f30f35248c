"""Embedded AWS: moto's server in-process (state machines really execute), Lambda Invoke answered by our own
handlers, and DynamoDB items and S3 objects persisted in the state directory across restarts."""

from __future__ import annotations

import json
import logging
import os
import threading
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from svc_local import iam as local_iam
from svc_local.aws.middleware import LambdaInvokeMiddleware
from svc_local.aws.snapshot import restore_dynamodb, restore_s3, save_dynamodb, save_s3
from svc_local.iam import Iam
from svc_local.kmskeys import keep_keys
from svc_local.runtime import FunctionRegistry
from svc_local.serving import StartStop
from svc_local.state import StateDir
from svc_local.template import LOCAL_REGION, StateMachineSpec, Template

DEFAULT_PORT = 4566
SNAPSHOT_INTERVAL_SECONDS = 5.0

log = logging.getLogger("svc_local.aws")


def create_state_machine(stepfunctions: Any, machine: StateMachineSpec) -> None:
    """Create a template's state machine through a Step Functions client."""
    stepfunctions.create_state_machine(
        name=machine.name,
        definition=json.dumps(machine.definition),
        roleArn=machine.role_arn,
        type=machine.type,
    )


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
            save_dynamodb(self.client("dynamodb"), self.state.path / "dynamodb.json")
            save_s3(self.client("s3"), self.state.path / "s3.json", self.state.path / "s3-blobs")

    def restore(self) -> None:
        if self.state is None:
            return
        restore_dynamodb(self.client("dynamodb"), self.state.path / "dynamodb.json")
        blobs = self.state.path / "s3-blobs"
        restore_s3(self.client("s3"), self.state.path / "s3.json", blobs, self.ensure_bucket)
