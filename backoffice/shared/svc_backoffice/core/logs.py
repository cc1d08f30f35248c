"""The backoffice's log: Powertools' Logger (JSON lines to stdout) with its appended keys kept per request
(`core/logformat.py`, the formatter the platform's log uses too)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger

from svc_backoffice.core.logformat import PerContextKeys

_formatter = PerContextKeys()
logger = Logger(service="svc-backoffice", logger_formatter=_formatter)


def start_log_context(**keys: Any) -> None:
    """Log keys of their own for the current context (see PerContextKeys.start_context)."""
    _formatter.start_context(**keys)
