"""The backoffice's log: Powertools' Logger (JSON lines to stdout) with its appended keys kept per request."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter


class _PerContextKeys(LambdaPowertoolsFormatter):
    """Powertools' formatter with its appended keys kept per `contextvars` context instead of per process
    (the same thing on Lambda): requests served side by side in one process (the local gateway) never show
    each other's keys."""

    def __init__(self, **kwargs: Any) -> None:
        self._keys: ContextVar[dict[str, Any] | None] = ContextVar("backoffice_log_keys", default=None)
        self._base: dict[str, Any] = {}
        super().__init__(**kwargs)
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


_formatter = _PerContextKeys()
logger = Logger(service="svc-backoffice", logger_formatter=_formatter)


def start_log_context(**keys: Any) -> None:
    """Log keys of their own for the current context (see _PerContextKeys.start_context)."""
    _formatter.start_context(**keys)
