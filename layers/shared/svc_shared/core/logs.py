"""Structured JSON logging with secrets redacted from every record: the product's one log, the backoffice's
(svc_backoffice.core.logs: the formatter keeps its appended keys per request)."""

from svc_backoffice.core.logs import REDACTED, SECRET_KEY, get_logger, redact

__all__ = ["REDACTED", "SECRET_KEY", "get_logger", "redact"]
