"""The benchmark runner's RESULTS.md: each section records its targets, and "Where the targets stand" is
generated from the targets of every section in the file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import run
from bench.harness import REGISTRY, Benchmark, Context, Result, Target, benchmark

HOST = {
    "CPU": "Test CPU 9000",
    "cores": "2 (2 usable)",
    "date": "2026-11-26 10:00 UTC",
    "revision": "abc1234",
}


def _section(name: str, result: Result, host: dict[str, str] = HOST) -> str:
    return run.section(Benchmark(name, f"what {name} measures", lambda ctx: result), result, "cmd", 1.0, host)


def test_a_section_lists_its_targets_beside_the_measured_values() -> None:
    text = _section(
        "cold-import",
        Result(
            columns=["function", "ms"],
            rows=[["A", "99.0"]],
            targets=[
                Target("AccountsFunction import median", "< 150 ms", "99.0 ms", True),
                Target("ShopsFunction import median", "< 150 ms", "412.3 ms", False),
            ],
        ),
    )

    assert "| target | limit | measured | met |" in text
    assert "| AccountsFunction import median | < 150 ms | 99.0 ms | met |" in text
    assert "| ShopsFunction import median | < 150 ms | 412.3 ms | **not met** |" in text
    assert (
        "Machine: CPU: Test CPU 9000; cores: 2 (2 usable); date: 2026-11-26 10:00 UTC; revision: abc1234"
        in text
    )


def test_the_summary_has_every_sections_targets_with_met_or_not_and_the_run_they_come_from() -> None:
    text = (
        run.HEADER
        + "\n"
        + _section(
            "stack-start", Result(targets=[Target("restart to ready, median", "< 5 s", "2.01 s", True)])
        )
        + "\n"
        + _section(
            "gateway-load",
            Result(targets=[Target("authenticated /mcp answers 429", "0", "3 of 768 | spread", False)]),
            {**HOST, "date": "2026-11-26 10:05 UTC"},
        )
    )

    summary = run.summary(text)

    assert "Targets met: **1 of 2** (1 not met)." in summary
    assert (
        "| `stack-start` | restart to ready, median | < 5 s | 2.01 s | met | 2026-11-26 10:00 UTC, abc1234 |"
        in summary
    )
    # a `|` inside a measured value survives the round trip through the section's table
    assert (
        "| `gateway-load` | authenticated /mcp answers 429 | 0 | 3 of 768 \\| spread | **not met** "
        "| 2026-11-26 10:05 UTC, abc1234 |" in summary
    )
    assert (
        "Every section is from revision abc1234 on Test CPU 9000, 2026-11-26 10:00 UTC to 2026-11-26 10:05 UTC."
        in summary
    )
    assert [t.measured for s in run.read_sections(text) for t in s.targets] == ["2.01 s", "3 of 768 | spread"]


def test_the_summary_names_sections_from_other_runs_failed_ones_and_ones_without_targets() -> None:
    text = (
        _section("template-push", Result(targets=[Target("repo_host requests per push", "4", "4", True)]))
        + _section("publish-run", Result.failed("RuntimeError: boom"), {**HOST, "revision": "def5678"})
        + _section("mcp-vs-sdk", Result(rows=[["x"]], columns=["a"]))
    )

    summary = run.summary(text)

    assert "| `publish-run` | the benchmark runs | status ok | failed | **not met** |" in summary
    assert "Targets met: **1 of 2** (1 not met)." in summary
    assert "more than one revision or CPU: abc1234 on Test CPU 9000; def5678 on Test CPU 9000" in summary
    assert "Sections with no target recorded: `publish-run`, `mcp-vs-sdk`." in summary


def test_update_summary_replaces_the_generated_section_and_leaves_the_others(tmp_path: Path) -> None:
    path = tmp_path / "RESULTS.md"
    first = _section(
        "stack-start", Result(targets=[Target("restart to ready, median", "< 5 s", "6.20 s", False)])
    )
    path.write_text(run.HEADER + "\n" + first, encoding="utf-8")

    run.update_summary(path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith(run.HEADER + "\n" + run.SUMMARY_START)
    assert text.index(run.SUMMARY_END) < text.index("<!-- bench:stack-start:start -->")
    assert "6.20 s | **not met**" in text

    again = _section(
        "stack-start", Result(targets=[Target("restart to ready, median", "< 5 s", "2.10 s", True)])
    )
    run.update_results(path, "stack-start", again)
    run.update_summary(path)
    text = path.read_text(encoding="utf-8")
    assert text.count("## Where the targets stand") == 1
    assert "6.20 s" not in text
    assert "| `stack-start` | restart to ready, median | < 5 s | 2.10 s | met |" in text
    assert "Targets met: **1 of 1**." in text


@pytest.fixture
def fake_benchmark() -> Iterator[str]:
    run.load_benchmarks()  # main() loads them too; a fake registered before would be seen twice otherwise

    def measure(ctx: Context) -> Result:
        seen = 3 if ctx.quick else 30
        return Result(
            columns=["n"],
            rows=[[str(seen)]],
            targets=[Target("samples", "at least 20", str(seen), seen >= 20)],
        )

    REGISTRY["fake-bench"] = Benchmark("fake-bench", "a fake benchmark", measure)
    yield "fake-bench"
    del REGISTRY["fake-bench"]


def test_a_run_writes_its_section_and_the_summary_and_a_quick_run_writes_nothing(
    fake_benchmark: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "RESULTS.md"

    assert run.main([fake_benchmark, "--quick", "--results", str(path)]) == 0
    assert not path.exists()
    assert "| samples | at least 20 | 3 | **not met** |" in capsys.readouterr().out

    assert run.main([fake_benchmark, "--results", str(path)]) == 0
    text = path.read_text(encoding="utf-8")
    assert "| `fake-bench` | samples | at least 20 | 30 | met |" in text
    assert "Targets met: **1 of 1**." in text
    assert "load: " in text  # the machine's load when the benchmark started


def test_a_benchmark_whose_import_fails_is_unavailable_with_the_reason_it_declared() -> None:
    @benchmark(
        "fake-missing", "needs a missing package", on_import_error="the missing package is not importable"
    )
    def needs_missing(ctx: Context) -> Result:
        import svc_no_such_package  # noqa: F401

        return Result()

    try:
        result = REGISTRY["fake-missing"].run(Context(root=Path(".")))
    finally:
        del REGISTRY["fake-missing"]
    assert result.status == "unavailable"
    assert result.notes[0].startswith("not measured: the missing package is not importable (No module named")
