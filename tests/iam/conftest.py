"""The IAM tests: the e2e fixtures (one local stack per session, over HTTP) for the coverage journey, and the
e2e helpers on the import path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

E2E = Path(__file__).resolve().parents[1] / "e2e"
if str(E2E) not in sys.path:
    sys.path.insert(0, str(E2E))

_spec = importlib.util.spec_from_file_location("svc_e2e_conftest", E2E / "conftest.py")
assert _spec is not None and _spec.loader is not None
_e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_e2e)

tls_authority = _e2e.tls_authority
stack = _e2e.stack
gateway = _e2e.gateway


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "test_iam_coverage" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)
