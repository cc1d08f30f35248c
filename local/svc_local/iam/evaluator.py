"""The policy evaluator: @cloud-copilot/iam-simulate in one long-lived node process (iam_eval.mjs)."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from svc_local.iam.model import IamError
from svc_local.serving import close_child

EVALUATOR = Path(__file__).with_name("iam_eval.mjs")


class Evaluator:
    """iam-simulate in one node process; requests go over its stdin, answers come back by id."""

    def __init__(self) -> None:
        node = shutil.which("node")
        if node is None:
            raise IamError("node is not installed: the IAM evaluator needs it (make install-node)")
        self._process = subprocess.Popen(
            [node, str(EVALUATOR)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self._pending: dict[int, Future[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._next = 0
        self._reader = threading.Thread(target=self._read, name="svc-iam-evaluator", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            answer = json.loads(line)
            with self._lock:
                future = self._pending.pop(int(answer["id"]), None)
            if future is not None:
                future.set_result(answer)
        with self._lock:
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_exception(IamError("the IAM evaluator stopped"))

    def evaluate(self, simulation: dict[str, Any]) -> str:
        """'Allowed', 'ExplicitlyDenied' or 'ImplicitlyDenied'."""
        future: Future[dict[str, Any]] = Future()
        with self._lock:
            self._next += 1
            ident = self._next
            self._pending[ident] = future
            assert self._process.stdin is not None
            try:
                self._process.stdin.write(json.dumps({"id": ident, "simulation": simulation}) + "\n")
                self._process.stdin.flush()
            except (OSError, ValueError) as exc:
                self._pending.pop(ident, None)
                raise IamError("the IAM evaluator is not running") from exc
        answer = future.result(timeout=30)
        if answer.get("result") == "Error":
            raise IamError(f"the IAM evaluator refused the request: {json.dumps(answer.get('errors'))}")
        return str(answer["result"])

    def close(self) -> None:
        if self._process.poll() is None:
            close_child(self._process, 5)
        self._reader.join(timeout=5)
        if self._process.stdout is not None:
            self._process.stdout.close()
