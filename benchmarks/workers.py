"""Runs queued to 1, 2 and 3 worker processes (DBOS on PostgreSQL) beside the same runs in one process.

Usage, from the repo root, with a PostgreSQL server (``.ci/run`` starts one; any you may create
databases on will do): ``PES_AGENT_PG_DSN=postgresql://... python benchmarks/workers.py
[--runs 200] [--concurrency 8] [--workers 1,2,3] [--latency-ms 50] [--json]``

Each run is S1 (plan, two tool steps, answer: six model calls) against the fake OpenAI server in a
process of its own, each call taking ``--latency-ms``. Every configuration gets two fresh databases
(the store's, and DBOS's system database) and starts ``--runs`` runs at once, each on its own
thread:

- ``single process``: one ``ArtInstance`` on the PostgreSQL store, at most ``--concurrency`` runs at
  a time (a semaphore): today's path, no DBOS.
- ``N workers``: N ``pes-agent worker`` processes (``Worker`` here, ``--concurrency`` each), the
  runs enqueued by a ``Producer`` in this process.

Reported: runs/s (all runs over the wall from the first start to the last end), p50/p95 of each
run's wall (from its submission to its end, queueing included), CPU per run of the processes that
run them (this process for the single one, the workers' from /proc: on a shared machine wall times
move with the neighbours' load, CPU much less), and database transactions per run in each database
(``pg_stat_database.xact_commit``; in autocommit every statement is one, so this counts round trips
that commit). Results are saved under ``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent`, `tests` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from benchmarks._common import REPO_ROOT, format_table
from benchmarks._fake_server_proc import FakeServerProcess
from benchmarks.overhead import machine_line
from pes_agent import create_art_instance
from tests.replay import ToolLog, load_scenario, scenario_tools

RESULTS = REPO_ROOT / "benchmarks" / "results"


@dataclass(frozen=True)
class Figures:
    setup: str
    runs: int
    ok: int
    wall_s: float
    runs_per_s: float
    p50_s: float
    p95_s: float
    store_xact_per_run: float
    dbos_xact_per_run: float | None
    cpu_ms_per_run: float
    """CPU time (user + system) of the processes running the runs, over the timed runs."""


def config(
    base_url: str, store_dsn: str, system_db: str | None = None, concurrency: int = 8
) -> dict[str, Any]:
    provider = {"adapter": "openai", "base_url": base_url, "model": "fake", "api_key": "x", "timeout_s": 60}
    cfg: dict[str, Any] = {"providers": {"fake": provider}, "storage": {"type": "postgres", "dsn": store_dsn}}
    if system_db is not None:
        cfg["workers"] = {"systemDatabase": system_db, "concurrency": concurrency, "pollIntervalS": 0.05}
    return cfg


# --- databases -------------------------------------------------------------------------------------


def with_database(dsn: str, name: str) -> str:
    return urlunsplit(urlsplit(dsn)._replace(path="/" + name))


async def _admin(dsn: str, sql: str) -> Any:
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        return await conn.fetchval(sql)
    finally:
        await conn.close()


async def new_database(dsn: str) -> str:
    name = f"pes_bench_{uuid.uuid4().hex[:12]}"
    await _admin(dsn, f'CREATE DATABASE "{name}"')
    return name


async def commits(dsn: str, name: str) -> int:
    """Transactions committed in ``name`` so far (statistics settle after a moment)."""
    await asyncio.sleep(1.0)
    await _admin(dsn, "SELECT pg_stat_clear_snapshot()")
    return int(await _admin(dsn, f"SELECT xact_commit FROM pg_stat_database WHERE datname = '{name}'"))


# --- one process, no workers ----------------------------------------------------------------------


async def single_process(dsn: str, base_url: str, runs: int, concurrency: int) -> Figures:
    name = await new_database(dsn)
    try:
        scenario = load_scenario("S1")
        art = await create_art_instance(
            config(base_url, with_database(dsn, name)), tools=scenario_tools(scenario, ToolLog())
        )
        async with art:
            await art.process(scenario["userQuery"])  # schema, pool and client warmed up
            before = await commits(dsn, name)
            gate = asyncio.Semaphore(concurrency)

            async def one(i: int) -> tuple[str, float]:
                async with gate:
                    response = await art.process(scenario["userQuery"], thread_id=f"t{i}")
                return response.status, time.perf_counter()

            cpu = _own_cpu_s()
            start = time.perf_counter()
            ended = await asyncio.gather(*(one(i) for i in range(runs)))
            cpu = _own_cpu_s() - cpu
            after = await commits(dsn, name)
        walls = [at - start for _, at in ended]
        ok = sum(status == "success" for status, _ in ended)
        return figures("single process", runs, ok, walls, (after - before) / runs, None, cpu)
    finally:
        await _admin(dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# --- N worker processes ---------------------------------------------------------------------------


async def workers(dsn: str, base_url: str, runs: int, concurrency: int, count: int) -> Figures:
    from pes_agent.config import config_from_dict
    from pes_agent.workers import Producer

    store_name, dbos_name = await new_database(dsn), await new_database(dsn)
    cfg = config(base_url, with_database(dsn, store_name), with_database(dsn, dbos_name), concurrency)
    procs = [_start_worker(cfg, f"bench-{i}") for i in range(count)]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "READY"
        producer = await Producer.open(config_from_dict(cfg))
        query = load_scenario("S1")["userQuery"]
        warm = await producer.enqueue(query)
        await warm.result()
        before = (await commits(dsn, store_name), await commits(dsn, dbos_name))
        cpu = sum(_cpu_s(p.pid) for p in procs)
        start_wall = time.time()
        handles = [await producer.enqueue(query, thread_id=f"t{i}") for i in range(runs)]
        results = await asyncio.gather(*(h.result() for h in handles))
        statuses = {
            s.workflow_id: s
            for s in await producer._client.list_workflows_async(
                workflow_id_prefix="pes-agent:", status="SUCCESS", load_input=False, load_output=False
            )
        }
        cpu = sum(_cpu_s(p.pid) for p in procs) - cpu
        after = (await commits(dsn, store_name), await commits(dsn, dbos_name))
        await producer.aclose()
        walls = [(statuses[h.workflow_id].updated_at or 0) / 1000.0 - start_wall for h in handles]
        ok = sum(r.get("status") == "success" for r in results)
        store_x, dbos_x = ((a - b) / runs for a, b in zip(after, before, strict=True))
        return figures(f"{count} worker{'s' if count > 1 else ''}", runs, ok, walls, store_x, dbos_x, cpu)
    finally:
        for proc in procs:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=60)
        for name in (store_name, dbos_name):
            await _admin(dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _start_worker(cfg: dict[str, Any], executor_id: str) -> subprocess.Popen[str]:
    args = [sys.executable, __file__, "--worker", json.dumps({"config": cfg, "id": executor_id})]
    env = {**os.environ, "PYTHONPATH": _ROOT}
    return subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=_ROOT, env=env
    )


async def _worker_main(spec: dict[str, Any]) -> None:
    from pes_agent.config import config_from_dict
    from pes_agent.workers import Worker

    worker = Worker(
        config_from_dict(spec["config"]),
        executor_id=spec["id"],
        tools=scenario_tools(load_scenario("S1"), ToolLog()),
    )
    await worker.start()
    print("READY", flush=True)
    await asyncio.to_thread(sys.stdin.read)  # until the parent closes stdin
    await worker.stop()


# --- report ---------------------------------------------------------------------------------------


def figures(
    setup: str, runs: int, ok: int, walls: list[float], store_x: float, dbos_x: float | None, cpu_s: float
) -> Figures:
    cuts, wall = statistics.quantiles(walls, n=20), max(walls)
    return Figures(
        setup=setup,
        runs=runs,
        ok=ok,
        wall_s=wall,
        runs_per_s=runs / wall,
        p50_s=statistics.median(walls),
        p95_s=cuts[18],
        store_xact_per_run=store_x,
        dbos_xact_per_run=dbos_x,
        cpu_ms_per_run=1000 * cpu_s / runs,
    )


def _own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _cpu_s(pid: int) -> float:
    """User + system time of a child so far, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


HEADERS = ["setup", "runs ok", "runs/s", "p50 wall", "p95 wall", "CPU/run", "store txn/run", "DBOS txn/run"]


def report(results: Sequence[Figures], args: argparse.Namespace) -> str:
    rows = [
        [
            r.setup,
            f"{r.ok}/{r.runs}",
            f"{r.runs_per_s:.1f}",
            f"{r.p50_s:.2f} s",
            f"{r.p95_s:.2f} s",
            f"{r.cpu_ms_per_run:.0f} ms",
            f"{r.store_xact_per_run:.0f}",
            "-" if r.dbos_xact_per_run is None else f"{r.dbos_xact_per_run:.0f}",
        ]
        for r in results
    ]
    title = (
        f"S1 runs ({args.runs} at once, six model calls each at {args.latency_ms:g} ms) on PostgreSQL; "
        f"{args.concurrency} runs at a time per process"
    )
    return "\n\n".join([title, format_table(HEADERS, rows, "lrrrrrrr"), machine_line()])


async def run_all(args: argparse.Namespace) -> list[Figures]:
    dsn = os.environ.get("PES_AGENT_PG_DSN", "").strip()
    if not dsn:
        raise SystemExit("set PES_AGENT_PG_DSN to a PostgreSQL server where databases may be created")
    results = []
    with FakeServerProcess(args.latency_ms / 1000.0) as server:
        results.append(await single_process(dsn, server.base_url, args.runs, args.concurrency))
        for count in args.workers:
            results.append(await workers(dsn, server.base_url, args.runs, args.concurrency, count))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--workers", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2, 3])
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        asyncio.run(_worker_main(json.loads(args.worker)))
        return 0
    results = asyncio.run(run_all(args))
    text = report(results, args)
    print(json.dumps([asdict(r) for r in results], indent=2) if args.json else text)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"workers-{stamp}.md").write_text(text + "\n", encoding="utf-8")
    (RESULTS / f"workers-{stamp}.json").write_text(
        json.dumps([asdict(r) for r in results], indent=2), encoding="utf-8"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
