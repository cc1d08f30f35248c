"""The table's keys are built by svc_shared.storage.keys alone: their spelling, and that no other module spells one."""

from __future__ import annotations

import re
from pathlib import Path

from svc_shared.storage import keys

ROOT = Path(__file__).resolve().parents[2]
# A key prefix: capitals (and underscores) then '#', inside a string literal, e.g. "USER#" or f"STATS#{...}".
PREFIX = re.compile(r"""(?<![A-Za-z0-9_])f?["'][A-Z][A-Z_]*#""")


def test_keys_are_spelled_as_the_table_stores_them() -> None:
    assert keys.user("u1") == "USER#u1"
    assert keys.email("a@b.c") == "EMAIL#a@b.c"
    assert keys.workspace("w1") == "WS#w1"
    assert keys.member("w1") == "MEMBER#w1" and keys.member("w1").startswith(keys.MEMBER_PREFIX)
    assert keys.project("p1") == "PROJECT#p1"
    assert keys.owner("u1") == "OWNER#u1"
    assert keys.owned_project(42, "p1") == "PROJECT#000000000042#p1"
    assert keys.stats("p1") == "STATS#p1" and keys.day("2026-11-24") == "D#2026-11-24"
    assert keys.rate("signin", "abc") == "RATE#signin#abc" and keys.window(60) == "W#60"
    assert keys.oauth_access("h") == "OAUTH_AT#h" and keys.oauth_refresh("h") == "OAUTH_RT#h"
    assert keys.connection_state("n") == "STATE#n"
    assert keys.analytics_log(7) == "ALOG#007" and keys.log_entry(1500, "ab") == "L#0000000001500#ab"
    assert keys.day_of(keys.day("2026-11-24")) == "2026-11-24"


def test_log_bounds_order_the_log_entries_by_time() -> None:
    bound = keys.log_bound(2000)
    assert keys.log_entry(1999, "ffff") < bound < keys.log_entry(2000, "0000") < keys.LOG_END
    assert keys.log_bound(0) > keys.FOLD  # the fold state is outside every log range
    assert keys.log_time(keys.log_entry(2000, "ab")) == 2000 == keys.log_time(bound)


def test_owned_projects_sort_by_creation_time() -> None:
    older, newer = keys.owned_project(9, "zz"), keys.owned_project(10, "aa")
    assert older < newer


def test_minute_items_of_a_minute_range_fall_inside_its_bounds() -> None:
    low, high = keys.live_minutes("202611241200", "202611241204")
    inside = keys.live_minute("202611241204")
    outside = keys.live_minute("202611241205")
    assert low <= inside <= high
    assert not low <= outside <= high
    assert keys.minute_of(inside) == "202611241204"


def test_no_module_outside_keys_spells_a_key_prefix() -> None:
    offenders = []
    for top in ("layers", "functions", "local"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path.name == "keys.py" and path.parent.name == "storage":
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                code = line.split("#", 1)[0] if line.lstrip().startswith("#") else line
                if PREFIX.search(code):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []


def test_the_prefix_check_catches_a_spelled_key() -> None:
    assert PREFIX.search('item = table.get(f"USER#{user_id}", keys.PROFILE)')
    assert PREFIX.search("prefix = 'MEMBER#'")
    assert not PREFIX.search('anchor = "#top"')
    assert not PREFIX.search('label = "Issue #4"')
