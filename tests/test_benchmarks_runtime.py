"""Smoke tests of the runtime benchmarks at tiny sizes: they run end to end and print their report.

Timing figures are the benchmarks' business, not asserted here; what is asserted is what the reports
promise whatever the machine: every configuration measured, no failed runs against a healthy server,
scripted runs that load neither `openai` nor `tiktoken`, and fault runs that end cleanly with every
server request accounted for.
"""

from __future__ import annotations

import re

import pytest

from benchmarks import concurrency, faults, instructions, overhead, service_load


def _summary(out: str) -> str:
    lines = [line for line in out.splitlines() if line.startswith("SUMMARY ")]
    assert len(lines) == 1, out
    return lines[0]


def _table_rows(out: str, first_cells: tuple[str, ...]) -> dict[str, list[str]]:
    """Table lines by their first cell (cells split on runs of two or more spaces)."""
    rows = {}
    for line in out.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells and cells[0] in first_cells:
            rows[cells[0]] = cells
    return rows


def test_overhead_measures_both_catalogues_without_loading_openai_or_tiktoken(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert overhead.main(["--runs", "20", "--warmup", "3", "--profile-runs", "3", "--rounds", "2"]) == 0
    out = capsys.readouterr().out

    rows = _table_rows(out, ("S1 + 2 tools", "S1 + 200 tools"))
    assert list(rows) == ["S1 + 2 tools", "S1 + 200 tools"], out
    for name, cells in rows.items():
        assert cells[1] == "20", (name, cells)  # every timed run succeeded
        assert float(cells[2]) > 0 and float(cells[3]) >= float(cells[2]), (name, cells)
        assert float(cells[4]) > 0, (name, cells)  # CPU ms
        assert all(re.fullmatch(r"[\d.]+ / [\d.]+", c) for c in cells[5:8]), (name, cells)
        assert re.fullmatch(r"[\d.]+ [\d.]+", cells[11]), (name, cells)  # one median per round
    assert "top 10 by cumulative:" in out and "pes_agent/instance.py" in out
    summary = _summary(out)
    assert re.search(r"2 tools: median [\d.]+ ms, CPU [\d.]+ ms \(target <= 1.4\): (PASS|FAIL)", summary), (
        summary
    )
    assert re.search(r"200 tools: median [\d.]+ ms, CPU [\d.]+ ms \(target <= 2.7\): (PASS|FAIL)", summary), (
        summary
    )
    assert re.search(r"peak RSS [\d.]+ / [\d.]+ MB \(target < 86\): (PASS|FAIL)", summary), summary
    assert "openai/tiktoken not loaded: PASS" in summary


def test_the_instruction_count_worker_runs_s1_to_success() -> None:
    """The part callgrind measures; the counting itself needs valgrind and minutes, so it is not run here."""
    assert instructions.main(["--worker", "2", "3"]) == 0
    assert instructions.main(["--worker", "200", "2"]) == 0


def test_concurrency_runs_every_s1_run_to_success_through_the_openai_provider(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert concurrency.main(["--runs", "10", "--latency-ms", "5", "--batches", "2", "--warmup", "2"]) == 0
    out = capsys.readouterr().out

    labels = ("bare openai client #1", "pes-agent #1", "bare openai client #2", "pes-agent #2")
    rows = _table_rows(out, labels)
    assert tuple(rows) == labels, out
    for name, cells in rows.items():
        assert cells[1:3] == ["10", "60"], (name, cells)
        assert cells[6] == "0", (name, cells)  # errors
    summary = _summary(out)
    assert "errors 0 (target 0): PASS" in summary
    assert re.search(
        r"wall [\d.]+ s .* × max\(bound 0.03 s, floor [\d.]+ s\) \(target <= 1.25\): (PASS|FAIL)", summary
    ), summary
    assert re.search(r"RSS after batches [\d.]+ → [\d.]+ MB", summary), summary


def test_faults_end_every_run_cleanly_and_account_for_every_request(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = [
        "--runs",
        "10",
        "--latency-ms",
        "1",
        "--timeout-s",
        "0.2",
        "--max-retries",
        "1",
        "--warmup",
        "1",
        "--bound-s",
        "30",
    ]
    assert faults.main(args) == 0
    out = capsys.readouterr().out

    rows = _table_rows(out, ("success", "error", "exception", "hang", "all"))
    assert rows["exception"][1] == rows["hang"][1] == "0", out
    assert int(rows["success"][1]) + int(rows["error"][1]) == int(rows["all"][1]) == 10, out
    summary = _summary(out)
    assert re.search(
        r"10 runs: \d+ success, \d+ error \(clean: code and phase\), 0 exceptions, 0 hangs, 0 other: PASS",
        summary,
    ), summary
    assert re.search(r"requests accounted [\d,]+ = [\d,]+ \+ [\d,]+ \+ [\d,]+: PASS", summary), summary


def test_service_load_serves_every_run_from_both_users_without_a_5xx(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("uvicorn", reason="the service example needs the `service` extra")
    assert service_load.main(["--runs", "6", "--workers", "1", "--no-save"]) == 0
    rows = _table_rows(capsys.readouterr().out, ("1",))
    assert rows["1"][1:4] == ["6", "200: 6", "6"], rows  # runs, answers by status, runs answered success
