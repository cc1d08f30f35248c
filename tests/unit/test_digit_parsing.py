"""Numbers read from requests and from other servers' headers: a character that str.isdigit() accepts but
int() does not (a superscript, as a fuzzed request sent to the backoffice search) is refused or ignored like any
other non-number, never an unhandled error."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_a_superscript_timestamp_is_a_malformed_signature():
    from svc_shared.providers.checkout import SignatureError, verify_signature

    with pytest.raises(SignatureError, match="malformed"):
        verify_signature(b"{}", "t=\u00b9,v1=abc", "secret", now=1.0)


@pytest.mark.parametrize("header", ["\u00b9", "\u00b2\u00b3", "12\u00b9"])
def test_a_superscript_retry_after_is_the_default_wait(header):
    from svc_shared.providers.http import _seconds

    assert _seconds(header, 7) == 7
    assert _seconds("3", 7) == 3


def test_a_superscript_traffic_range_falls_back_to_30_days_with_a_message():
    from svc_shared.workspace.routes.traffic import _range

    start, end, message = _range({"days": "\u00b9"}, date(2026, 11, 27))
    assert (start, end) == (date(2026, 10, 29), date(2026, 11, 27))
    assert message
    assert _range({"days": "7"}, date(2026, 11, 27)) == (date(2026, 11, 21), date(2026, 11, 27), None)


def test_no_shipped_module_guards_int_with_isdigit():
    # str.isdigit() is true for superscripts and other digits int() refuses; isdecimal() is exactly what int()
    # reads. The one isdigit() left asks whether a word holds a digit character, not what it is worth.
    found = []
    for folder in ("layers/shared", "backoffice/shared", "functions", "backoffice/functions"):
        for path in (ROOT / folder).rglob("*.py"):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if re.search(r"\.isdigit\(\)", line) and "ch.isdigit()" not in line:
                    found.append(f"{path.relative_to(ROOT)}:{number}")
    assert found == []
