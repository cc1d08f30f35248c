"""What the local stack refused, in the output of the test that failed: the IAM refusals (function, action,
resource) its log gained while the test ran, shown beside the test's own failure rather than only in the log."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REFUSAL = "svc-iam: DENIED "
SECTION = "IAM refusals in the local stack"
_LOG_START = pytest.StashKey[int]()


class StackLog:
    """The stack process's stderr, as a file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def size(self) -> int:
        return self.path.stat().st_size if self.path.is_file() else 0

    def iam_refusals(self, since: int = 0) -> list[str]:
        if not self.path.is_file():
            return []
        with self.path.open("rb") as log:
            log.seek(since)
            text = log.read().decode("utf-8", "replace")
        return [line[len(REFUSAL) :] for line in text.splitlines() if line.startswith(REFUSAL)]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    log = getattr(getattr(item, "funcargs", {}).get("stack"), "log", None)
    if not isinstance(log, StackLog):
        return
    if call.when == "setup":
        item.stash[_LOG_START] = log.size()
    elif report.failed:
        refusals = log.iam_refusals(item.stash.get(_LOG_START, 0))
        if refusals:
            report.sections.append((SECTION, "\n".join(refusals)))
