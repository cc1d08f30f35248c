"""Each platform function's handler is thin (issue 27: its routes live on Router modules in svc_shared, the /mcp
admission pipeline in svc_shared.mcp), and what it loads at a cold start stays lean: imported in a fresh
interpreter the way Lambda imports it (the CodeUri directory and the shared layer on sys.path)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 60


def _loaded_by(function: str) -> list[str]:
    """The modules importing functions/<function>/app.py loads, in a fresh interpreter."""
    probe = (
        "import json, sys\n"
        f"sys.path[:0] = [{str(ROOT / 'functions' / function)!r}, {str(ROOT / 'layers/shared')!r}]\n"
        "import app\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "us-east-1", "LANG": "C.UTF-8"}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_function_handlers_are_at_most_60_lines() -> None:
    handlers = sorted((ROOT / "functions").glob("*/app.py"))
    assert len(handlers) >= 10
    long = {path.parent.name: len(path.read_text().splitlines()) for path in handlers}
    assert {name: lines for name, lines in long.items() if lines > MAX_LINES} == {}


MAX_MODULE_LINES = 400
# Modules over the limit whose split into a package is under way; each entry goes when its module is split (the
# test then says so).
KNOWN_LONG: set[str] = set()


@pytest.mark.parametrize(
    "package", ["layers/shared/svc_shared", "backoffice/shared/svc_backoffice", "local/svc_local"]
)
def test_no_module_of_the_shared_packages_or_the_local_stack_is_over_400_lines(package: str) -> None:
    root = ROOT / package
    modules = [p for p in root.rglob("*.py") if "backoffice_template" not in p.parts]  # `make build` output
    assert len(modules) > 50
    lines = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in modules}
    long = {name for name, count in lines.items() if count > MAX_MODULE_LINES}
    assert long - KNOWN_LONG == set()
    known_here = {name for name in KNOWN_LONG if name.startswith(f"{package}/")}
    assert known_here - long == set(), "a known long module is split: delete its KNOWN_LONG entry"


@pytest.mark.parametrize("function", ["mcp", "shops"])
def test_handlers_without_a_resolver_do_not_load_the_event_handler(function: str) -> None:
    """/mcp answers its proxy event directly and the shops function hands it to the backoffice: neither loads
    Powertools' event handler (the largest import of a resolver function's cold start)."""
    loaded = _loaded_by(function)
    assert "app" in loaded and "svc_shared.wiring.services" in loaded
    assert [m for m in loaded if m.startswith("aws_lambda_powertools.event_handler")] == []


def test_the_mcp_handler_loads_its_admission_pipeline_and_tools() -> None:
    loaded = _loaded_by("mcp")
    assert {"svc_shared.mcp.admission", "svc_shared.mcp.endpoint", "svc_shared.mcp.tools"} <= set(loaded)


def test_the_shops_handler_loads_the_backoffice_only_when_a_shop_is_served() -> None:
    loaded = _loaded_by("shops")
    assert "svc_shared.routes.shops" in loaded
    # Of the backoffice, only its lowest floor (the log every function logs with); its routers,
    # models and database pool load with the first shop served.
    backoffice = [m for m in loaded if m.split(".")[0] == "svc_backoffice"]
    assert "svc_backoffice.core.logs" in backoffice
    assert [m for m in backoffice if m != "svc_backoffice" and not m.startswith("svc_backoffice.core")] == []
    assert "svc_shared.domain.shops" not in loaded  # loaded with the Shops service, on the first request
