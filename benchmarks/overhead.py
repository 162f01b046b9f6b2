"""Framework time per S1 run, with nothing else in it: scripted model, in-memory store, no I/O.

Usage, from the repo root: ``python benchmarks/overhead.py [--runs 2000] [--warmup 200] [--rounds 4]
[--json]``

Two configurations: S1's own two tools, and S1 with all 200 tools of ``catalog_N200.json`` registered
and enabled (the first two are S1's ``webSearch``/``webExtract``, so S1's replies still fit). Each runs
in fresh child processes, so imports, caches and the peak RSS of one cannot flatter or burden the
other: ``--rounds`` children per configuration, taking turns, each timing its share of ``--runs``, and
the figures are over all their runs. A virtual machine's speed drifts by tens of percent over minutes
(neighbours, host scheduling); taking turns exposes both configurations to the same drift, and the
round medians printed beside the pooled median show how large it was. In the child: ``--warmup`` untimed runs,
then ``--runs`` timed ones, one after another on one event loop, each on a new agent thread (a new
``thread_id``, so no history accumulates). Each run gets a fresh ``ScriptedProvider`` holding S1's six
replies; it answers instantly, so all the time measured is pes-agent's (and the scripted provider's
bookkeeping). Phases are split at the events the run publishes: planning ends at ``PLAN``, execution at the
last ``ITEM_STATUS`` → completed, synthesis is the rest (answer prompt, parse, save, ``FINAL_RESPONSE``). Peak
RSS is the child's ``ru_maxrss`` after the timed runs. The memory store keeps every thread it is given, which
is the user's data and grows with ``--runs``, so it is emptied every 100 runs (outside the timed part) and
what it keeps per thread is reported on its own ("store KB/thread", from 200 more runs). Then
``--profile-runs`` more runs under cProfile list where the time goes.

Targets (issue 7; the TypeScript original timed the same way): median ≤ 1.4 ms with 2 tools and
≤ 2.7 ms with 200 tools, peak RSS under half the original's 172 MB. A miss is reported, not an exit
code: this is a report.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent`, `tests` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from benchmarks._common import format_table
from pes_agent import ArtInstance, create_art_instance
from pes_agent.events import Event, EventType
from pes_agent.llm.types import CallOptions, LLMReply, PromptRequest
from pes_agent.state.memory import MemoryStore
from pes_agent.testing import ScriptedProvider, ScriptedReply
from pes_agent.tools.decorators import tool_from_schema
from tests.replay import FIXTURES, ToolLog, load_scenario, scenario_tools, scripted_replies

CATALOG_200 = FIXTURES / "catalogs" / "catalog_N200.json"
CONFIGS = (2, 200)
"""Tools registered: S1's own two, or the 200-tool catalogue."""
TARGET_MEDIAN_MS = {2: 1.4, 200: 2.7}
TARGET_RSS_MB = 172.0 / 2
PHASES = ("planning", "execution", "synthesis")


# --- one run, timed ---------------------------------------------------------------------------------


class FreshScript:
    """The instance's provider: hands each call to the current run's own ``ScriptedProvider``.

    A new script per run keeps S1's replies in order for every run and keeps the recorded calls of
    finished runs from piling up (they would inflate the memory measured)."""

    name = "scripted"

    def __init__(self, replies: Sequence[ScriptedReply]) -> None:
        self._replies = list(replies)
        self.current = ScriptedProvider(self._replies)

    def next_run(self) -> None:
        self.current = ScriptedProvider(self._replies)

    async def complete(self, request: PromptRequest, options: CallOptions) -> LLMReply:
        return await self.current.complete(request, options)

    async def aclose(self) -> None:
        return None


class ForgetfulStore(MemoryStore):
    """The memory store, emptied now and then between runs: it keeps every thread it is given (about
    20 KB each for S1), which is the user's data, not the framework's memory."""

    def forget(self) -> None:
        MemoryStore.__init__(self)


class PhaseMarks:
    """Event listener: the moment the plan was published and the moment the last step completed."""

    def __init__(self) -> None:
        self.planned = 0.0
        self.executed = 0.0

    def __call__(self, event: Event) -> None:
        if event.type is EventType.PLAN:
            self.planned = time.perf_counter()
        elif event.data.get("status") == "completed":
            self.executed = time.perf_counter()


@dataclass
class Bench:
    art: ArtInstance
    script: FreshScript
    log: ToolLog
    marks: PhaseMarks
    store: ForgetfulStore
    query: str


def _refuse(name: str) -> Any:
    def run(**arguments: Any) -> Any:
        raise AssertionError(f"catalogue tool {name!r} is not part of S1 and must not be called")

    return run


async def build(n_tools: int) -> Bench:
    scenario = load_scenario("S1")
    log = ToolLog()
    tools = scenario_tools(scenario, log)
    if n_tools != len(tools):
        recorded = {spec.name: spec.fn for spec in tools}
        catalog = json.loads(CATALOG_200.read_text(encoding="utf-8"))["tools"][:n_tools]
        tools = [
            tool_from_schema(
                t["name"], t["description"], t["inputSchema"], recorded.get(t["name"]) or _refuse(t["name"])
            )
            for t in catalog
        ]
    script, store = FreshScript(scripted_replies(scenario)), ForgetfulStore()
    art = await create_art_instance(
        {"storage": {"type": "memory"}}, tools=tools, providers={"scripted": script}, store=store
    )
    marks = PhaseMarks()
    art.subscribe(marks, types=[EventType.PLAN, EventType.ITEM_STATUS])
    return Bench(art=art, script=script, log=log, marks=marks, store=store, query=scenario["userQuery"])


Sample = tuple[float, float, float, float, float]
"""Seconds: planning, execution, synthesis, total wall time, and the process's CPU time."""


async def timed_run(bench: Bench, thread_id: str) -> Sample | str:
    """One run's timings, or what went wrong."""
    bench.script.next_run()
    bench.log.calls.clear()
    bench.marks.planned = bench.marks.executed = 0.0
    cpu, start = time.process_time(), time.perf_counter()
    response = await bench.art.process(bench.query, thread_id=thread_id)
    end, cpu = time.perf_counter(), time.process_time() - cpu
    if response.status != "success" or len(bench.log.calls) != 2 or not bench.marks.executed:
        return f"status {response.status!r}, {len(bench.log.calls)} tool calls, error {response.error}"
    planned, executed = bench.marks.planned, bench.marks.executed
    return planned - start, executed - planned, end - executed, end - start, cpu


# --- the child process ------------------------------------------------------------------------------


FORGET_EVERY = 100
"""Runs between two emptyings of the store (outside the timed part)."""
RETENTION_RUNS = 200


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def current_rss_mb() -> float:
    """Resident memory now (``ru_maxrss`` only knows the peak), after a full collection."""
    gc.collect()
    with open("/proc/self/statm", encoding="ascii") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


async def _runs(bench: Bench, prefix: str, n: int, *, forget: bool = True) -> list[Sample | str]:
    outcomes = []
    for i in range(n):
        if forget and i % FORGET_EVERY == 0:
            bench.store.forget()
        outcomes.append(await timed_run(bench, f"{prefix}-{i}"))
    return outcomes


async def store_kb_per_thread(bench: Bench) -> float:
    """What the memory store keeps per finished S1 thread (reported, then dropped)."""
    bench.store.forget()
    before = current_rss_mb()
    await _runs(bench, "retained", RETENTION_RUNS, forget=False)
    grown = current_rss_mb() - before
    bench.store.forget()
    return grown * 1024.0 / RETENTION_RUNS


async def measure(n_tools: int, runs: int, warmup: int, profile_runs: int) -> dict[str, Any]:
    rss_start = peak_rss_mb()
    bench = await build(n_tools)
    registered = len(bench.art.registry.names())
    await _runs(bench, "warmup", warmup)
    samples: list[Sample] = []
    errors: list[str] = []
    for outcome in await _runs(bench, "run", runs):
        if isinstance(outcome, str):
            errors.append(outcome)
        else:
            samples.append(outcome)
    peak = peak_rss_mb()
    retained = await store_kb_per_thread(bench)
    top = await profile(bench, profile_runs) if profile_runs else {"cumulative": [], "self": []}
    return {
        "tools": registered,
        "runs": len(samples),
        "errors": errors[:3],
        "error_count": len(errors),
        "samples": {
            name: [s[i] * 1000.0 for s in samples] for i, name in enumerate((*PHASES, "total", "cpu"))
        },
        "peak_rss_mb": peak,
        "rss_after_imports_mb": rss_start,
        "store_kb_per_thread": retained,
        "loaded": sorted(m for m in ("openai", "tiktoken", "httpx") if m in sys.modules),
        "profile": top,
        "profile_runs": profile_runs,
    }


def _stats(values: Sequence[float]) -> dict[str, float]:
    """Median and p90 of milliseconds."""
    if not values:
        return {"median_ms": float("nan"), "p90_ms": float("nan")}
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return {"median_ms": statistics.median(ordered), "p90_ms": p90}


_PLUMBING = ("/asyncio/", "benchmarks/overhead.py", "cProfile", "of '_contextvars", "builtins.exec")


async def profile(bench: Bench, runs: int) -> dict[str, list[dict[str, Any]]]:
    """Top functions by cumulative and by own time, per run, without the event loop's plumbing."""
    profiler = cProfile.Profile()
    profiler.enable()
    for i in range(runs):
        await timed_run(bench, f"profile-{i}")
    profiler.disable()
    table: dict[Any, Any] = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    rows = []
    for (path, line, func), (_, calls, own, cumulative, _) in table.items():
        where = f"{_short(path)}:{line}({func})" if line else func
        if not any(p in where or p in path for p in _PLUMBING):
            per_run = {"calls": calls / runs, "own_ms": own * 1e3 / runs, "cum_ms": cumulative * 1e3 / runs}
            rows.append({"where": where, **per_run})
    return {
        "cumulative": sorted(rows, key=lambda r: -r["cum_ms"])[:10],
        "self": sorted(rows, key=lambda r: -r["own_ms"])[:10],
    }


def _short(path: str) -> str:
    for marker in ("/site-packages/", "/lib/python3.11/", f"{_ROOT}/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def _worker(n_tools: int, runs: int, warmup: int, profile_runs: int) -> int:
    print(json.dumps(asyncio.run(measure(n_tools, runs, warmup, profile_runs))))
    return 0


# --- the parent: one child per configuration --------------------------------------------------------


def run_child(n_tools: int, runs: int, warmup: int, profile_runs: int) -> dict[str, Any]:
    sizes = ["--runs", str(runs), "--warmup", str(warmup), "--profile-runs", str(profile_runs)]
    cmd = [sys.executable, __file__, "--worker", str(n_tools), *sizes]
    done = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=_ROOT, timeout=3600)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"tools": n_tools, "failed": f"child exited with {done.returncode}: {tail}"}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def run_rounds(runs: int, warmup: int, profile_runs: int, rounds: int) -> list[dict[str, Any]]:
    """``rounds`` children per configuration, the configurations taking turns (2, 200, 200, 2, ...),
    each child timing ``runs / rounds`` runs: on a shared machine whose speed drifts over minutes,
    both configurations then see the same drift, and the spread of the round medians shows it."""
    share = max(1, runs // rounds)
    children: dict[int, list[dict[str, Any]]] = {n: [] for n in CONFIGS}
    for i in range(rounds):
        order = CONFIGS if i % 2 == 0 else tuple(reversed(CONFIGS))
        for n in order:
            last = i == rounds - 1
            children[n].append(run_child(n, share, warmup, profile_runs if last else 0))
    return [pooled(n, children[n]) for n in CONFIGS]


def pooled(n_tools: int, parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One configuration's children as one measurement: statistics over all their samples."""
    failed = next((p for p in parts if "failed" in p), None)
    if failed is not None:
        return failed
    names = (*PHASES, "total", "cpu")
    merged: dict[str, Any] = {name: _stats([x for p in parts for x in p["samples"][name]]) for name in names}
    errors = [e for p in parts for e in p["errors"]]
    return {
        **merged,
        "tools": parts[0]["tools"],
        "runs": sum(p["runs"] for p in parts),
        "errors": errors[:3],
        "error_count": sum(p["error_count"] for p in parts),
        "round_medians": [statistics.median(p["samples"]["total"]) for p in parts if p["samples"]["total"]],
        "peak_rss_mb": max(p["peak_rss_mb"] for p in parts),
        "store_kb_per_thread": statistics.median(p["store_kb_per_thread"] for p in parts),
        "loaded": sorted({m for p in parts for m in p["loaded"]}),
        "profile": parts[-1]["profile"],
        "profile_runs": parts[-1]["profile_runs"],
    }


HEADERS = (
    "configuration",
    "runs",
    "median ms",
    "p90 ms",
    "CPU ms",
    "planning",
    "execution",
    "synthesis",
    "peak RSS MB",
    "store KB/thread",
    "target median",
    "round medians ms",
    "note",
)


def _row(r: dict[str, Any]) -> list[str]:
    name, target = f"S1 + {r['tools']} tools", TARGET_MEDIAN_MS.get(r["tools"], float("nan"))
    if "failed" in r:
        return [name, "-", "ERROR", "-", "-", "-", "-", "-", "-", "-", f"<= {target:.1f}", "-", r["failed"]]
    note = [f"{r['error_count']} runs failed: {r['errors'][0]}"] if r["error_count"] else []
    if r["loaded"]:
        note.append(f"loaded {', '.join(r['loaded'])}")
    phases = [f"{r[p]['median_ms']:.3f} / {r[p]['p90_ms']:.3f}" for p in PHASES]
    total = r["total"]
    cpu = f"{r['cpu']['median_ms']:.3f}"
    return [
        name,
        str(r["runs"]),
        f"{total['median_ms']:.3f}",
        f"{total['p90_ms']:.3f}",
        cpu,
        *phases,
        f"{r['peak_rss_mb']:.1f}",
        f"{r['store_kb_per_thread']:.1f}",
        f"<= {target:.1f}",
        " ".join(f"{m:.2f}" for m in r["round_medians"]),
        "; ".join(note),
    ]


def _profile_text(r: dict[str, Any]) -> str:
    if "failed" in r or not r["profile"]["cumulative"]:
        return ""
    out = [
        (
            f"cProfile, S1 + {r['tools']} tools, {r['profile_runs']} runs "
            "(times per run, inflated by the profiler):"
        )
    ]
    for key, title in (("cumulative", "cumulative"), ("self", "own time")):
        rows = [
            [f"{x['cum_ms'] if key == 'cumulative' else x['own_ms']:.3f}", f"{x['calls']:.1f}", x["where"]]
            for x in r["profile"][key]
        ]
        table = format_table(("ms/run", "calls/run", "function"), rows, align="rrl")
        out += ["", f"top 10 by {title}:", table]
    return "\n".join(out)


def summary_line(results: Sequence[dict[str, Any]]) -> str:
    parts = []
    for r in results:
        target = TARGET_MEDIAN_MS.get(r["tools"], float("nan"))
        if "failed" in r:
            parts.append(f"{r['tools']} tools: no measurement: FAIL")
            continue
        median = r["total"]["median_ms"]
        ok = median <= target and not r["error_count"]
        cpu = r["cpu"]["median_ms"]
        shown = f"median {median:.3f} ms, CPU {cpu:.3f} ms"
        parts.append(f"{r['tools']} tools: {shown} (target <= {target}): {_verdict(ok)}")
    peaks = [r["peak_rss_mb"] for r in results if "failed" not in r]
    rss_ok = len(peaks) == len(results) and max(peaks) < TARGET_RSS_MB
    shown = " / ".join(f"{p:.1f}" for p in peaks) or "-"
    parts.append(f"peak RSS {shown} MB (target < {TARGET_RSS_MB:.0f}): {_verdict(rss_ok)}")
    loaded = sorted({m for r in results for m in r.get("loaded", ())})
    parts.append(
        f"openai/tiktoken not loaded: {_verdict(not loaded)}" + (f" ({', '.join(loaded)})" if loaded else "")
    )
    return "SUMMARY " + "; ".join(parts)


def machine_line() -> str:
    """Timings mean little without the machine and how busy it was."""
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"Machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average {load}."


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def format_report(results: Sequence[dict[str, Any]], runs: int, warmup: int, rounds: int) -> str:
    title = (
        f"Framework time per S1 run (scripted provider, memory store): {runs} timed runs per configuration "
        f"in {rounds} rounds (a fresh process each, {warmup} warm-up runs first; the configurations take "
        "turns). Phases: median / p90 ms of wall time; CPU ms: "
        "median of the process's CPU time per run (what neighbours on a busy machine cannot inflate). "
        + machine_line()
    )
    table = format_table(HEADERS, [_row(r) for r in results], align="lrrrrrrrrrrll")
    profiles = [text for text in map(_profile_text, results) if text]
    return "\n\n".join([title, table, *profiles, summary_line(results)])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--profile-runs", type=int, default=300, help="runs under cProfile (0: none)")
    parser.add_argument("--rounds", type=int, default=4, help="children per configuration, taking turns")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    parser.add_argument("--worker", type=int, metavar="TOOLS", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        return _worker(args.worker, args.runs, args.warmup, args.profile_runs)
    results = run_rounds(args.runs, args.warmup, args.profile_runs, max(1, args.rounds))
    if args.json:
        print(json.dumps({"results": results, "summary": summary_line(results)}, indent=2))
    else:
        print(format_report(results, args.runs, args.warmup, max(1, args.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
