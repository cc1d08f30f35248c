"""What a newcomer reads to follow one request: the files and lines of the product's code that one call of a
handler runs. A pytest plugin, idle unless SVC_WALK names the handler (`functions/shops/app.py:handler`):

    SVC_WALK=functions/shops/app.py:handler .venv/bin/pytest tests/integration/test_shops.py

Each call of that handler while the tests run is one walk, printed at the end of the session with what it was
(the method and path of its event, a JSON-RPC method and tool name, or a publish step), the files it went
through and the lines it ran, counted once each (with SVC_WALK_FILES=1, file by file; =lines, with the numbers
of the lines). Only the product's own code counts: the platform's layer, the backoffice and the functions, not
the tests, the local stack or the libraries; and only what the request runs, not the bodies of the modules it
imports on the way the first time (the same request reads the same on a warm instance)."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = tuple(str(ROOT / part) + os.sep for part in ("layers/shared", "backoffice/shared", "functions"))

Tracer = Callable[[FrameType, str, Any], Any]


class Walks:
    def __init__(self, target: str) -> None:
        path, _, self.function = target.partition(":")
        self.path = str(ROOT / path)
        self.done: list[tuple[str, dict[str, set[int]]]] = []
        self._here = threading.local()  # the walk under way in this thread: its handler's frame, its lines

    def start(self) -> None:
        """Trace this thread and the threads started from now on (the embedded AWS runs the publish steps)."""
        threading.settrace(self._global)
        sys.settrace(self._global)

    def stop(self) -> None:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]

    def _global(self, frame: FrameType, event: str, arg: Any) -> Tracer | None:
        if event != "call":
            return None
        code = frame.f_code
        if getattr(self._here, "handler", None) is None:
            if code.co_name != self.function or code.co_filename != self.path:
                return None
            self._here.handler, self._here.lines = frame, {}
            self.done.append((_what(frame.f_locals.get("event")), self._here.lines))
        if not code.co_filename.startswith(PRODUCT) or _importing(frame, self._here.handler):
            return None
        return self._local

    def _local(self, frame: FrameType, event: str, arg: Any) -> Tracer | None:
        lines = getattr(self._here, "lines", None)
        if lines is not None and event in ("call", "line"):
            lines.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
        if event == "return" and frame is getattr(self._here, "handler", None):
            self._here.handler, self._here.lines = None, None
        return self._local


def _importing(frame: FrameType | None, handler: FrameType) -> bool:
    """Whether `frame` runs a module's body (a first import on the request's way), which is not its walk."""
    while frame is not None and frame is not handler:
        if frame.f_code.co_name == "<module>":
            return True
        frame = frame.f_back
    return False


def _what(event: Any) -> str:
    """The request a walk follows, in a few words."""
    if not isinstance(event, dict):
        return "?"
    if "step" in event:
        return f"publish step {event['step']}"
    said = f"{event.get('httpMethod', '')} {event.get('path', '')}".strip()
    try:
        body = json.loads(event.get("body") or "null")
    except (TypeError, ValueError):
        body = None
    if isinstance(body, dict) and "method" in body:
        said += f" {body['method']}"
        name = (body.get("params") or {}).get("name")
        said += f" {name}" if name else ""
    return said


_walks = Walks(os.environ["SVC_WALK"]) if os.environ.get("SVC_WALK") else None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    if _walks is None:
        return (yield)
    _walks.start()
    try:
        return (yield)
    finally:
        _walks.stop()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _walks is None:
        return
    terminalreporter.write_line(f"walks of {os.environ['SVC_WALK']}: files, lines, request")
    for what, lines in _walks.done:
        count = sum(len(numbers) for numbers in lines.values())
        terminalreporter.write_line(f"  {len(lines):3d} {count:5d}  {what}")
        detail = os.environ.get("SVC_WALK_FILES")  # each file of the walk, with how many lines it ran there
        for path, numbers in sorted(lines.items()) if detail else ():
            ran = f"  {sorted(numbers)}" if detail == "lines" else ""  # and which
            terminalreporter.write_line(f"      {len(numbers):5d}  {os.path.relpath(path, ROOT)}{ran}")
