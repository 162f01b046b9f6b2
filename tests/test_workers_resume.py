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
import time
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
from pes_agent.agent import lease
from pes_agent.config import ConcurrencyConfig, config_from_dict
from pes_agent.errors import InvalidDecisionError, UnknownSuspensionError
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
        self.settings: dict[str, Any] = {}  # more of the config (providers)

    def config(self, **workers: Any) -> Any:
        return config_from_dict(
            {
                **self.settings,
                "storage": self.storage,
                "workers": {"systemDatabase": self.system_database, **workers},
            }
        )


@pytest.fixture(params=["sqlite", "postgresql"])
async def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[On]:
    if request.param == "sqlite":
        running = On(
            tmp_path,
            {"type": "sqlite", "path": str(tmp_path / "state.db")},
            f"sqlite:///{tmp_path / 'dbos.sqlite'}",
        )
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


TWO_PROVIDERS = {
    "providers": {"a": {"adapter": "scripted"}, "b": {"adapter": "scripted"}},
    "defaultProvider": "a",
}


async def paused_run(
    deployment: On,
    ran: list[str],
    thread_id: str,
    *,
    approval: str = "B",
    queue_b: bool = False,
    **workers: Any,
) -> tuple[Producer, str, dict[str, Any]]:
    """A run on ``thread_id`` paused for approval of tool B: (producer, its workflow, the pause).
    ``queue_b``: providers a (the default) and b are configured and the run uses b, so it waits in
    b's queue while resume jobs go to a's: a job can run while the run waits."""
    tail = [done("B"), call("C"), done("C"), ANSWER]
    names, options = ("scripted",), None
    if queue_b:
        deployment.settings = TWO_PROVIDERS
        names, options = ("a", "b"), {"providerConfig": {"providerName": "b"}}
    producer = await deployment.start(
        [plan(), call("A"), done("A"), call("B"), *tail],
        write_tools(ran, approval=approval),
        provider_names=names,
        **workers,
    )
    handle = await producer.enqueue(QUERY, thread_id=thread_id, options=options)
    paused = await handle.response(timeout_s=30)
    assert paused is not None and paused["status"] == "suspended", paused
    return producer, handle.workflow_id, paused


def job_of(thread_id: str, suspension_id: str) -> str:
    """The workflow id of the resume job a producer queues for APPROVE."""
    return f"{workflow_prefix(thread_id)}resume:{suspension_id}:{decision_id(suspension_id, APPROVE, None)}"


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
    job = job_of("t-slow", suspension)
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


async def test_a_bad_decision_is_refused_and_the_pause_then_takes_a_proper_one_once(deployment: On) -> None:
    ran: list[str] = []
    producer, _, paused = await paused_run(deployment, ran, "t-bad", approvalWaitS=60)
    suspension = paused["suspension"]["id"]
    with pytest.raises(InvalidDecisionError, match="`decision.approved` must be true or false"):
        await producer.resume("t-bad", suspension, {"approved": "false"})  # its shape: refused before sending
    unchecked = await Producer.open(deployment.config())  # no store: the values are checked on the worker
    try:
        bad = await unchecked.resume("t-bad", suspension, {"approved": True, "modified_args": {"n": "many"}})
        answer = await bad.response(timeout_s=20)
    finally:
        await unchecked.aclose()
    assert answer is not None and answer["refused"]["type"] == "InvalidDecisionError", answer
    assert "`decision.modified_args.n`" in answer["refused"]["message"] and ran == ["A n=1"]

    resumed = await producer.resume("t-bad", suspension, APPROVE)
    after = await resumed.response(timeout_s=30)

    assert after is not None and after.get("status") == "success", json.dumps(after)[:800]
    assert ran == ["A n=1", "B n=2", "C n=3"]


class LeftBehind:
    """Forces the interleaving where a resume job takes the pause of a waiting run (``left``): the
    run acks that decision only once the job has answered it, or (``never received``) never gets
    it. Every later decision the run left behind takes first and applies last: acked before the
    job acks it, applied after the job answered it."""

    def __init__(self, producer: Producer, thread_id: str, left: str, first: str) -> None:
        self.client, self.left, self.first = producer._client, left, first
        self.job = job_of(thread_id, first)
        self._ack, self._decide, self._send = (
            workflow_module.acknowledge,
            workflow_module._decide,
            self.client.send_async,
        )

    def install(self, monkeypatch: pytest.MonkeyPatch, missed: str) -> None:
        monkeypatch.setattr(workflow_module, "acknowledge", self.late_ack)
        monkeypatch.setattr(workflow_module, "_decide", self.decide_last)
        if missed == "never received":
            monkeypatch.setattr(self.client, "send_async", self.drop_to_left)

    async def ended(self, workflow_id: str) -> bool:
        statuses = await self.client.list_workflows_async(workflow_ids=[workflow_id], load_output=False)
        return statuses[0].status not in ("PENDING", "ENQUEUED")

    async def until_ended(self, workflow_id: str) -> None:
        for _ in range(100):
            if await self.ended(workflow_id):
                return
            await asyncio.sleep(0.1)
        raise AssertionError(f"{workflow_id} still waits")

    async def late_ack(self, suspension_id: str, ident: str | None) -> None:
        if DBOS.workflow_id == self.left and suspension_id == self.first:  # acked after the job applied it
            assert await self.client.get_event_async(self.job, response_key(suspension_id), 30) is not None
        if DBOS.workflow_id == self.job and suspension_id != self.first:  # the run left behind acks first
            for _ in range(300):
                took = await self.client.get_event_async(self.left, workflow_module.ack_key(suspension_id), 0)
                if took is not None or await self.ended(self.left):
                    break
                await asyncio.sleep(0.1)
        await self._ack(suspension_id, ident)

    async def decide_last(self, art: Any, thread_id: str, message: dict[str, Any]) -> Any:
        suspension_id = str(message["suspension_id"])
        if DBOS.workflow_id == self.left and suspension_id != self.first:  # ... and applies it last
            await self.client.get_event_async(self.job, response_key(suspension_id), timeout_seconds=30)
        return await self._decide(art, thread_id, message)

    async def drop_to_left(self, workflow_id: str, message: Any, topic: str) -> None:
        if workflow_id != self.left or message["suspension_id"] != self.first:
            await self._send(workflow_id, message, topic)


@pytest.mark.parametrize("missed", ["acked too late", "never received"])
async def test_a_run_whose_pause_another_run_took_stops_waiting_and_the_next_decision_is_answered_by_that_run(
    deployment: On, monkeypatch: pytest.MonkeyPatch, missed: str
) -> None:
    """A thread run on provider b waits in queue b; the resume job of its decision goes to the
    default provider's queue (a), so the two can run together. The job takes the pause first (the
    waiting run acked too late, or never got the decision: re-queued by a recovery when it was
    sent), pauses again and waits as well. The run left behind must stop waiting: the next
    decision is the job's to take, and its caller is answered by the job, not by a refusal from
    the run the store turned away (which both runs acked, before this was fixed)."""
    ran: list[str] = []
    producer, waiting, paused = await paused_run(
        deployment, ran, "t-two", approval="BC", queue_b=True, approvalWaitS=60
    )
    first = paused["suspension"]["id"]
    race = LeftBehind(producer, "t-two", waiting, first)
    race.install(monkeypatch, missed)
    monkeypatch.setattr(producer_module, "ACK_WAIT_S", 0.2)

    resumed = await producer.resume("t-two", first, APPROVE)
    again = await resumed.response(timeout_s=30)
    assert again is not None and again["status"] == "suspended", json.dumps(again)[:800]
    assert resumed.workflow_id == race.job
    second = again["suspension"]["id"]
    if missed == "acked too late":  # refused, it stops waiting at once (no need for a next decision)
        told = await race.client.get_event_async(race.left, response_key(first), timeout_seconds=30)
        assert told is not None and told["refused"]["type"] == "UnknownSuspensionError", told
        await race.until_ended(race.left)

    monkeypatch.setattr(producer_module, "ACK_WAIT_S", 5.0)
    last = await producer.resume("t-two", second, APPROVE)
    final = await last.response(timeout_s=30)

    assert final is not None and final.get("status") == "success", json.dumps(final)[:800]
    assert last.workflow_id == race.job  # the run that carries the thread now
    assert ran == ["A n=1", "B n=2", "C n=3"]
    await race.until_ended(
        race.left
    )  # the run left behind stopped waiting, not answering the second decision
    assert await race.client.get_event_async(race.left, response_key(second), timeout_seconds=0) is None


async def test_a_repeated_decision_handed_to_the_run_that_acked_it_is_answered_by_the_job_that_applied_it(
    deployment: On, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client sends the same decision twice (a retried request). The first finds the waiting run
    (provider b's queue) not acking in time and queues a resume job, on the default queue; the
    repeat finds the run's ack of that very decision and is handed the run. The job applies it first,
    so the store refuses the run: both callers must get the job's answer, not the run's refusal."""
    ran: list[str] = []
    producer, left, paused = await paused_run(
        deployment, ran, "t-again", approval="BC", queue_b=True, approvalWaitS=60
    )
    first = paused["suspension"]["id"]
    job = job_of("t-again", first)
    client, repeated = producer._client, asyncio.Event()
    ack: Callable[[str, str | None], Awaitable[None]] = workflow_module.acknowledge
    decide = workflow_module._decide

    async def ack_once_queued(suspension_id: str, ident: str | None) -> None:
        while not await client.list_workflows_async(workflow_ids=[job], load_input=False, load_output=False):
            await asyncio.sleep(0.05)  # the run acks only after the first request queued its job
        await ack(suspension_id, ident)

    async def job_first(art: Any, thread_id: str, message: dict[str, Any]) -> Any:
        if DBOS.workflow_id == job:
            await repeated.wait()  # ... and the job applies it once the repeat got its handle
        elif DBOS.workflow_id == left:  # the run, after the job
            await client.get_event_async(job, response_key(first), timeout_seconds=30)
        return await decide(art, thread_id, message)

    monkeypatch.setattr(workflow_module, "acknowledge", ack_once_queued)
    monkeypatch.setattr(workflow_module, "_decide", job_first)
    monkeypatch.setattr(producer_module, "ACK_WAIT_S", 0.2)
    once = await producer.resume("t-again", first, APPROVE)
    assert once.workflow_id == job
    monkeypatch.setattr(producer_module, "ACK_WAIT_S", 5.0)
    try:
        again = await producer.resume("t-again", first, APPROVE)
        assert again.workflow_id == left  # the run acked this decision: the repeat is handed the run
    finally:
        repeated.set()

    answers = [await once.response(timeout_s=30), await again.response(timeout_s=30)]
    assert answers[0] is not None and answers[0]["status"] == "suspended", json.dumps(answers[0])[:800]
    assert answers[1] == answers[0], json.dumps(answers[1])[:800]
    assert once.workflow_id == again.workflow_id == job
    assert ran == ["A n=1", "B n=2"]  # applied once
    told = await client.get_event_async(left, response_key(first), timeout_seconds=0)
    assert told is not None and "refused" in told  # what the repeat was answered before


async def test_a_repeated_decision_refused_by_a_busy_thread_is_told_so_at_once_though_its_job_is_queued(
    deployment: On, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same decision twice, one queue: the first request's job waits behind the waiting run,
    which took the decision (acked too late for the first request, in time for the repeat). A run
    made outside the queue holds the thread, so the store refuses the waiting run, and the thread
    still waits on its pause. A job that has not run cannot have applied the decision: the repeat is
    answered the refusal at once, not after the run's whole approval wait."""
    ran: list[str] = []
    producer, waiting, paused = await paused_run(deployment, ran, "t-busy", approvalWaitS=60)
    first = paused["suspension"]["id"]
    job = job_of("t-busy", first)
    client = producer._client
    ack: Callable[[str, str | None], Awaitable[None]] = workflow_module.acknowledge

    async def ack_once_queued(suspension_id: str, ident: str | None) -> None:
        while not await client.list_workflows_async(workflow_ids=[job], load_input=False, load_output=False):
            await asyncio.sleep(0.05)  # the run acks only after the first request queued its job
        await ack(suspension_id, ident)

    assert deployment.worker is not None and deployment.worker.art is not None
    store = deployment.worker.art.store
    state, version = await store.load("t-busy")
    await lease.claim(store, "t-busy", "outside", state, version, config=ConcurrencyConfig(), clock=time.time)
    monkeypatch.setattr(workflow_module, "acknowledge", ack_once_queued)
    monkeypatch.setattr(producer_module, "ACK_WAIT_S", 0.2)
    try:
        once = await producer.resume("t-busy", first, APPROVE)
        assert once.workflow_id == job
        monkeypatch.setattr(producer_module, "ACK_WAIT_S", 5.0)
        again = await producer.resume("t-busy", first, APPROVE)
        answer = await again.response(timeout_s=10)
    finally:
        await lease.abandon(store, "t-busy", "outside")

    assert answer is not None and answer["refused"]["type"] == "ThreadBusyError", answer
    assert again.workflow_id == waiting
    assert ran == ["A n=1"]
