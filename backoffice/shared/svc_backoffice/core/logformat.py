"""The request-log formatter of the whole product: Powertools' formatter with its appended keys kept per
`contextvars` context. The backoffice's log (`core/logs.py`) and the platform's (`svc_shared.core.logs`) both
format with it; it is the backoffice's because the backoffice ships alone into merchants' repositories (the
platform may import the backoffice's lowest floor, never the other way round). Imports nothing of ours."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter


class PerContextKeys(LambdaPowertoolsFormatter):
    """Powertools' formatter with its appended keys (function name, request id, project id, shop...) kept per
    `contextvars` context instead of per process: on Lambda that is the same thing (one request at a time),
    and where requests run side by side in one process (the local gateway runs each in a context of its own)
    one request's keys never show in another's log lines."""

    def __init__(self, **kwargs: Any) -> None:
        self._keys: ContextVar[dict[str, Any] | None] = ContextVar("log_keys", default=None)
        self._base: dict[str, Any] = {}
        super().__init__(**kwargs)
        # The keys of the context that configured the logger (service, sampling rate...): a new context
        # starts from a copy of them.
        self._base = self.log_format

    @property
    def log_format(self) -> dict[str, Any]:
        keys = self._keys.get()
        if keys is None:
            keys = dict(self._base)
            self._keys.set(keys)
        return keys

    @log_format.setter
    def log_format(self, value: dict[str, Any]) -> None:
        self._keys.set(value)

    def start_context(self, **keys: Any) -> None:
        """Fresh keys for this context (a hosted request run in a copied context), so keys appended while
        serving it never reach the context it was copied from."""
        self._keys.set({**self._base, **keys})
