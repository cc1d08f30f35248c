"""In-process Lambda runtime: load a function's handler by module path and build its context object."""

from __future__ import annotations

import importlib
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from svc_local.template import FunctionSpec

Handler = Callable[[Any, Any], Any]


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


class FunctionRegistry:
    """Functions by logical id, function name and ARN; handlers imported once, on first use (a cold start)."""

    def __init__(self, functions: Iterable[FunctionSpec] = ()) -> None:
        self._by_name: dict[str, FunctionSpec] = {}
        self._handlers: dict[str, Handler] = {}
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


def error_payload(exc: BaseException, request_id: str) -> dict[str, Any]:
    """The payload Lambda returns for an unhandled exception."""
    return {
        "errorMessage": str(exc),
        "errorType": getattr(exc, "lambda_error_type", type(exc).__name__),
        "requestId": request_id,
        "stackTrace": traceback.format_tb(exc.__traceback__),
    }
