"""Provider sandbox: a real HTTP server that providers (repo_host, db_host, static_host, checkout,
builder) plug routes into, with fault injection (status, delay, dropped connection) applied before routing.

What providers deal in (wire), the fault injection (faults) and the server (server); this package gives their
public names."""

from svc_local.sandbox.faults import Fault, FaultInjector, parse_fault
from svc_local.sandbox.server import DEFAULT_PORT, MAX_BODY_BYTES, Sandbox
from svc_local.sandbox.wire import (
    Provider,
    Refused,
    SandboxRequest,
    SandboxResponse,
    SandboxRoute,
    json_response,
)

__all__ = [
    "DEFAULT_PORT",
    "MAX_BODY_BYTES",
    "Fault",
    "FaultInjector",
    "Provider",
    "Refused",
    "Sandbox",
    "SandboxRequest",
    "SandboxResponse",
    "SandboxRoute",
    "json_response",
    "parse_fault",
]
