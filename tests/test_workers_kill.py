"""The scale-out promise on PostgreSQL: 3 worker processes, 100 queued runs, one worker SIGKILLed
mid-way and restarted under its id (as a supervisor would). All 100 runs complete, each once; no
tool call that had finished (journalled ``finished`` when the worker died) runs again; only calls
that were running in the killed worker may run a second time (the tool is idempotent). Everything
is counted in the databases: the tool inserts a row per execution, the store holds the journal,
the history and the events, DBOS holds the workflows.

Marked ``slow`` (tens of seconds): ``.ci/run`` runs it with ``PES_AGENT_SLOW=1``.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("dbos", reason="the `dbos` extra is not installed: pip install -e '.[dbos]'")

from pg_server import admin, new_database, pg_database_dsn, pg_dsn
from test_workers_recovery import TIMEOUT_S, start_worker, stop_worker

from pes_agent.config import config_from_dict
from pes_agent.events import EventType
from pes_agent.state.postgres import PostgresStore
from pes_agent.workers import Producer, RunHandle

__all__ = ["pg_database_dsn", "pg_dsn"]

RUNS = 100
WORKERS = ("w1", "w2", "w3")
KILLED = "w2"
CONCURRENCY = 4


@pytest.fixture
async def system_database(pg_dsn: str) -> AsyncIterator[str]:
    """DBOS's own database, beside the store's (``pg_database_dsn``)."""
    async with new_database(pg_dsn) as dsn:
        yield dsn


def worker_job(store_dsn: str, system_db: str, executor_id: str) -> dict[str, Any]:
    return {
        "storage": {"type": "postgres", "dsn": store_dsn},
        "system_database": system_db,
        "executor_id": executor_id,
        "concurrency": CONCURRENCY,
        "responder": "generic",
        "record_dsn": store_dsn,
        "tool_s": 0.05,
    }


async def finished_calls(dsn: str) -> set[tuple[str, str]]:
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("SELECT thread_id, call_id FROM tool_calls WHERE result IS NOT NULL")
    finally:
        await conn.close()
    return {(r["thread_id"], r["call_id"]) for r in rows}


async def tool_runs(dsn: str) -> list[tuple[str, str, int]]:
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("SELECT thread_id, call_id, pid FROM tool_runs ORDER BY seq")
    finally:
        await conn.close()
    return [(r["thread_id"], r["call_id"], r["pid"]) for r in rows]


async def wait_until_busy(producer: Producer, executor_id: str, done_at_least: int) -> None:
    """Until ``done_at_least`` runs have ended and ``executor_id`` has runs in flight."""
    client = producer._client
    for _ in range(int(TIMEOUT_S / 0.1)):
        done = await client.list_workflows_async(status="SUCCESS", load_input=False, load_output=False)
        mine = await client.list_workflows_async(
            status="PENDING", executor_id=executor_id, load_input=False, load_output=False
        )
        if len(done) >= done_at_least and mine:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{executor_id} never had runs in flight after {done_at_least} had ended")


@pytest.mark.slow
async def test_three_workers_a_hundred_runs_one_killed(pg_database_dsn: str, system_database: str) -> None:
    store_dsn = pg_database_dsn
    await admin(
        store_dsn, "CREATE TABLE tool_runs (seq BIGSERIAL PRIMARY KEY, thread_id TEXT, call_id TEXT, pid INT)"
    )
    config = config_from_dict({"workers": {"systemDatabase": system_database}})
    workers = {w: await start_worker(worker_job(store_dsn, system_database, w)) for w in WORKERS}
    killed_pid = workers[KILLED].pid
    producer = await Producer.open(config)
    try:
        handles: list[RunHandle] = [
            await producer.enqueue(f"Record run {i}.", thread_id=f"t{i:03d}") for i in range(RUNS)
        ]
        await wait_until_busy(producer, KILLED, done_at_least=RUNS // 4)
        os.kill(killed_pid, signal.SIGKILL)
        await workers[KILLED].wait()
        finished_when_killed = await finished_calls(store_dsn)
        workers[KILLED] = await start_worker(worker_job(store_dsn, system_database, KILLED))

        responses = await asyncio.wait_for(asyncio.gather(*(h.result() for h in handles)), 4 * TIMEOUT_S)
    finally:
        await producer.aclose()
        for proc in workers.values():
            if proc.returncode is None:
                await stop_worker(proc)

    assert [r.get("status") for r in responses] == ["success"] * RUNS, [
        r for r in responses if r.get("status") != "success"
    ][:2]
    assert {r["thread_id"] for r in responses} == {f"t{i:03d}" for i in range(RUNS)}
    runs = await tool_runs(store_dsn)
    per_call = Counter((thread, call) for thread, call, _ in runs)
    assert {thread for thread, _ in per_call} == {f"t{i:03d}" for i in range(RUNS)}
    twice = {key for key, n in per_call.items() if n > 1}
    assert not twice & finished_when_killed, "a tool call that had finished ran again"
    assert all(n <= 2 for n in per_call.values())
    first_pid = {(thread, call): pid for thread, call, pid in reversed(runs)}
    assert all(first_pid[key] == killed_pid for key in twice), "only calls running in the killed worker rerun"
    assert len(twice) <= CONCURRENCY
    assert finished_when_killed and len(finished_when_killed) < RUNS  # the kill was mid-way

    store = PostgresStore(store_dsn)
    try:
        for i in range(RUNS):
            history = await store.messages(f"t{i:03d}")
            assert [m.role for m in history] == ["user", "assistant"], (i, history)  # none lost, none twice
            state, _ = await store.load(f"t{i:03d}")
            assert state is not None and state.lease is None and state.run_count == 1
            kinds = Counter(e.type for e in await store.events(f"t{i:03d}"))
            assert (kinds[EventType.PLAN], kinds[EventType.FINAL_RESPONSE]) == (1, 1), (i, kinds)
    finally:
        await store.aclose()
