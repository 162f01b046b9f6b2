"""PostgreSQL going away under 3 workers with 30 runs in flight: a fast restart and a 10 s outage lose
no run; an outage past ``workers.storeOutageS`` ends runs ``failed``, saying so, and ``recover``
continues them from their journal.

A cluster of the test's own (``pg_cluster``): the shared one must never go down under other tests.
The store and DBOS's system database live on it, as in a deployment on one PostgreSQL, except in the
past-the-window test: there DBOS's tables are in SQLite, so that runs in flight meet the store's
window rather than DBOS's unbounded wait for its own database (which made that test's outcome depend
on where each run was when the server stopped). The tool
writes a line per execution to a file (its effect must not need the database), so the file is the
count of tool executions. Marked ``slow``: ``.ci/run`` runs them with ``PES_AGENT_SLOW=1``.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos", reason="the `dbos` extra is not installed: pip install -e '.[dbos]'")
pytest.importorskip("asyncpg", reason="the `postgres` extra is not installed: pip install -e '.[postgres]'")

from pg_cluster import SKIP_REASON, Cluster, find_bin
from test_workers_recovery import TIMEOUT_S, start_worker, stop_worker

from pes_agent.config import config_from_dict
from pes_agent.state.models import ItemStatus
from pes_agent.state.postgres import PostgresStore
from pes_agent.workers import Producer, RunHandle

RUNS = 30
WORKERS = ("w1", "w2", "w3")
CONCURRENCY = 4
TOOL_S = 0.3


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    if find_bin() is None:
        pytest.skip(SKIP_REASON)
    made = Cluster()
    made.start()
    try:
        yield made
    finally:
        made.remove()


@dataclass
class Fleet:
    cluster: Cluster
    store_dsn: str
    system_db: str
    tool_file: Path
    outage_s: float

    def job(self, executor_id: str) -> dict[str, Any]:
        return {
            "storage": {"type": "postgres", "dsn": self.store_dsn},
            "system_database": self.system_db,
            "executor_id": executor_id,
            "concurrency": CONCURRENCY,
            "responder": "generic",
            "record_file": str(self.tool_file),
            "tool_s": TOOL_S,
            "store_outage_s": self.outage_s,
        }

    def tool_runs(self) -> Counter[tuple[str, str]]:
        lines = self.tool_file.read_text(encoding="utf-8").splitlines() if self.tool_file.exists() else []
        return Counter((line.split()[0], line.split()[1]) for line in lines)


_NAMES = iter(range(1_000_000))


def fleet(
    cluster: Cluster, tmp_path: Path, outage_s: float = 60.0, *, system_on_sqlite: bool = False
) -> Fleet:
    """With ``system_on_sqlite``, DBOS's tables are in a SQLite file: only the store goes down, so a
    run in flight meets the store's window instead of DBOS's unbounded wait for its own tables."""
    n = next(_NAMES)
    store = cluster.create_database(f"store_{n}")
    system = (
        f"sqlite:///{tmp_path / 'dbos.sqlite'}" if system_on_sqlite else cluster.create_database(f"dbos_{n}")
    )
    return Fleet(cluster, store, system, tmp_path / "tool_runs.txt", outage_s)


async def run_through(
    fleet: Fleet, fault: Callable[[], Awaitable[None]]
) -> tuple[list[dict[str, Any]], Producer]:
    """30 runs on 3 workers; ``fault`` once a few have finished and every worker has some in flight.
    Returns each run's first response (``None`` never: a run that never answers fails the test)."""
    workers = {w: await start_worker(fleet.job(w)) for w in WORKERS}
    producer = await Producer.open(config_from_dict({"workers": {"systemDatabase": fleet.system_db}}))
    try:
        handles: list[RunHandle] = [
            await producer.enqueue(f"Record run {i}.", thread_id=f"t{i:02d}") for i in range(RUNS)
        ]
        await _until_busy(producer)
        await fault()
        responses = await asyncio.wait_for(
            asyncio.gather(*(h.response(timeout_s=4 * TIMEOUT_S) for h in handles)), 5 * TIMEOUT_S
        )
    finally:
        for proc in workers.values():
            if proc.returncode is None:
                await stop_worker(proc)
    assert all(r is not None for r in responses), "a run never answered"
    return [r for r in responses if r is not None], producer


async def _until_busy(producer: Producer) -> None:
    client = producer._client
    for _ in range(int(TIMEOUT_S / 0.1)):
        done = await client.list_workflows_async(status="SUCCESS", load_input=False, load_output=False)
        running = await client.list_workflows_async(status="PENDING", load_input=False, load_output=False)
        if len(done) >= 3 and len({w.executor_id for w in running}) == len(WORKERS):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the runs never got going on every worker")


async def settled_threads(fleet: Fleet) -> dict[str, Any]:
    store = PostgresStore(fleet.store_dsn)
    try:
        states = {f"t{i:02d}": (await store.load(f"t{i:02d}"))[0] for i in range(RUNS)}
        roles = {t: [m.role for m in await store.messages(t)] for t in states}
    finally:
        await store.aclose()
    return {"states": states, "roles": roles}


async def journal_finished(dsn: str) -> set[tuple[str, str]]:
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("SELECT thread_id, call_id FROM tool_calls WHERE result IS NOT NULL")
    finally:
        await conn.close()
    return {(r["thread_id"], r["call_id"]) for r in rows}


async def assert_every_run_succeeded_once(
    fleet: Fleet, responses: list[dict[str, Any]], producer: Producer
) -> None:
    try:
        statuses = Counter(
            w.status for w in await producer._client.list_workflows_async(load_input=False, load_output=False)
        )
    finally:
        await producer.aclose()
    assert [r.get("status") for r in responses] == ["success"] * RUNS, [
        r for r in responses if r.get("status") != "success"
    ][:2]
    assert statuses == {"SUCCESS": RUNS}, statuses  # none stuck, none failed
    runs = fleet.tool_runs()
    assert {thread for thread, _ in runs} == {f"t{i:02d}" for i in range(RUNS)}
    assert max(runs.values()) == 1, {k: n for k, n in runs.items() if n > 1}  # no tool call ran twice
    threads = await settled_threads(fleet)
    for thread, state in threads["states"].items():
        assert state is not None and state.lease is None, thread
        assert [i.status for i in state.todo_list] == [ItemStatus.COMPLETED], (thread, state.todo_list)
        assert threads["roles"][thread] == ["user", "assistant"], thread  # none lost, none twice


@pytest.mark.slow
async def test_a_fast_restart_with_30_runs_in_flight_on_3_workers_loses_no_run(
    cluster: Cluster, tmp_path: Path
) -> None:
    faulty = fleet(cluster, tmp_path)
    responses, producer = await run_through(faulty, lambda: asyncio.to_thread(cluster.restart))
    await assert_every_run_succeeded_once(faulty, responses, producer)


@pytest.mark.slow
async def test_a_10_s_outage_with_30_runs_in_flight_on_3_workers_loses_no_run(
    cluster: Cluster, tmp_path: Path
) -> None:
    faulty = fleet(cluster, tmp_path)

    async def outage() -> None:
        await asyncio.to_thread(cluster.stop)
        await asyncio.sleep(10)
        await asyncio.to_thread(cluster.start)

    responses, producer = await run_through(faulty, outage)
    await assert_every_run_succeeded_once(faulty, responses, producer)


@pytest.mark.slow
async def test_an_outage_past_the_window_fails_runs_honestly_and_recover_continues_them(
    cluster: Cluster, tmp_path: Path
) -> None:
    faulty = fleet(cluster, tmp_path, outage_s=2.0, system_on_sqlite=True)
    down = {"at": 0.0}

    async def outage() -> None:
        await asyncio.to_thread(cluster.stop)
        down["at"] = time.monotonic()
        await asyncio.sleep(8)
        await asyncio.to_thread(cluster.start)

    responses, producer = await run_through(faulty, outage)
    try:
        failed = [r for r in responses if "failed" in r]
        assert failed, "no run was in flight past the window"
        assert all(r.get("status") == "success" for r in responses if "failed" not in r), responses
        for response in failed:
            message = response["failed"]["message"]
            assert response["failed"]["type"] == "StoreUnavailableError"
            assert "was unreachable for" in message and "Producer.recover" in message, message
            assert f"127.0.0.1:{cluster.port}/" in message
        finished_before = await journal_finished(faulty.store_dsn)
        threads = await settled_threads(faulty)
        stopped = [r["thread_id"] for r in failed]
        # DBOS answered at once (its tables are elsewhere) and the store outlasted the give-back's
        # window too: the threads keep the stopped runs' leases, which are stale (their workers stop
        # below), and recover continues them all the same.
        assert all(threads["states"][t] is None or threads["states"][t].stopped is None for t in stopped)

        workers = {w: await start_worker(faulty.job(w)) for w in WORKERS}
        try:
            handles = [await producer.recover(thread) for thread in stopped]
            recovered = await asyncio.wait_for(
                asyncio.gather(*(h.response(TIMEOUT_S) for h in handles)), 2 * TIMEOUT_S
            )
        finally:
            for proc in workers.values():
                await stop_worker(proc)
    finally:
        await producer.aclose()
    assert [r and r.get("status") for r in recovered] == ["success"] * len(stopped), [
        (thread, r)
        for thread, r in zip(stopped, recovered, strict=True)
        if not r or r.get("status") != "success"
    ]
    runs = faulty.tool_runs()
    assert finished_before and all(runs[k] == 1 for k in finished_before), "a finished tool call ran again"
    assert max(runs.values()) <= 2  # a call cut short by the outage (idempotent) may run once more
    assert {thread for thread, _ in runs} == {f"t{i:02d}" for i in range(RUNS)}
    threads = await settled_threads(faulty)
    for thread in stopped:
        assert threads["roles"][thread] == ["user", "assistant"], (thread, threads["roles"][thread])
