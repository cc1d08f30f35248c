"""A test that fails because the local stack refused an AWS call shows the refusal (function, action,
resource) in its own output, not only in the stack's log."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

E2E = Path(__file__).resolve().parent
REFUSED = (
    "User: arn:aws:sts::123456789012:assumed-role/svc-local-WorkspaceFunctionRole-local/WorkspaceFunction is "
    "not authorized to perform: states:StartExecution on resource: arn:aws:states:us-east-1:123456789012:"
    "stateMachine:svc-dev-publish (function WorkspaceFunction, role WorkspaceFunctionRole)"
)


def test_a_failing_test_shows_the_refusals_its_stack_logged_while_it_ran(pytester: pytest.Pytester):
    log = pytester.path / "stack-stderr.log"
    log.write_text("svc-iam: DENIED an earlier test's refusal\n")
    pytester.makeconftest(
        f"""
import sys
sys.path.insert(0, {str(E2E)!r})
import pytest
from stacklog import StackLog, pytest_runtest_makereport
from types import SimpleNamespace

@pytest.fixture(scope="session")
def stack():
    return SimpleNamespace(log=StackLog(__import__("pathlib").Path({str(log)!r})))
"""
    )
    pytester.makepyfile(
        f"""
def test_publish(stack):
    with stack.log.path.open("a") as out:
        out.write("a line of its own\\n")
        out.write("svc-iam: DENIED " + {REFUSED!r} + "\\n")
    assert False, "the publish never started"

def test_passes(stack):
    pass
"""
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1)
    output = result.stdout.str()
    assert "IAM refusals in the local stack" in output
    assert "WorkspaceFunction is not authorized to perform: states:StartExecution" in output
    assert "an earlier test's refusal" not in output  # only what the stack refused while this test ran
