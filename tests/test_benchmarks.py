"""The token benchmark's report: its shape, and the two token targets that are product requirements.

Absolute counts live in the benchmark's output, not here; only the targets from the issue are asserted:
the planning prompt with 200 tools is at most 8% of the original's, and S1's whole run sends no more
tokens than the original did.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import require_tiktoken

from benchmarks.tokens import main

REFERENCE_CSV = Path(__file__).parent / "fixtures" / "art_reference_tokens.csv"
MEASURES = ("calls", "planning", "whole_run")


@dataclass(frozen=True)
class Shown:
    """A measure as the table prints it: pes-agent's number (None for ERROR), the reference, the ratio."""

    ours: int | None
    ref: int
    ratio: str


def _number(cell: str) -> int:
    return int(cell.replace(",", ""))


def _shown(cells: list[str]) -> Shown:
    ours, ref, ratio = cells
    return Shown(None if ours == "ERROR" else _number(ours), _number(ref), ratio)


def _table_rows(out: str, scenarios: list[str]) -> dict[str, tuple[dict[str, Shown], str]]:
    """Rows of the printed table by scenario: the three measures, then the note."""
    rows = {}
    for line in out.splitlines():
        cells = line.split(maxsplit=11)
        if not cells or cells[0] not in scenarios:
            continue
        measures = {name: _shown(cells[i : i + 3]) for name, i in zip(MEASURES, (2, 5, 8), strict=False)}
        rows[cells[0]] = (measures, cells[11] if len(cells) > 11 else "")
    return rows


def test_token_report_shows_every_scenario_with_ratios_and_meets_the_targets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    require_tiktoken()
    with REFERENCE_CSV.open(newline="", encoding="utf-8") as f:
        reference = {r["scenario"]: r for r in csv.DictReader(f)}
    scenarios = list(reference)

    assert main([]) == 0
    out = capsys.readouterr().out
    rows = _table_rows(out, scenarios)

    assert list(rows) == scenarios, out
    for name, (measures, _note) in rows.items():
        ref = reference[name]
        columns = ("llm_calls", "planning_prompt_tokens_o200k", "prompt_tokens_o200k_all_calls")
        assert [m.ref for m in measures.values()] == [int(ref[c]) for c in columns], name
        for measure, shown in measures.items():
            expected = "-" if shown.ours is None else f"{shown.ours / shown.ref:.3f}"
            assert shown.ratio == expected, (name, measure, shown)
    assert "process (suspends) + resume" in rows["S9"][1]

    summary = [line for line in out.splitlines() if line.startswith("SUMMARY ")]
    assert len(summary) == 1, out
    assert re.search(r"planning@200: .*: (PASS|FAIL); S1 whole run: .*: (PASS|FAIL)$", summary[0]), summary

    # The product requirements, read from the numbers the table shows.
    at_200 = rows["S6_N200"][0]["planning"]
    assert at_200.ours is not None and at_200.ours <= 0.08 * at_200.ref, out
    s1 = rows["S1"][0]["whole_run"]
    assert s1.ours is not None and s1.ours <= s1.ref, out
    assert "FAIL" not in summary[0]
