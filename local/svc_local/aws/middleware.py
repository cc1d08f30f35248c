"""The embedded AWS's own front, before moto: Lambda Invoke answered by the local runtime, presigned S3 URLs
checked, IAM enforced on the functions' calls, and what writes marks the snapshot stale."""

from __future__ import annotations

import io
import json
import re
import sys
import threading
import traceback
import uuid
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import unquote

from svc_local.aws.s3presign import PresignError, is_presigned, refuse, verify
from svc_local.iam import Iam
from svc_local.runtime import FunctionRegistry, LambdaContext, error_payload
from svc_local.template import FunctionSpec

# The one key pair the local stack hands out (functions, CLI, tests): what S3 would check presigned URLs with.
LOCAL_CREDENTIALS = {"testing": "testing"}
_INVOKE_PATH = re.compile(r"^/2015-03-31/functions/(?P<name>[^/]+)/invocations/?$")
# JSON-protocol actions that only read: they do not make the snapshot stale.
_READ_ACTIONS = ("Get", "Describe", "List", "Query", "Scan", "BatchGet")
# moto's Step Functions interpreter calls Lambda with this access key: the state machine's role session.
_STEP_FUNCTIONS_KEY = "ak"
_CREDENTIAL = re.compile(r"Credential=(?P<key>[^/,\s]+)/")
_START_EXECUTION_TARGETS = {"AWSStepFunctions.StartExecution", "AWSStepFunctions.StartSyncExecution"}

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


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
        if is_presigned(environ):
            try:
                verify(environ, LOCAL_CREDENTIALS)
            except PresignError as exc:
                _drain(environ)
                return refuse(exc, start_response)
            denial = self._presigned_denial(environ)
            if denial is not None:
                _drain(environ)
                return refuse(PresignError("AccessDenied", denial), start_response)
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
