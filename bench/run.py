"""Benchmark runner: runs the benchmarks registered in bench/bench_*.py and records each one's figures, with
the command and the machine, in its own section of bench/RESULTS.md (replaced on a re-run, appended when new).

    .venv/bin/python -m bench.run                  # every benchmark
    .venv/bin/python -m bench.run cold-import      # some of them
    .venv/bin/python -m bench.run --list
    .venv/bin/python -m bench.run --quick --no-write   # smoke test: fewer runs, RESULTS.md untouched
    .venv/bin/python -m bench.run gateway-latency -o requests=2000
"""

from __future__ import annotations

import argparse
import importlib
import re
import shlex
import sys
import time
import traceback
from pathlib import Path

from bench.harness import REGISTRY, ROOT, Benchmark, Context, Result, machine

HERE = Path(__file__).resolve().parent

RESULTS = HERE / "RESULTS.md"
HEADER = (
    "# Benchmark results\n\n"
    "Written by `python -m bench.run` (see bench/README.md); a section is replaced when its benchmark runs again.\n"
    "Figures are from one machine at one time: compare runs made on the same machine.\n"
)


def load_benchmarks() -> None:
    for module in sorted(HERE.glob("bench_*.py")):
        importlib.import_module(f"bench.{module.stem}")


def run_one(bench: Benchmark, ctx: Context) -> tuple[Result, float]:
    started = time.perf_counter()
    try:
        result = bench.run(ctx)
    except Exception as exc:  # noqa: BLE001 - one broken benchmark must not hide the others' figures
        traceback.print_exc()
        result = Result.failed(f"{type(exc).__name__}: {exc}")
    return result, time.perf_counter() - started


def table(columns: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def section(bench: Benchmark, result: Result, command: str, took: float, host: dict[str, str]) -> str:
    parts = [
        f"<!-- bench:{bench.name}:start -->",
        f"## {bench.name}: {bench.title}",
        "",
        f"Status: **{result.status}** (took {took:.1f} s)",
        "",
        f"Command: `{command}`",
        "",
        "Machine: " + "; ".join(f"{k}: {v}" for k, v in host.items()),
        "",
    ]
    if result.rows:
        parts += [table(result.columns, result.rows), ""]
    parts += [f"- {note}" for note in result.notes]
    if result.notes:
        parts.append("")
    parts.append(f"<!-- bench:{bench.name}:end -->")
    return "\n".join(parts) + "\n"


def update_results(path: Path, name: str, text: str) -> None:
    current = path.read_text(encoding="utf-8") if path.exists() else HEADER
    pattern = re.compile(
        rf"<!-- bench:{re.escape(name)}:start -->.*?<!-- bench:{re.escape(name)}:end -->\n?", re.DOTALL
    )
    if pattern.search(current):
        updated = pattern.sub(lambda _: text, current, count=1)
    else:
        updated = current.rstrip("\n") + "\n\n" + text
    path.write_text(updated, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--quick", action="store_true", help="few runs, for checking that a benchmark works")
    parser.add_argument("--no-write", action="store_true", help=f"do not update {RESULTS.relative_to(ROOT)}")
    parser.add_argument("--results", type=Path, default=RESULTS, help="the results file to update")
    parser.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option for the benchmarks (see bench/README.md)",
    )
    args = parser.parse_args(argv)

    load_benchmarks()
    if args.list:
        for bench in REGISTRY.values():
            print(f"{bench.name:20} {bench.title}")
        return 0
    unknown = [n for n in args.names if n not in REGISTRY]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(REGISTRY)}")
    options = dict(item.split("=", 1) for item in args.option if "=" in item)
    ctx = Context(root=ROOT, quick=args.quick, options=options)
    command = shlex.join(["python", "-m", "bench.run", *(argv if argv is not None else sys.argv[1:])])
    host = machine()

    failed = False
    for name in args.names or list(REGISTRY):
        bench = REGISTRY[name]
        print(f"==> {bench.name}: {bench.title}", flush=True)
        result, took = run_one(bench, ctx)
        text = section(bench, result, command, took, host)
        print(text, flush=True)
        failed = failed or result.status == "failed"
        if not args.no_write and not args.quick:
            update_results(args.results, bench.name, text)
    if not args.no_write and not args.quick:
        print(f"results written to {args.results}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
