"""Application metrics in CloudWatch's embedded metric format (EMF): each call prints one JSON line, which
CloudWatch Logs turns into metrics of the namespace `svc` (no API call, nothing to wait for).

Every metric has the dimensions env (SVC_ENV: the stacks of one account stay apart) and service (`svc`), so an
alarm finds exactly one time series; publish metrics also go to a second dimension set with the stage.
Powertools' EMF provider writes the format. One provider per thread, emptied after each line, rather than
Powertools' `Metrics`, whose metric set is shared by the whole process: the local stack runs requests of
several functions side by side in one process, and their metrics must not mix. `services.metrics()` gives
the container's `Metrics` (it knows the env), importing this module with the first metric; the provider
comes with the first line (Powertools' metrics modules are already loaded with its Logger), so a function's
init imports nothing more. Emitting never fails a request (a problem is logged).

The names (docs/operations.md lists them, template.yaml's alarms and dashboard read them):
- PublishStepDuration (ms): one publish step, by stage; PublishSucceeded: a run reached ready (stage: the
  step that got there); PublishFailed: a publish stopped and the project says why (stage: where it stopped).
- McpLatency (ms): one /mcp request (its SampleCount is the request count), and one count per request, by
  outcome: McpOk, McpClientError, McpDenied, McpRateLimited, McpServerError.
"""

from __future__ import annotations

import threading
from typing import Any

from svc_shared.core.logs import get_logger

NAMESPACE = "svc"
SERVICE = "svc"
MCP_OUTCOMES = {
    "ok": "McpOk",
    "client_error": "McpClientError",
    "denied": "McpDenied",
    "rate_limited": "McpRateLimited",
    "server_error": "McpServerError",
}


class Metrics:
    """The metrics one container writes (one per wiring: `services.metrics()`)."""

    def __init__(self, env_name: str) -> None:
        self._env = env_name
        self._local = threading.local()

    def publish_step(self, stage: str, seconds: float, next_stage: str | None) -> None:
        """One publish step ran (next_stage None: it raised)."""
        values: dict[str, tuple[str, float]] = {"PublishStepDuration": ("Milliseconds", seconds * 1000)}
        if next_stage == "ready":
            values["PublishSucceeded"] = ("Count", 1)
        self._emit(values, stage=stage)

    def publish_failed(self, stage: str) -> None:
        """A publish stopped at `stage` and its project records why."""
        self._emit({"PublishFailed": ("Count", 1)}, stage=stage)

    def mcp_request(self, outcome: str, seconds: float) -> None:
        """One /mcp request answered, with its outcome (a key of MCP_OUTCOMES)."""
        self._emit({MCP_OUTCOMES[outcome]: ("Count", 1), "McpLatency": ("Milliseconds", seconds * 1000)})

    def _emit(self, values: dict[str, tuple[str, float]], *, stage: str | None = None) -> None:
        provider = None
        try:
            provider = self._provider()
            if stage is not None:
                provider.add_dimensions(service=SERVICE, stage=stage)
            for name, (unit, value) in values.items():
                provider.add_metric(name=name, unit=unit, value=round(value, 3))
            provider.flush_metrics()  # prints the line and empties the provider
        except Exception as exc:  # noqa: BLE001 - a metric is never worth a failed request
            get_logger().warning(
                "metrics not emitted", extra={"reason": type(exc).__name__, "metrics": list(values)}
            )
        finally:
            if provider is not None and provider.metric_set:
                provider.clear_metrics()  # not flushed (failed, or POWERTOOLS_METRICS_DISABLED): start empty

    def _provider(self) -> Any:
        """This thread's provider (made once: most of a line's cost was making one)."""
        provider = getattr(self._local, "provider", None)
        if provider is None:
            from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import (
                AmazonCloudWatchEMFProvider,
            )

            provider = AmazonCloudWatchEMFProvider(
                namespace=NAMESPACE, service=SERVICE, default_dimensions={"env": self._env}
            )
            self._local.provider = provider
        return provider
