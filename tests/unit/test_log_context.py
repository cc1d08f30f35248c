"""Log keys belong to the request that appended them, also when requests run side by side in one process."""

from __future__ import annotations

import contextvars
import json
import logging
import threading

from svc_shared.core.logs import get_logger


def test_each_request_logs_its_own_context_keys():
    logger = get_logger()
    formatter = logger.registered_formatter
    together = threading.Barrier(2, timeout=5)
    lines: dict[str, dict[str, object]] = {}

    def request(project_id: str) -> None:
        logger.append_keys(project_id=project_id, function_name=f"fn-{project_id}")
        together.wait()  # both requests have appended their keys before either logs
        record = logging.LogRecord("svc", logging.INFO, __file__, 1, "step done", None, None)
        lines[project_id] = json.loads(formatter.format(record))

    threads = [
        threading.Thread(target=contextvars.Context().run, args=(request, name))
        for name in ("p-one", "p-two")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert lines["p-one"]["project_id"] == "p-one"
    assert lines["p-one"]["function_name"] == "fn-p-one"
    assert lines["p-two"]["project_id"] == "p-two"
    assert lines["p-two"]["service"] == "svc"
    # Nothing leaks into a later request's context either.
    record = logging.LogRecord("svc", logging.INFO, __file__, 1, "later", None, None)
    later = json.loads(contextvars.Context().run(formatter.format, record))
    assert "project_id" not in later
