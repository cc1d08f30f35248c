"""What the local stack reads from a template, one frozen record per resource it serves: functions, routes,
queues and their event sources, tables and state machines."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from svc_local.template.loading import LOCAL_ACCOUNT_ID, LOCAL_REGION


@dataclass(frozen=True)
class FunctionSpec:
    logical_id: str
    function_name: str
    code_uri: str
    handler: str
    module: str
    attribute: str
    timeout: int = 3
    memory_size: int = 128
    environment: Mapping[str, Any] = field(default_factory=dict)

    @property
    def arn(self) -> str:
        return f"arn:aws:lambda:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:function:{self.function_name}"


@dataclass(frozen=True)
class Route:
    path: str
    method: str  # upper case; ANY matches every method
    function: FunctionSpec
    event_name: str
    api_id: str
    binary_media_types: tuple[str, ...] = ()
    # "rest": an Api event (REST API, its proxy event); "http": an HttpApi event (HTTP API, payload format 1.0).
    kind: str = "rest"

    @property
    def logical_id(self) -> str:
        return self.function.logical_id

    @property
    def module(self) -> str:
        return self.function.module

    @property
    def attribute(self) -> str:
        return self.function.attribute


@dataclass(frozen=True)
class QueueSpec:
    logical_id: str
    name: str
    attributes: Mapping[str, str]
    dead_letter: str | None  # logical id of its dead-letter queue


@dataclass(frozen=True)
class SqsEventSource:
    function: FunctionSpec
    event_name: str
    queue_logical_id: str
    batch_size: int
    window_seconds: float
    partial_failures: bool


@dataclass(frozen=True)
class TableSpec:
    logical_id: str
    create_kwargs: Mapping[str, Any]
    ttl_attribute: str | None

    @property
    def table_name(self) -> str:
        return str(self.create_kwargs["TableName"])


@dataclass(frozen=True)
class StateMachineSpec:
    logical_id: str
    name: str
    definition: Mapping[str, Any]
    role_arn: str
    type: str = "STANDARD"

    @property
    def arn(self) -> str:
        return f"arn:aws:states:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:stateMachine:{self.name}"
