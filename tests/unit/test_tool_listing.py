"""The tools/list answer is a contract with every MCP client (and what a model reads to choose a tool): the
order, names, titles, descriptions, input and output schemas, annotations and MCP Apps `_meta.ui` of every tool
are pinned, byte for byte, by tests/unit/golden/tools_list.json (the answer a view-rendering client gets,
indented for review). A change to a tool changes this file on purpose; write it again with
`source .envrc-wt && .venv/bin/python tests/unit/test_tool_listing.py` and review the diff."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).parent / "golden" / "tools_list.json"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _golden() -> dict[str, Any]:
    golden: dict[str, Any] = json.loads(GOLDEN.read_text())
    return golden


def test_the_listing_for_view_rendering_clients_is_the_pinned_one() -> None:
    from svc_shared.mcp.tools import registry

    assert registry.listing(ui=True) == _compact(_golden())


def test_other_clients_get_the_model_tools_without_their_ui_meta() -> None:
    from svc_shared.mcp.tools import registry

    plain = [
        {key: value for key, value in tool.items() if key != "_meta"}
        for tool in _golden()["tools"]
        if "model" in tool.get("_meta", {}).get("ui", {}).get("visibility", ["model"])
    ]
    assert registry.listing() == _compact({"tools": plain})
    assert len(plain) == 26 and len(_golden()["tools"]) == 28


def test_extra_members_follow_the_tools() -> None:
    from svc_shared.mcp.tools import registry

    listing = json.loads(registry.listing({"ttlMs": 3_600_000}))
    assert list(listing) == ["tools", "ttlMs"] and listing["ttlMs"] == 3_600_000


if __name__ == "__main__":
    from svc_shared.mcp.tools import registry

    GOLDEN.write_text(json.dumps(json.loads(registry.listing(ui=True)), indent=2) + "\n")
    print(f"wrote {GOLDEN}")
