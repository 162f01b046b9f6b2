"""How long one state save takes on each store: the write the agent makes after every state change.

Usage, from the repo root: ``python benchmarks/store_latency.py [--n 500] [--warmup 50]``

The saved state is a realistic mid-run thread: a 3-item todo list, one item done with two tool
results, one in progress with a call in flight. Each store gets ``--warmup`` untimed saves (pool and
page cache warm, SQLite's WAL created), then ``--n`` timed ones, one at a time as the agent makes them.
Two operations are timed: ``save`` (the version compare-and-set alone) and ``step`` (what one tool
call costs the store: ``call_started`` before the tool, then ``finish_calls_and_save`` recording the
result together with the state). SQLite writes to a file in a
temporary folder; PostgreSQL runs when ``PES_AGENT_PG_DSN`` is set (in a schema of its own, dropped
afterwards) and is reported as skipped otherwise. Figures depend on the disk and on the server's
``fsync`` settings: compare them on one machine, not across machines.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from benchmarks._common import format_table
from pes_agent.state.journal import CallFinish
from pes_agent.state.memory import MemoryStore
from pes_agent.state.models import ItemStatus, ThreadState, TodoItem, ToolCallRecord
from pes_agent.state.postgres import PostgresStore, describe_dsn
from pes_agent.state.sqlite import SQLiteStore
from pes_agent.state.store import StateStore

DSN_VARIABLE = "PES_AGENT_PG_DSN"


@dataclass(frozen=True)
class Timing:
    median_ms: float
    p90_ms: float


@dataclass(frozen=True)
class Row:
    store: str
    where: str
    save: Timing | None
    step: Timing | None
    note: str = ""


def mid_run_state() -> ThreadState:
    weather = ToolCallRecord(
        call_id="call_1",
        tool_name="get_weather",
        arguments={"city": "Oslo", "units": "metric"},
        status="success",
        output={"temp_c": 4.5, "sky": "rain", "wind_kmh": 22, "hourly": [3.9, 4.2, 4.5, 4.1]},
    )
    typo = ToolCallRecord(
        call_id="call_2",
        tool_name="get_weather",
        arguments={"city": "Bergn"},
        status="error",
        error="unknown city 'Bergn'; did you mean 'Bergen'?",
    )
    return ThreadState(
        title="Weekend trip",
        intent="compare the weekend weather in Oslo and Bergen and suggest where to go",
        plan="look both cities up, compare, then recommend",
        todo_list=[
            TodoItem(
                id="1",
                description="weather in Oslo and Bergen",
                step_type="tool",
                required_tools=["get_weather"],
                status=ItemStatus.COMPLETED,
                result={"oslo": 4.5, "bergen": None},
                tool_results=[weather, typo],
                iterations=2,
            ),
            TodoItem(
                id="2",
                description="retry Bergen",
                step_type="tool",
                required_tools=["get_weather"],
                dependencies=["1"],
                status=ItemStatus.IN_PROGRESS,
            ),
            TodoItem(id="3", description="recommend a city", dependencies=["1", "2"]),
        ],
        current_step_id="2",
        run_count=1,
    )


async def measure(op: Callable[[int], Awaitable[object]], n: int, warmup: int) -> Timing:
    """``op(i)`` is awaited ``warmup + n`` times in sequence; only the last ``n`` are timed."""
    for i in range(warmup):
        await op(i)
    samples: list[float] = []
    for i in range(warmup, warmup + n):
        start = time.perf_counter()
        await op(i)
        samples.append((time.perf_counter() - start) * 1000.0)
    return Timing(statistics.median(samples), statistics.quantiles(samples, n=10)[-1])


async def bench_store(store: StateStore, n: int, warmup: int) -> tuple[Timing, Timing]:
    state = mid_run_state()
    version = 0

    async def save(_: int) -> None:
        nonlocal version
        version = await store.save("bench", state, version)

    async def step(i: int) -> None:
        nonlocal version
        call_id = f"call_{i}"
        await store.call_started("bench", "2", call_id, "get_weather", {"city": "Bergen"})
        result = {
            "call_id": call_id,
            "tool_name": "get_weather",
            "status": "success",
            "output": 6.1,
            "error": None,
        }
        version = await store.finish_calls_and_save(
            "bench", state, version, [CallFinish("2", call_id, result)]
        )

    try:
        saved = await measure(save, n, warmup)
        stepped = await measure(step, n, warmup)
    finally:
        await store.aclose()
    return saved, stepped


async def run(n: int, warmup: int) -> list[Row]:
    rows = [Row("memory", "this process", *await bench_store(MemoryStore(), n, warmup))]
    with tempfile.TemporaryDirectory(prefix="pes-agent-bench-") as folder:
        path = str(Path(folder) / "bench.db")
        rows.append(Row("sqlite", "temp file (WAL)", *await bench_store(SQLiteStore(path), n, warmup)))
    dsn = os.environ.get(DSN_VARIABLE, "").strip()
    if not dsn:
        rows.append(Row("postgres", "-", None, None, f"skipped: set {DSN_VARIABLE} (see .ci/run)"))
        return rows
    schema = f"pes_bench_{uuid.uuid4().hex[:12]}"
    try:
        timings = await bench_store(PostgresStore(dsn, schema=schema), n, warmup)
        rows.append(Row("postgres", describe_dsn(dsn), *timings))
    finally:
        await _drop_schema(dsn, schema)
    return rows


async def _drop_schema(dsn: str, schema: str) -> None:
    driver = importlib.import_module("asyncpg")  # the PostgreSQL store ran, so it is installed
    conn = await driver.connect(dsn)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


def format_report(rows: Sequence[Row], n: int) -> str:
    def cells(t: Timing | None) -> list[str]:
        return [f"{t.median_ms:.3f}", f"{t.p90_ms:.3f}"] if t else ["-", "-"]

    table = format_table(
        ["store", "save median ms", "save p90 ms", "step median ms", "step p90 ms", "where / note"],
        [[r.store, *cells(r.save), *cells(r.step), r.note or r.where] for r in rows],
        "lrrrrl",
    )
    parts = [
        f"{r.store} save median {r.save.median_ms:.3f} ms p90 {r.save.p90_ms:.3f} ms"
        if r.save
        else f"{r.store} skipped"
        for r in rows
    ]
    return f"{table}\n\nSUMMARY store save latency (N={n}): " + "; ".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=500, help="timed saves per store (default 500)")
    parser.add_argument("--warmup", type=int, default=50, help="untimed saves first (default 50)")
    args = parser.parse_args(argv)
    if args.n < 2 or args.warmup < 0:
        parser.error("--n must be at least 2 and --warmup at least 0")
    print(format_report(asyncio.run(run(args.n, args.warmup)), args.n))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
