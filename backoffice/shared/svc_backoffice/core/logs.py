"""The log of the whole product: Powertools' Logger (JSON lines to stdout) with secrets redacted from every
record and its appended keys kept per request (`PerContextKeys`). The backoffice logs with `logger`; the
platform's functions with `get_logger` (svc_shared.core.logs). It is the backoffice's because the backoffice
ships alone into merchants' repositories (the platform may import the backoffice's lowest floor, never the other
way round). Imports nothing of ours."""

from __future__ import annotations

import logging
import re
from contextvars import ContextVar
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter

SECRET_KEY = re.compile(
    r"(pass(word)?|secret|token|authorization|cookie|code_verifier|api[_-]?key|private|signature)", re.I
)
REDACTED = "[redacted]"


def redact(value: Any, key: str = "") -> Any:
    """A copy of `value` with every field whose name looks secret replaced by a marker."""
    if key and SECRET_KEY.search(key):
        return REDACTED
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


class _RedactSecrets(logging.Filter):
    _standard = set(vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys()) | {"message", "asctime"}

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, dict):
            record.msg = redact(record.msg)
        for name, value in list(vars(record).items()):
            if name not in self._standard:
                setattr(record, name, redact(value, name))
        return True


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


def get_logger(service: str = "svc", formatter: PerContextKeys | None = None) -> Logger:
    """The service logger (its timestamps RFC 3339 unless a formatter is given); child loggers share its
    handler and redaction filter."""
    logger = Logger(service=service, logger_formatter=formatter or PerContextKeys(use_rfc3339=True))
    if not any(isinstance(f, _RedactSecrets) for f in logger._logger.filters):
        logger._logger.addFilter(_RedactSecrets())
    return logger


_formatter = PerContextKeys()
logger = get_logger("svc-backoffice", _formatter)  # the backoffice's


def start_log_context(**keys: Any) -> None:
    """Log keys of their own for the current context (see PerContextKeys.start_context)."""
    _formatter.start_context(**keys)
