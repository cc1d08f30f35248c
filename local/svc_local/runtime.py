"""In-process Lambda runtime: load a function's handler by module path and build its context object.

As on Lambda, an instance of a function serves one request at a time: a request that arrives while every
instance of its function is busy gets a new instance (a fresh copy of the handler module, so module-level
state such as a Powertools resolver's current event is never shared by requests that run at the same time),
and each instance runs its requests in a `contextvars` context of its own (log keys, the current event, a
database connection: the instance's, never another's).
"""

from __future__ import annotations

import contextvars
import importlib
import importlib.util
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

from svc_local.template import FunctionSpec

Handler = Callable[[Any, Any], Any]

# The function whose code is running (set in each instance's context): what the IAM checks attribute AWS
# calls to (svc_local.iam). Outside any function (the local stack's own calls, tests' setup) it is None.
current_function: contextvars.ContextVar[FunctionSpec | None] = contextvars.ContextVar(
    "svc_local_current_function", default=None
)


@contextmanager
def acting_as(spec: FunctionSpec) -> Iterator[None]:
    """Run a block with `spec`'s identity (what Lambda does for it outside its code: the SQS event source
    mapping polls with the function's role)."""
    token = current_function.set(spec)
    try:
        yield
    finally:
        current_function.reset(token)


@dataclass
class LambdaContext:
    """The attributes of the Python runtime's context object that handlers and Powertools read."""

    function_name: str
    invoked_function_arn: str
    memory_limit_in_mb: int
    timeout_seconds: int
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    identity: Any = None
    client_context: Any = None
    _deadline: float = 0.0

    def __post_init__(self) -> None:
        self._deadline = time.monotonic() + self.timeout_seconds
        self.log_group_name = f"/aws/lambda/{self.function_name}"
        self.log_stream_name = time.strftime("%Y/%m/%d/[$LATEST]") + uuid.uuid4().hex

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))

    @classmethod
    def for_function(cls, spec: FunctionSpec, request_id: str | None = None) -> LambdaContext:
        return cls(
            function_name=spec.function_name,
            invoked_function_arn=spec.arn,
            memory_limit_in_mb=spec.memory_size,
            timeout_seconds=spec.timeout,
            aws_request_id=request_id or str(uuid.uuid4()),
        )


@dataclass
class _Instance:
    """One instance of a function: its handler and its execution context, used by one request at a time."""

    handler: Handler
    context: contextvars.Context


class FunctionRegistry:
    """Functions by logical id, function name and ARN; handlers imported once, on first use (a cold start)."""

    def __init__(self, functions: Iterable[FunctionSpec] = ()) -> None:
        self._by_name: dict[str, FunctionSpec] = {}
        self._handlers: dict[str, Handler] = {}
        self._injected: set[str] = set()
        self._idle: dict[str, list[_Instance]] = {}
        self._instances: dict[str, int] = {}
        self._lock = threading.Lock()
        for spec in functions:
            self.add(spec)

    def add(self, spec: FunctionSpec, handler: Handler | None = None) -> None:
        """Register a function; `handler` short-cuts the import (tests register callables directly)."""
        with self._lock:
            for key in (spec.logical_id, spec.function_name, spec.arn):
                self._by_name[key] = spec
            if handler is not None:
                self._handlers[spec.logical_id] = handler
                self._injected.add(spec.logical_id)

    def find(self, name_or_arn: str) -> FunctionSpec | None:
        """Accepts a name, a full or partial ARN, with or without a :qualifier."""
        if name_or_arn in self._by_name:
            return self._by_name[name_or_arn]
        parts = name_or_arn.split(":")
        if len(parts) >= 7 and parts[0] == "arn":
            return self._by_name.get(parts[6])
        if len(parts) >= 3 and parts[1] == "function":  # 123456789012:function:Name[:qualifier]
            return self._by_name.get(parts[2])
        return self._by_name.get(parts[0])

    def names(self) -> Mapping[str, FunctionSpec]:
        return dict(self._by_name)

    def handler(self, spec: FunctionSpec) -> Handler:
        cached = self._handlers.get(spec.logical_id)
        if cached is not None:
            return cached
        # The import system serialises concurrent imports of one module; the cache only saves the lookup.
        module = importlib.import_module(spec.module)
        handler = getattr(module, spec.attribute)
        if not callable(handler):
            raise TypeError(f"{spec.module}.{spec.attribute} is not callable")
        with self._lock:
            self._handlers[spec.logical_id] = handler
        return handler

    def instance_count(self, spec: FunctionSpec) -> int:
        """How many instances of the function exist (each serves one request at a time)."""
        with self._lock:
            return self._instances.get(spec.logical_id, 0)

    @contextmanager
    def instance(self, spec: FunctionSpec) -> Iterator[_Instance]:
        """An idle instance of the function, held for one request; a new one when all are busy."""
        key = spec.logical_id
        with self._lock:
            idle = self._idle.setdefault(key, [])
            handler = idle.pop() if idle else None
            number = self._instances.get(key, 0)
            if handler is None:
                self._instances[key] = number + 1
        if handler is None:
            try:
                context = contextvars.Context()
                context.run(current_function.set, spec)
                handler = _Instance(self._new_instance(spec, number), context)
            except BaseException:
                with self._lock:
                    self._instances[key] -= 1
                raise
        try:
            yield handler
        finally:
            with self._lock:
                self._idle[key].append(handler)

    def _new_instance(self, spec: FunctionSpec, number: int) -> Handler:
        # The first instance is the module as imported (what tests patch); handlers registered as callables
        # cannot be copied and serve every instance.
        first = self.handler(spec)
        if number == 0 or spec.logical_id in self._injected:
            return first
        original = sys.modules[spec.module]
        origin = original.__spec__.origin if original.__spec__ else None
        name = f"{spec.module}__instance{number}"
        module_spec = importlib.util.spec_from_file_location(name, origin) if origin else None
        if module_spec is None or module_spec.loader is None:
            return first
        module = importlib.util.module_from_spec(module_spec)
        module.__package__ = original.__package__
        sys.modules[name] = module  # dataclasses and pickling look their module up by name
        try:
            module_spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        handler = getattr(module, spec.attribute)
        if not callable(handler):
            raise TypeError(f"{spec.module}.{spec.attribute} is not callable")
        return cast(Handler, handler)

    def invoke(self, spec: FunctionSpec, event: Any, context: Any) -> Any:
        """Run one request on an instance of its own, in that instance's context (as on Lambda, what one
        request leaves in it, a database connection or log keys, the instance's next request finds; a
        request running at the same time on another instance never sees it)."""
        with self.instance(spec) as instance:
            return instance.context.run(instance.handler, event, context)


def error_payload(exc: BaseException, request_id: str) -> dict[str, Any]:
    """The payload Lambda returns for an unhandled exception."""
    return {
        "errorMessage": str(exc),
        "errorType": getattr(exc, "lambda_error_type", type(exc).__name__),
        "requestId": request_id,
        "stackTrace": traceback.format_tb(exc.__traceback__),
    }
