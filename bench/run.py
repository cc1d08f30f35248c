"""Benchmark runner: runs the benchmarks registered in bench/bench_*.py and records each one's figures, with
the command and the machine, in its own section of bench/RESULTS.md (replaced on a re-run, appended when new).
Each section lists its benchmark's targets beside the measured values; "Where the targets stand" at the top of
RESULTS.md is then generated from the targets of every section in the file.

    .venv/bin/python -m bench.run                  # every benchmark
    .venv/bin/python -m bench.run cold-import      # some of them
    .venv/bin/python -m bench.run --list
    .venv/bin/python -m bench.run --quick --no-write   # smoke test: fewer runs, RESULTS.md untouched
    .venv/bin/python -m bench.run gateway-latency -o requests=2000
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import os
import re
import shlex
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from bench.harness import REGISTRY, ROOT, Benchmark, Context, Result, Target, machine

HERE = Path(__file__).resolve().parent

RESULTS = HERE / "RESULTS.md"
HEADER = (
    "# Benchmark results\n\n"
    "Written by `python -m bench.run` (`make bench` runs every benchmark; see bench/README.md); a section is\n"
    'replaced when its benchmark runs again, and "Where the targets stand" is generated from the sections.\n'
    "Figures are from one machine at one time: compare runs made on the same machine.\n"
)
SETTINGS = ("SVC_IAM",)
SUMMARY_START = "<!-- targets:start -->"
SUMMARY_END = "<!-- targets:end -->"
TARGET_COLUMNS = ["target", "limit", "measured", "met"]
_SECTION = re.compile(
    r"<!-- bench:(?P<name>[\w.-]+):start -->\n(?P<body>.*?)<!-- bench:(?P=name):end -->", re.DOTALL
)
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


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


def cell(text: str) -> str:
    """Text that stays one cell of a markdown table."""
    return text.replace("\n", " ").replace("|", "\\|")


def table(columns: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def cells(line: str) -> list[str]:
    """The cells of one markdown table row, `\\|` read back as `|`."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [part.strip().replace("\\|", "|") for part in _CELL_SPLIT.split(inner)]


def targets_table(targets: list[Target]) -> str:
    return table(
        TARGET_COLUMNS,
        [[cell(t.what), cell(t.limit), cell(t.measured), "met" if t.met else "**not met**"] for t in targets],
    )


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
    if result.targets:
        parts += ["Targets:", "", targets_table(result.targets), ""]
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


# ---------------------------------------------------------------- "Where the targets stand"


@dataclass
class Section:
    """What "Where the targets stand" reads back from one benchmark's section of RESULTS.md."""

    name: str
    status: str
    host: dict[str, str]
    targets: list[Target]


def read_sections(text: str) -> list[Section]:
    """Every benchmark section of a RESULTS.md text: its name, status, machine fields and targets."""
    found: list[Section] = []
    for match in _SECTION.finditer(text):
        body = match.group("body")
        status = re.search(r"^Status: \*\*(\w+)\*\*", body, re.MULTILINE)
        host_line = re.search(r"^Machine: (.*)$", body, re.MULTILINE)
        host: dict[str, str] = {}
        if host_line:
            for part in host_line.group(1).split("; "):
                key, _, value = part.partition(": ")
                host[key.strip()] = value.strip()
        targets: list[Target] = []
        lines = body.splitlines()
        if "Targets:" in lines:
            rows = lines[lines.index("Targets:") + 1 :]
            while rows and not rows[0].strip():
                rows = rows[1:]
            for line in rows[2:]:  # after the header and the rule
                if not line.startswith("|"):
                    break
                what, limit, measured, met = [*cells(line), "", "", "", ""][:4]
                targets.append(Target(what, limit, measured, met == "met"))
        found.append(Section(match.group("name"), status.group(1) if status else "unknown", host, targets))
    return found


def summary(text: str) -> str:
    """The section "Where the targets stand", generated from the targets recorded in every section of `text`."""
    sections = read_sections(text)
    rows: list[list[str]] = []
    untargeted: list[str] = []
    for sec in sections:
        when = f"{sec.host.get('date', '?')}, {sec.host.get('revision', '?')}"
        if sec.status != "ok":  # a benchmark that failed or could not run has measured nothing
            rows.append(
                [
                    f"`{sec.name}`",
                    "the benchmark runs",
                    "status ok",
                    sec.status,
                    "**not met**",
                    when,
                ]
            )
        if not sec.targets:
            untargeted.append(f"`{sec.name}`")
        for target in sec.targets:
            rows.append(
                [
                    f"`{sec.name}`",
                    cell(target.what),
                    cell(target.limit),
                    cell(target.measured),
                    "met" if target.met else "**not met**",
                    when,
                ]
            )
    missed = sum(1 for row in rows if row[4] != "met")
    parts = [
        SUMMARY_START,
        "## Where the targets stand",
        "",
        "Generated by `python -m bench.run` from the targets each section below records beside its measured "
        "values; each row comes from the run named in its last column.",
        "",
        f"Targets met: **{len(rows) - missed} of {len(rows)}**"
        + (f" ({missed} not met)." if missed else "."),
        "",
    ]
    if rows:
        parts += [
            table(["benchmark", "target", "limit", "measured", "met", "run (date, revision)"], rows),
            "",
        ]
    runs = sorted({(sec.host.get("revision", "?"), sec.host.get("CPU", "?")) for sec in sections})
    if len(runs) == 1:
        revision, cpu = runs[0]
        dates = sorted(sec.host.get("date", "?") for sec in sections)
        parts.append(f"- Every section is from revision {revision} on {cpu}, {dates[0]} to {dates[-1]}.")
    elif runs:
        parts.append(
            "- The sections come from more than one revision or CPU: "
            + "; ".join(f"{revision} on {cpu}" for revision, cpu in runs)
            + ". Run `make bench` to measure them all in one run."
        )
    if untargeted:
        parts.append(f"- Sections with no target recorded: {', '.join(untargeted)}.")
    parts.append(SUMMARY_END)
    return "\n".join(parts) + "\n"


def update_summary(path: Path) -> None:
    """Rewrite "Where the targets stand" of `path` from its sections: in place, or right after the header."""
    current = path.read_text(encoding="utf-8")
    text = summary(current)
    if SUMMARY_START in current and SUMMARY_END in current:
        before, _, rest = current.partition(SUMMARY_START)
        _, _, after = rest.partition(SUMMARY_END)
        updated = before + text.rstrip("\n") + after
    else:
        first = current.find("<!-- bench:")
        if first < 0:
            updated = current.rstrip("\n") + "\n\n" + text
        else:
            updated = current[:first] + text + "\n" + current[first:]
    path.write_text(updated, encoding="utf-8")


def host_now(base: dict[str, str]) -> dict[str, str]:
    """The machine as `machine()` found it at the start of the run, with this moment's date and load."""
    host = dict(base)
    host["date"] = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    if hasattr(os, "getloadavg"):
        host["load"] = "/".join(f"{value:.2f}" for value in os.getloadavg()) + " (1/5/15 min)"
    for name in SETTINGS:  # settings of the local stack or the benchmarks that change what is measured
        if os.environ.get(name):
            host[name] = os.environ[name]
    return host


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
    base = machine()

    failed = False
    for name in args.names or list(REGISTRY):
        bench = REGISTRY[name]
        print(f"==> {bench.name}: {bench.title}", flush=True)
        host = host_now(base)
        result, took = run_one(bench, ctx)
        text = section(bench, result, command, took, host)
        print(text, flush=True)
        failed = failed or result.status == "failed"
        if not args.no_write and not args.quick:
            update_results(args.results, bench.name, text)
            update_summary(args.results)
    if not args.no_write and not args.quick:
        print(summary(args.results.read_text(encoding="utf-8")), flush=True)
        print(f"results written to {args.results}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
