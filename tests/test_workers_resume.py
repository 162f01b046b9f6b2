"""A decision handed to workers is answered truthfully: the caller's handle ends on the run that
carried it, whether the waiting workflow took it at once, too late for the producer's wait, or never
(its own wait ended first); a decision is applied once; one that lost to another is refused.

The races are made deterministic: the waiting workflow's ack is slowed (what a loaded machine
does), the producer's send is held until the waiting workflow has ended. On SQLite and on the
PostgreSQL server of ``PES_AGENT_PG_DSN`` (skipped without one), for DBOS and the store alike.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos", reason="the `dbos` extra is not installed: pip install -e '.[dbos]'")

from dbos import DBOS
from pg_server import new_database, pg_dsn
from test_crash import ANSWER, QUERY, call, done, plan
from test_workers import Deployment, write_tools

import pes_agent.workers.producer as producer_module
import pes_agent.workers.workflow as workflow_module
from pes_agent.config import config_from_dict
from pes_agent.errors import UnknownSuspensionError
from pes_agent.workers import Producer
from pes_agent.workers.producer import decision_id, workflow_prefix
from pes_agent.workers.workflow import response_key

__all__ = ["pg_dsn"]

APPROVE = {"approved": True}
SLOW_ACK_S = 1.5


class On(Deployment):
    """A deployment whose store and DBOS system database are the given ones."""

    def __init__(self, tmp_path: Path, storage: dict[str, Any], system_database: str) -> None:
        super().__init__(tmp_path)
        self.storage, self.system_database = storage, system_database

    def config(self, **workers: Any) -> Any:
        return config_from_dict({"storage": self.storage, "workers": {"systemDatabase": self.system_database, **workers}})


@pytest.fixture(params=["sqlite", "postgresql"])
async def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[On]:
    if request.param == "sqlite":
        running = On(tmp_path, {"type": "sqlite", "path": str(tmp_path / "state.db")},
                     f"sqlite:///{tmp_path / 'dbos.sqlite'}")
        try:
            yield running
        finally:
            await running.stop()
        return
    pg_dsn = request.getfixturevalue("pg_dsn")
    async with new_database(pg_dsn) as store_dsn, new_database(pg_dsn) as system_dsn:
        running = On(tmp_path, {"type": "postgres", "dsn": store_dsn}, system_dsn)
        try:
            yield running
        finally:
            await running.stop()


def slow_acks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The waiting workflow takes a decision at once but acks it ``SLOW_ACK_S`` later, well past
    the producer's wait (shortened to 0.2 s): the producer queues a resume job as well."""
    ack: Callable[[str, str | None], Awaitable[None]] = workflow_module.acknowledge

    async def slow(suspension_id: str, ident: str | None) -> None:
        await asyncio.sleep(SLOW_ACK_S)
        await ack(suspension_id, ident)

    monkeypatch.setattr(workflow_module, "acknowledge", slow)
    monkeypatch.setattr(producer_module, "ACK_WAIT_S", 0.2)


async def paused_run(deployment: On, ran: list[str], thread_id: str, *, approval: str = "B",
                     **workers: Any) -> tuple[Producer, str, dict[str, Any]]:
    """A run on ``thread_id`` paused for approval of tool B: (producer, its workflow, the pause)."""
    tail = [done("B"), call("C"), done("C"), ANSWER]
    producer = await deployment.start([plan(), call("A"), done("A"), call("B"), *tail],
                                      write_tools(ran, approval=approval), **workers)
    handle = await producer.enqueue(QUERY, thread_id=thread_id)
    paused = await handle.response(timeout_s=30)
    assert paused is not None and paused["status"] == "suspended", paused
    return producer, handle.workflow_id, paused


async def test_a_decision_the_waiting_run_acks_too_late_is_answered_by_that_run(
    deployment: On, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow_acks(monkeypatch)
    ran: list[str] = []
    producer, waiting, paused = await paused_run(deployment, ran, "t-slow", approvalWaitS=60)
    suspension = paused["suspension"]["id"]

    resumed = await producer.resume("t-slow", suspension, APPROVE)
    after = await resumed.response(timeout_s=30)

    assert after is not None and after.get("status") == "success", json.dumps(after)[:800]
    assert resumed.workflow_id == waiting  # the run that carried the decision
    assert ran == ["A n=1", "B n=2", "C n=3"]  # applied once
    assert await resumed.result() == after
    # the resume job queued meanwhile ran after the waiting workflow and answers the same, not a refusal
    job = f"{workflow_prefix('t-slow')}resume:{suspension}:{decision_id(suspension, APPROVE, None)}"
    assert await DBOS.get_event_async(job, response_key(suspension), timeout_seconds=30) == after
    assert await DBOS.get_event_async(job, workflow_module.CARRIED_BY, timeout_seconds=0) == waiting
    assert ran == ["A n=1", "B n=2", "C n=3"]
    deployment.provider.assert_complete()


async def test_a_decision_sent_as_the_waiting_run_gives_up_is_run_once_by_a_new_job(
    deployment: On, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []
    producer, waiting, paused = await paused_run(deployment, ran, "t-gone", approvalWaitS=1)
    client = producer._client
    send = client.send_async

    async def send_once_it_ended(workflow_id: str, message: Any, topic: str) -> None:
        """The message reaches the workflow just after its approval wait ran out: never received."""
        for _ in range(300):
            statuses = await client.list_workflows_async(workflow_ids=[workflow_id], load_output=False)
            if statuses[0].status != "PENDING":
                break
            await asyncio.sleep(0.1)
        await send(workflow_id, message, topic)

    monkeypatch.setattr(client, "send_async", send_once_it_ended)
    monkeypatch.setattr(producer_module, "ACK_WAIT_S", 60.0)  # ends early: the workflow is over

    resumed = await producer.resume("t-gone", paused["suspension"]["id"], APPROVE)
    after = await resumed.response(timeout_s=30)

    assert after is not None and after.get("status") == "success", json.dumps(after)[:800]
    assert resumed.workflow_id != waiting
    assert ran == ["A n=1", "B n=2", "C n=3"]
    statuses = await client.list_workflows_async(workflow_ids=[waiting], load_output=False)
    assert statuses[0].status == "SUCCESS"  # its wait ran out: it never took the decision


async def test_a_decision_that_lost_the_race_is_refused_and_leaves_the_winners_answer(
    deployment: On,
) -> None:
    ran: list[str] = []
    producer, waiting, paused = await paused_run(deployment, ran, "t-race", approval="BC", approvalWaitS=60)
    first = paused["suspension"]["id"]
    won = await producer.resume("t-race", first, APPROVE)
    again = await won.response(timeout_s=30)
    assert again is not None and again["status"] == "suspended" and again["suspension"]["id"] != first
    # a second decision on the first suspension, from a producer that did not check the store first
    # (so it raced the first): the run, now waiting on C, must not take it
    unchecked = await Producer.open(deployment.config())
    try:
        with pytest.raises(UnknownSuspensionError, match="already decided"):
            await unchecked.resume("t-race", first, {"approved": False, "reason": "too late"})
    finally:
        await unchecked.aclose()

    assert await won.response(timeout_s=5) == again  # the winner's answer is still its answer
    done_handle = await producer.resume("t-race", again["suspension"]["id"], APPROVE)
    final = await done_handle.response(timeout_s=30)
    assert final is not None and final.get("status") == "success", json.dumps(final)[:800]
    assert done_handle.workflow_id == won.workflow_id == waiting
    assert ran == ["A n=1", "B n=2", "C n=3"]


async def test_a_wrong_suspension_id_is_refused_at_once_even_unchecked_and_the_run_still_waits(
    deployment: On,
) -> None:
    ran: list[str] = []
    producer, waiting, paused = await paused_run(deployment, ran, "t-wrong", approvalWaitS=60)
    unchecked = await Producer.open(deployment.config())  # no store: the waiting run's store refuses it
    try:
        wrong = await unchecked.resume("t-wrong", "susp_wrong", APPROVE)
        answer = await wrong.response(timeout_s=20)
    finally:
        await unchecked.aclose()
    assert answer is not None and answer["refused"]["type"] == "UnknownSuspensionError", answer

    resumed = await producer.resume("t-wrong", paused["suspension"]["id"], APPROVE)
    after = await resumed.response(timeout_s=30)

    assert after is not None and after.get("status") == "success", json.dumps(after)[:800]
    assert resumed.workflow_id == waiting
    assert ran == ["A n=1", "B n=2", "C n=3"]
