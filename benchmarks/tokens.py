"""Prompt tokens pes-agent sends on the original's replay scenarios, beside what the original sent.

Usage, from the repo root: ``python benchmarks/tokens.py [--json]``

Each scenario is replayed as the parity tests replay it (``tests/replay.py``: ``create_art_instance``,
``ScriptedProvider``, fake tools answering from the recording, memory store). ``S6_N*`` rows are S1
with the 10/50/200-tool catalogue registered. Counts follow the reference's rule: o200k_base tokens of
every message content, summed, no chat overhead. Character estimates would not be comparable, so the
script refuses to run (exit 2) without the offline o200k rank file. A failed target is reported, not
turned into an exit code: this is a report, and the two targets are asserted in
``tests/test_benchmarks.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent`, `tests` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from benchmarks._common import SHARED_TIKTOKEN, format_table, use_shared_tiktoken_cache
from pes_agent import ToolSpec, create_art_instance
from pes_agent.llm.tokens import DEFAULT_ENCODING, count_messages, tokenizer_available
from pes_agent.testing import ScriptedProvider
from pes_agent.tools.decorators import tool_from_schema
from tests.replay import (
    FIXTURES,
    Replay,
    ToolLog,
    load_scenario,
    scenario_tools,
    scripted_replies,
    start_replay,
)

REFERENCE_CSV = FIXTURES / "art_reference_tokens.csv"
CATALOGS = FIXTURES / "catalogs"
CATALOG_BASE = "S1"
"""The scenario the ``S6_N*`` rows replay with a bigger catalogue."""

PLANNING_TARGET = ("S6_N200", 0.08)
"""Planning prompt with 200 tools: at most 8% of the original's."""
WHOLE_RUN_TARGET = "S1"
"""S1's whole run: no more tokens than the original sent."""

SUSPENDED_NOTE = "pre-suspension part only; the reference includes the resume"
RESUMED_NOTE = "process (suspends) + resume with the recorded approval"


@dataclass(frozen=True, kw_only=True)
class Reference:
    scenario: str
    n_tools: int
    calls: int
    planning: int
    whole_run: int


@dataclass(frozen=True, kw_only=True)
class Row:
    """One scenario: pes-agent's numbers (None when the run failed) beside the reference's."""

    reference: Reference
    calls: int | None = None
    planning: int | None = None
    whole_run: int | None = None
    note: str = ""
    error: str | None = None

    def ratio(self, measure: str) -> float | None:
        """pes-agent / original for ``calls``, ``planning`` or ``whole_run``."""
        ours: int | None = getattr(self, measure)
        return None if ours is None else ours / getattr(self.reference, measure)

    def to_dict(self) -> dict[str, Any]:
        ref = self.reference
        return {
            "scenario": ref.scenario,
            "n_tools": ref.n_tools,
            **{
                key: value
                for measure in ("calls", "planning", "whole_run")
                for key, value in (
                    (measure, getattr(self, measure)),
                    (f"ref_{measure}", getattr(ref, measure)),
                    (f"{measure}_ratio", self.ratio(measure)),
                )
            },
            "note": self.note,
            "error": self.error,
        }


@dataclass(frozen=True, kw_only=True)
class Target:
    name: str
    passed: bool
    text: str


# --- reference -------------------------------------------------------------------------------------


def load_reference(path: Path = REFERENCE_CSV) -> list[Reference]:
    with path.open(newline="", encoding="utf-8") as f:
        return [
            Reference(
                scenario=r["scenario"],
                n_tools=int(r["n_tools"]),
                calls=int(r["llm_calls"]),
                planning=int(r["planning_prompt_tokens_o200k"]),
                whole_run=int(r["prompt_tokens_o200k_all_calls"]),
            )
            for r in csv.DictReader(f)
        ]


def is_catalog_run(ref: Reference) -> bool:
    return ref.scenario.startswith("S6_N")


def has_scenario(ref: Reference) -> bool:
    return is_catalog_run(ref) or (FIXTURES / "scenarios" / f"{ref.scenario}.json").is_file()


# --- replay & measure ------------------------------------------------------------------------------


def _never_called(name: str, log: ToolLog) -> Callable[..., Any]:
    def run(**arguments: Any) -> Any:
        log.calls.append((name, arguments))
        raise AssertionError(f"catalogue tool {name!r} is not part of {CATALOG_BASE} and must not be called")

    return run


async def catalog_replay(n_tools: int) -> Replay:
    """S1 with ``catalog_N{n_tools}.json`` registered: S1's two tools answer from its recording."""
    scenario = load_scenario(CATALOG_BASE)
    log = ToolLog()
    recorded = {spec.name: spec.fn for spec in scenario_tools(scenario, log)}
    catalog = json.loads((CATALOGS / f"catalog_N{n_tools}.json").read_text(encoding="utf-8"))["tools"]
    tools: list[ToolSpec] = []
    for t in catalog:
        fn = recorded.get(t["name"]) or _never_called(t["name"], log)
        tools.append(tool_from_schema(t["name"], t["description"], t["inputSchema"], fn))
    provider = ScriptedProvider(scripted_replies(scenario))
    art = await create_art_instance(
        {"storage": {"type": "memory"}}, tools=tools, providers={"scripted": provider}
    )
    return Replay(art=art, provider=provider, log=log, scenario=scenario)


def _tokens(messages: Sequence[Mapping[str, str]]) -> int:
    count = count_messages(messages, encoding=DEFAULT_ENCODING)
    if count.source != "tiktoken":  # checked in main; guards against a cache that vanished mid-run
        raise RuntimeError(f"{DEFAULT_ENCODING} stopped loading: counts would be estimates")
    return count.tokens


def _by_design(replay: Replay, ref: Reference) -> list[str]:
    """Scenarios where pes-agent is meant to take another path than the original (a "Better" row)."""
    meant = len(replay.expected["calls"])
    if meant == ref.calls:
        return []
    return [f"by design {meant} calls where the original made {ref.calls} (see the scenario's `expected`)"]


def _deviations(replay: Replay, suspended: bool) -> list[str]:
    """Where the run left the scenario's expected path: its token counts then measure another run."""
    runs = {"process"} if suspended else {"process", "resume"}

    def expected(key: str) -> list[dict[str, Any]]:
        return [entry for entry in replay.expected[key] if entry.get("run", "process") in runs]

    calls = expected("calls")
    tools = [(t["tool"], t["arguments"]) for t in expected("toolExecutions")]
    found = []
    if len(replay.provider.calls) != len(calls):
        found.append(f"{len(replay.provider.calls)} calls where the scenario expects {len(calls)}")
    if replay.log.calls != tools:
        ran = [name for name, _ in replay.log.calls]
        found.append(f"tools ran {ran}, expected {[name for name, _ in tools]}")
    return found


async def _measure(ref: Reference) -> Row:
    replay = await (catalog_replay(ref.n_tools) if is_catalog_run(ref) else start_replay(ref.scenario))
    async with replay.art:
        enabled = {"enabled_tools": list(replay.art.registry.names())}
        response = await replay.art.process(replay.query, thread_id=replay.thread_id, options=enabled)
        decision = (replay.scenario["config"].get("resume") or {}).get("decision")
        resumed = response.status == "suspended" and decision is not None and response.suspension is not None
        if resumed:
            assert response.suspension is not None
            response = await replay.art.resume(replay.thread_id, response.suspension["id"], decision)
    if response.status == "error":
        return Row(reference=ref, error=f"run ended with status 'error': {response.error}")
    calls = replay.provider.calls
    planning = next((c for c in calls if c.phase == "planning"), None)
    suspended = response.status == "suspended"
    notes = [
        *([f"{CATALOG_BASE} + {CATALOGS.name}/catalog_N{ref.n_tools}.json"] if is_catalog_run(ref) else []),
        *([SUSPENDED_NOTE] if suspended else []),
        *([RESUMED_NOTE] if resumed else []),
        *_by_design(replay, ref),
        *_deviations(replay, suspended),
    ]
    return Row(
        reference=ref,
        calls=len(calls),
        planning=None if planning is None else _tokens(planning.messages),
        whole_run=sum(_tokens(c.messages) for c in calls),
        note="; ".join(notes),
    )


async def replay_and_measure(ref: Reference) -> Row:
    """One row; a run that raises becomes a row showing the error, so the other rows still print."""
    try:
        return await _measure(ref)
    except Exception as exc:  # noqa: BLE001 - a report: show any failure in its row, go on
        return Row(reference=ref, error=f"{type(exc).__name__}: {exc}")


async def close_early_s1() -> tuple[int, int]:
    """S1 with `closeStepOnToolSuccess`: the two closing replies are never asked for."""
    replay = await start_replay(
        "S1", {"storage": {"type": "memory"}, "execution": {"closeStepOnToolSuccess": True}}
    )
    closing = {2, 4}  # the content-only replies that end each tool step in the recording
    replay.provider._queue[:] = [r for i, r in enumerate(replay.provider._queue) if i not in closing]
    async with replay.art:
        response = await replay.art.process(replay.query, thread_id=replay.thread_id)
    if response.status != "success":
        raise RuntimeError(f"S1 with closeStepOnToolSuccess ended {response.status}: {response.error}")
    calls = replay.provider.calls
    return len(calls), sum(_tokens(c.messages) for c in calls)


async def collect_rows(references: Sequence[Reference]) -> list[Row]:
    return [await replay_and_measure(ref) for ref in references if has_scenario(ref)]


# --- targets & output ------------------------------------------------------------------------------


def check_targets(rows: Sequence[Row]) -> list[Target]:
    by_name = {row.reference.scenario: row for row in rows}
    planning, whole_run = by_name.get(PLANNING_TARGET[0]), by_name.get(WHOLE_RUN_TARGET)
    return [_planning_target(planning), _whole_run_target(whole_run)]


def _planning_target(row: Row | None) -> Target:
    name, share = "planning@200", PLANNING_TARGET[1]
    if row is None or row.planning is None:
        return Target(name=name, passed=False, text=f"{name}: no measurement: FAIL")
    ours, ref = row.planning, row.reference.planning
    ok = ours <= share * ref
    text = f"{name}: {ours:,} tokens = {ours / ref:.1%} of {ref:,} (target <= {share:.0%}): {_verdict(ok)}"
    return Target(name=name, passed=ok, text=text)


def _whole_run_target(row: Row | None) -> Target:
    name = f"{WHOLE_RUN_TARGET} whole run"
    if row is None or row.whole_run is None:
        return Target(name=name, passed=False, text=f"{name}: no measurement: FAIL")
    ours, ref = row.whole_run, row.reference.whole_run
    ok = ours <= ref
    text = f"{name}: {ours:,} {'<=' if ok else '>'} {ref:,}: {_verdict(ok)}"
    return Target(name=name, passed=ok, text=text)


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def summary_line(targets: Sequence[Target]) -> str:
    return "SUMMARY " + "; ".join(t.text for t in targets)


HEADERS = (
    "scenario",
    "tools",
    "calls",
    "ref calls",
    "ratio",
    "planning",
    "ref planning",
    "ratio",
    "whole run",
    "ref whole run",
    "ratio",
    "note",
)


def _cells(row: Row) -> list[str]:
    cells = [row.reference.scenario, str(row.reference.n_tools)]
    for measure in ("calls", "planning", "whole_run"):
        ours, ratio = getattr(row, measure), row.ratio(measure)
        shown = "ERROR" if row.error else "-" if ours is None else f"{ours:,}"
        cells += [shown, f"{getattr(row.reference, measure):,}", "-" if ratio is None else f"{ratio:.3f}"]
    return [*cells, f"ERROR: {row.error}" if row.error else row.note]


def format_report(rows: Sequence[Row]) -> str:
    table = format_table(HEADERS, [_cells(row) for row in rows], align="lrrrrrrrrrrl")
    title = (
        f"{DEFAULT_ENCODING} prompt tokens: message contents summed, no chat overhead. Ratio: pes/original."
    )
    return f"{title}\n\n{table}\n\n{summary_line(check_targets(rows))}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print the rows and targets as JSON")
    args = parser.parse_args(argv)
    use_shared_tiktoken_cache()
    if not tokenizer_available(DEFAULT_ENCODING):
        print(
            f"{Path(__file__).name}: cannot load the {DEFAULT_ENCODING!r} encoding offline, and character "
            "estimates are not comparable to the reference counts. Set `TIKTOKEN_CACHE_DIR` to a folder "
            f"holding tiktoken's cached {DEFAULT_ENCODING} rank file (used by default when it exists: "
            f"{SHARED_TIKTOKEN}).",
            file=sys.stderr,
        )
        return 2
    rows = asyncio.run(collect_rows(load_reference()))
    if args.json:
        targets = [asdict(t) for t in check_targets(rows)]
        print(json.dumps({"rows": [row.to_dict() for row in rows], "targets": targets}, indent=2))
    else:
        print(format_report(rows))
        calls, tokens = asyncio.run(close_early_s1())
        s1 = next((r for r in rows if r.reference.scenario == "S1"), None)
        ref = f" (original: {s1.reference.calls} calls, {s1.reference.whole_run:,} tokens)" if s1 else ""
        print(f"closeStepOnToolSuccess on, S1: {calls} model calls, {tokens:,} prompt tokens{ref}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
