"""Time per call of the argument gate, and how often tool schemas are compiled.

Usage, from the repo root: ``python benchmarks/gate.py [--iterations N] [--json]``

Three calls, each checked ``N`` times after a warm-up, one ``time.perf_counter_ns`` reading per call:
a valid call (the fast path), a repaired call (alias, key case, string → integer, enum case) and a
failing call (a missing required enum: outcome ``fill``). Schema compiles are counted by wrapping
``SchemaValidator`` while the registry is built and while the gate runs: the target is one compile per
tool at registration and none in the gate. The 100 µs target is for the valid call; a miss is
reported, not turned into an exit code (timing depends on the machine).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from benchmarks._common import format_table
from pes_agent.config import GateConfig
from pes_agent.gate import ArgumentGate, Grounding
from pes_agent.tools import registry as registry_module
from pes_agent.tools.decorators import tool_from_schema
from pes_agent.tools.registry import ToolRegistry
from pes_agent.tools.spec import ToolCall, ToolSpec
from pes_agent.tools.validation import SchemaValidator

TARGET_US = 100.0
"""Per valid call, on this machine."""
WARMUP = 500


def _noop(**kwargs: Any) -> None:
    return None


def _tools() -> list[ToolSpec]:
    search = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "description": "what to search for"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
            "lang": {"type": "string", "enum": ["en", "de", "fr"]},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    task = {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "due_days": {"type": "integer", "minimum": 1},
            "priority": {"type": "string", "enum": ["low", "medium", "high"]},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["title", "due_days", "priority"],
    }
    fetch = {
        "type": "object",
        "properties": {"urls": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
        "required": ["urls"],
    }
    return [
        tool_from_schema("webSearch", "Search the web.", search, _noop, aliases={"q": "query"}),
        tool_from_schema("createTask", "Create a task.", task, _noop),
        tool_from_schema("fetchPages", "Fetch pages.", fetch, _noop),
    ]


CASES: dict[str, tuple[str, Mapping[str, Any], str]] = {
    "valid": ("webSearch", {"query": "rust async runtimes", "limit": 5, "lang": "en"}, "execute"),
    "repaired": ("webSearch", {"q": "rust async runtimes", "Limit": "10", "lang": "EN"}, "execute"),
    "failing": ("createTask", {"title": "Write the report", "due_days": 2}, "fill"),
}
GROUNDING = Grounding(
    query="Find recent articles on Rust async runtimes and make a task to read them",
    step_outputs={"step_1": ({"results": [{"url": "https://a.io/1", "title": "Tokio"}]},)},
)


@dataclass(frozen=True, kw_only=True)
class Row:
    case: str
    outcome: str
    repairs: int
    median_us: float
    p90_us: float


@dataclass(frozen=True, kw_only=True)
class Report:
    rows: list[Row]
    tools: int
    compiles_at_registration: int
    compiles_in_gate: int
    iterations: int

    @property
    def valid_ok(self) -> bool:
        return self.rows[0].median_us <= TARGET_US

    @property
    def compiles_ok(self) -> bool:
        return self.compiles_at_registration == self.tools and self.compiles_in_gate == 0


@contextmanager
def counting_compiles() -> Iterator[list[int]]:
    """Count ``SchemaValidator`` constructions made through the registry while the block runs."""
    count = [0]
    namespace = vars(registry_module)  # the name the registry constructs validators through
    original = namespace["SchemaValidator"]

    class Counting(SchemaValidator):
        def __init__(self, schema: Mapping[str, Any], *, tool_name: str) -> None:
            count[0] += 1
            super().__init__(schema, tool_name=tool_name)

    namespace["SchemaValidator"] = Counting
    try:
        yield count
    finally:
        namespace["SchemaValidator"] = original


def run(iterations: int) -> Report:
    with counting_compiles() as count:
        registry = ToolRegistry(_tools())
        at_registration = count[0]
        gate = ArgumentGate(registry, GateConfig())
        rows = [_time_case(gate, name, iterations) for name in CASES]
        in_gate = count[0] - at_registration
    return Report(
        rows=rows,
        tools=len(registry),
        compiles_at_registration=at_registration,
        compiles_in_gate=in_gate,
        iterations=iterations,
    )


def _time_case(gate: ArgumentGate, name: str, iterations: int) -> Row:
    tool, args, expected = CASES[name]
    call = ToolCall(call_id="bench", tool_name=tool, arguments=args)
    allowed = [tool]
    check = gate.check
    result = check(call, allowed=allowed, grounding=GROUNDING)
    if result.outcome != expected:
        raise RuntimeError(
            f"benchmark case {name!r}: expected {expected!r}, the gate said {result.outcome!r}"
        )
    for _ in range(WARMUP):
        check(call, allowed=allowed, grounding=GROUNDING)
    clock = time.perf_counter_ns
    samples = []
    for _ in range(iterations):
        start = clock()
        check(call, allowed=allowed, grounding=GROUNDING)
        samples.append(clock() - start)
    samples.sort()
    p90 = samples[min(len(samples) - 1, int(len(samples) * 0.9))]
    return Row(
        case=name,
        outcome=result.outcome,
        repairs=len(result.repairs),
        median_us=statistics.median(samples) / 1000,
        p90_us=p90 / 1000,
    )


def render(report: Report) -> str:
    rows = [[r.case, r.outcome, str(r.repairs), f"{r.median_us:.1f}", f"{r.p90_us:.1f}"] for r in report.rows]
    table = format_table(["case", "outcome", "repairs", "median µs", "p90 µs"], rows, "llrrr")
    valid = report.rows[0]
    verdict = "met" if report.valid_ok else "MISSED"
    compiles = (
        f"validator compiles: {report.compiles_at_registration} at registration for {report.tools} tools, "
        f"{report.compiles_in_gate} during {report.iterations + WARMUP + 1} checks per case"
    )
    summary = (
        f"SUMMARY valid call median {valid.median_us:.1f} µs vs target {TARGET_US:.0f} µs: {verdict}; "
        f"compiled once per tool: {'yes' if report.compiles_ok else 'NO'}"
    )
    return f"{table}\n\n{compiles}\n{summary}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--iterations", type=int, default=20000, help="timed checks per case")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    options = parser.parse_args(argv)
    report = run(max(1, options.iterations))
    if options.json:
        print(
            json.dumps(
                {**asdict(report), "valid_ok": report.valid_ok, "compiles_ok": report.compiles_ok}, indent=2
            )
        )
    else:
        print(render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
