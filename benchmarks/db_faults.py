"""PostgreSQL restarts and an outage under 3 worker processes with 30 runs in flight: does any run get lost?

Usage, from the repo root (needs PostgreSQL's binaries, ``initdb`` and ``pg_ctl``; as root it runs
them as the ``postgres`` account, as ``.ci/run`` does):
``python benchmarks/db_faults.py [--restarts 3] [--outage-s 10] [--runs 30] [--workers 3] [--json]``

A cluster of its own (``tests/pg_cluster.py``: loopback only, removed at the end) holds both the
store and DBOS's system database, as a deployment on one PostgreSQL would. Each scenario gets fresh
databases and ``--workers`` worker processes (``tests/dbos_worker.py``: a one-tool plan, the tool
writing a line per execution to a file, ``--concurrency`` runs at a time each, ``workers.storeOutageS``
60 s), enqueues ``--runs`` runs, waits until a few have ended and every worker has some in flight,
then either restarts the server (``pg_ctl restart -m fast``) or stops it for ``--outage-s`` and starts
it again. Counted per scenario: runs that answered ``success``, DBOS workflows left unfinished
(stuck) or failed, and tool calls that ran more than once (from the tool's own file). Results are
saved under ``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent`, `tests` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from benchmarks._common import REPO_ROOT, format_table
from benchmarks.overhead import machine_line
from tests.pg_cluster import Cluster

RESULTS = REPO_ROOT / "benchmarks" / "results"
CHILD = REPO_ROOT / "tests" / "dbos_worker.py"
TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Outcome:
    scenario: str
    runs: int
    success: int
    failed: int
    stuck: int
    tool_calls: int
    tool_reruns: int
    down_s: float
    """How long the fault took (the restart command, or stop to start)."""
    drain_s: float
    """From the end of the fault to the last run's end."""
    other: list[dict[str, Any]]
    """The answers that were not ``success``, as they came."""


async def start_worker(job: dict[str, Any]) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(CHILD),
        json.dumps(job),
        cwd=_ROOT,
        env={**os.environ, "PYTHONPATH": _ROOT},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 120)
    if line.decode().strip() != "READY":
        raise RuntimeError(f"a worker did not start: {line!r}")
    return proc


async def stop_worker(proc: asyncio.subprocess.Process) -> None:
    await asyncio.wait_for(proc.communicate(b"stop\n"), 120)


async def scenario(cluster: Cluster, name: str, n: int, args: argparse.Namespace, tmp: Path) -> Outcome:
    from pes_agent.config import config_from_dict
    from pes_agent.workers import Producer

    store = cluster.create_database(f"store_{n}")
    system = cluster.create_database(f"dbos_{n}")
    tool_file = tmp / f"tool_runs_{n}.txt"
    job = {
        "storage": {"type": "postgres", "dsn": store},
        "system_database": system,
        "concurrency": args.concurrency,
        "responder": "generic",
        "record_file": str(tool_file),
        "tool_s": 0.3,
        "store_outage_s": 60,
    }
    workers = [await start_worker({**job, "executor_id": f"w{i + 1}"}) for i in range(args.workers)]
    producer = await Producer.open(config_from_dict({"workers": {"systemDatabase": system}}))
    try:
        handles = [
            await producer.enqueue(f"Record run {i}.", thread_id=f"t{i:02d}") for i in range(args.runs)
        ]
        await until_busy(producer, args.workers)
        began = time.monotonic()
        if name == "restart":
            await asyncio.to_thread(cluster.restart)
        else:
            await asyncio.to_thread(cluster.stop)
            await asyncio.sleep(args.outage_s)
            await asyncio.to_thread(cluster.start)
        back = time.monotonic()
        responses = await asyncio.gather(*(h.response(timeout_s=TIMEOUT_S) for h in handles))
        drained = time.monotonic()
        statuses = Counter(
            w.status for w in await producer._client.list_workflows_async(load_input=False, load_output=False)
        )
    finally:
        await producer.aclose()
        for proc in workers:
            await stop_worker(proc)
    lines = tool_file.read_text(encoding="utf-8").splitlines() if tool_file.exists() else []
    per_call = Counter(tuple(line.split()[:2]) for line in lines)
    return Outcome(
        scenario=name,
        runs=args.runs,
        success=sum(bool(r) and r.get("status") == "success" for r in responses),
        failed=statuses["ERROR"],
        stuck=statuses["PENDING"] + statuses["ENQUEUED"],
        tool_calls=len(per_call),
        tool_reruns=sum(k - 1 for k in per_call.values()),
        down_s=back - began,
        drain_s=drained - back,
        other=[r or {"response": None} for r in responses if not r or r.get("status") != "success"],
    )


async def until_busy(producer: Any, workers: int) -> None:
    client = producer._client
    for _ in range(int(TIMEOUT_S / 0.1)):
        done = await client.list_workflows_async(status="SUCCESS", load_input=False, load_output=False)
        running = await client.list_workflows_async(status="PENDING", load_input=False, load_output=False)
        if len(done) >= 3 and len({w.executor_id for w in running}) == workers:
            return
        await asyncio.sleep(0.1)
    raise RuntimeError("the runs never got going on every worker")


async def run_all(args: argparse.Namespace) -> list[Outcome]:
    cluster = Cluster()
    cluster.start()
    try:
        names = ["restart"] * args.restarts + (["outage"] if args.outage_s > 0 else [])
        return [await scenario(cluster, name, n, args, cluster.dir) for n, name in enumerate(names)]
    finally:
        cluster.remove()


HEADERS = ["scenario", "down", "runs ok", "failed", "stuck", "tool calls", "run twice", "last run ended"]


def report(results: Sequence[Outcome], args: argparse.Namespace) -> str:
    rows = [
        [
            r.scenario if r.scenario == "restart" else f"stopped {args.outage_s:g} s",
            f"{r.down_s:.1f} s",
            f"{r.success}/{r.runs}",
            str(r.failed),
            str(r.stuck),
            str(r.tool_calls),
            str(r.tool_reruns),
            f"{r.drain_s:.1f} s after",
        ]
        for r in results
    ]
    ok, total = sum(r.success for r in results), sum(r.runs for r in results)
    title = (
        f"PostgreSQL faults under {args.workers} workers ({args.concurrency} runs at a time each), "
        f"{args.runs} runs "
        "in flight per fault; `workers.storeOutageS` 60 s; store and DBOS on the same server"
    )
    summary = (
        f"SUMMARY {ok}/{total} runs succeeded; {sum(r.stuck for r in results)} stuck, "
        f"{sum(r.failed for r in results)} failed, {sum(r.tool_reruns for r in results)} tool calls run twice"
    )
    others = [f"- {r.scenario}: {json.dumps(o)[:400]}" for r in results for o in r.other]
    parts = [title, format_table(HEADERS, rows, "lrrrrrrr"), machine_line(), summary]
    return "\n\n".join(parts + (["Answers other than success:\n" + "\n".join(others)] if others else []))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--restarts", type=int, default=3)
    parser.add_argument("--outage-s", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = asyncio.run(run_all(args))
    text = report(results, args)
    print(json.dumps([asdict(r) for r in results], indent=2) if args.json else text)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"db-faults-{stamp}.md").write_text(text + "\n", encoding="utf-8")
    (RESULTS / f"db-faults-{stamp}.json").write_text(
        json.dumps([asdict(r) for r in results], indent=2), encoding="utf-8"
    )
    return 0 if all(r.success == r.runs and not r.stuck for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
