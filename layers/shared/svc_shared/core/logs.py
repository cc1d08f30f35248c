"""Structured JSON logging (Powertools Logger) with secrets redacted from every record, formatted by the
product's one request-log formatter (svc_backoffice.core.logformat: its keys kept per request)."""

from __future__ import annotations

import logging
import re
from typing import Any

from aws_lambda_powertools import Logger

from svc_backoffice.core.logformat import PerContextKeys

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


def get_logger(service: str = "svc") -> Logger:
    """The service logger; child loggers share its handler and redaction filter."""
    logger = Logger(service=service, use_rfc3339=True, logger_formatter=PerContextKeys(use_rfc3339=True))
    if not any(isinstance(f, _RedactSecrets) for f in logger._logger.filters):
        logger._logger.addFilter(_RedactSecrets())
    return logger
