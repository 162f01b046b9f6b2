"""Runs as DBOS workflows on SQLite, in this process: a run's calls are steps, the queue's options
come from config, a paused run's workflow takes a decision sent from elsewhere."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos", reason="the `dbos` extra is not installed: pip install -e '.[dbos]'")

from dbos import DBOS
from test_crash import ANSWER, ANSWER_TEXT, QUERY, call, done, plan

from pes_agent.config import config_from_dict
from pes_agent.errors import StoreUnavailableError, UnknownSuspensionError
from pes_agent.events import EventType
from pes_agent.state.memory import MemoryStore
from pes_agent.state.models import ThreadState
from pes_agent.state.store import StateStore
from pes_agent.testing import ScriptedProvider
from pes_agent.tools.decorators import tool_from_schema
from pes_agent.tools.spec import ToolSpec
from pes_agent.workers import Producer, Worker

_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def write_tools(ran: list[str], *, approval: str = "") -> list[ToolSpec]:
    def make(letter: str) -> ToolSpec:
        def write(n: int) -> dict[str, Any]:
            ran.append(f"{letter} n={n}")
            return {"written": letter, "n": n}

        return tool_from_schema(
            f"tool_{letter.lower()}",
            f"Write {letter}.",
            _SCHEMA,
            write,
            side_effects=True,
            requires_approval=letter in approval,
        )

    return [make(letter) for letter in "ABC"]


def config(tmp_path: Path, **workers: Any) -> Any:
    return config_from_dict(
        {
            "storage": {"type": "sqlite", "path": str(tmp_path / "state.db")},
            "workers": {"systemDatabase": f"sqlite:///{tmp_path / 'dbos.sqlite'}", **workers},
        }
    )


class Deployment:
    """One worker and one producer over the same databases, stopped at the end of the test."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.worker: Worker | None = None
        self.producer: Producer | None = None

    async def start(
        self,
        replies: list[Any],
        tools: list[ToolSpec],
        store: StateStore | None = None,
        provider_names: Sequence[str] = ("scripted",),
        **workers: Any,
    ) -> Producer:
        """``provider_names``: the names the one scripted provider answers under (configured ones
        get a queue each)."""
        cfg = self.config(**workers)
        self.provider = ScriptedProvider(replies)
        providers = dict.fromkeys(provider_names, self.provider)
        self.worker = Worker(cfg, tools=tools, providers=providers, executor_id="w1", store=store)
        await self.worker.start()
        self.producer = await Producer.open(cfg, store=self.worker.art.store if self.worker.art else None)
        return self.producer

    def config(self, **workers: Any) -> Any:
        return config(self.tmp_path, **workers)

    async def stop(self) -> None:
        if self.producer is not None:
            await self.producer.aclose()
        if self.worker is not None:
            await self.worker.stop()


@pytest.fixture
async def deployment(tmp_path: Path) -> AsyncIterator[Deployment]:
    running = Deployment(tmp_path)
    try:
        yield running
    finally:
        await running.stop()


async def test_a_queued_run_is_a_workflow_whose_calls_are_steps(deployment: Deployment) -> None:
    ran: list[str] = []
    script = [plan(), call("A"), done("A"), call("B"), done("B"), call("C"), done("C"), ANSWER]
    producer = await deployment.start(script, write_tools(ran))

    handle = await producer.enqueue(QUERY, thread_id="t1")
    response = await handle.response(timeout_s=30)

    assert response is not None and response["status"] == "success"
    assert response["response"] == ANSWER_TEXT
    assert ran == ["A n=1", "B n=2", "C n=3"]
    assert await handle.result() == response
    names = [s["function_name"] for s in await DBOS.list_workflow_steps_async(handle.workflow_id)]
    assert names[:5] == [
        "store.load",
        "store.save",
        "store.messages",
        "store.append_message",
        "model planning -",
    ]
    for letter, step in zip("abc", (1, 2, 3), strict=True):
        tool_step = f"tool tool_{letter} step_{step} call_step_{step}_1"
        assert names.count(tool_step) == 1 and names[names.index(tool_step) - 1] == f"reach {tool_step}"
    assert names.count("model synthesis -") == 1
    assert deployment.worker is not None and deployment.worker.art is not None
    events = await deployment.worker.art.get_observations("t1", types=[EventType.FINAL_RESPONSE])
    assert [e.data["response"] for e in events] == [ANSWER_TEXT]  # in the store: visible to any process
    stored = await deployment.worker.art.get_observations("t1")
    # ids a replay draws again: an event written again after a crash is skipped by the store
    assert stored[0].id == uuid.uuid5(uuid.NAMESPACE_URL, f"{handle.workflow_id}/event/1").hex
    assert "store.append_events" not in names and "store.call_started" not in names  # safe to repeat
    deployment.provider.assert_complete()


async def test_a_run_queued_before_any_worker_ever_started_is_run_by_the_first(
    deployment: Deployment, tmp_path: Path
) -> None:
    early = await Producer.open(config(tmp_path))  # a new system database: no worker has made its tables
    try:
        handle = await early.enqueue(QUERY, thread_id="t-early")
        ran: list[str] = []
        await deployment.start(
            [plan(), call("A"), done("A"), call("B"), done("B"), call("C"), done("C"), ANSWER],
            write_tools(ran),
        )
        response = await handle.response(timeout_s=30)
    finally:
        await early.aclose()
    assert response is not None and response["status"] == "success"
    assert ran == ["A n=1", "B n=2", "C n=3"]


class DiskFullAfterClaim(MemoryStore):
    """A store whose disk fills up once the run has claimed its thread: a failure that is no refusal."""

    async def save(self, thread_id: str, state: ThreadState, expected_version: int) -> int:
        if expected_version > 0:
            raise OSError("no space left on device")
        return await super().save(thread_id, state, expected_version)


async def test_a_run_that_fails_on_the_worker_is_reported_at_once_not_after_the_wait(
    deployment: Deployment,
) -> None:
    producer = await deployment.start(approval_script(), write_tools([]), store=DiskFullAfterClaim())

    handle = await producer.enqueue(QUERY, thread_id="t-full")
    response = await handle.response(timeout_s=20)

    assert response is not None, "the caller waited the whole timeout for a run that had already failed"
    assert response == {
        "thread_id": "t-full",
        "failed": {
            "type": "OSError",
            "message": "the run failed on a worker (OSError); the worker's log has why",
        },
    }
    with pytest.raises(OSError, match="no space left"):
        await handle.result()  # DBOS records the workflow as failed


class DroppingEveryOtherWrite(MemoryStore):
    """A store whose connection drops on every other write once the run has claimed its thread (a
    database restarting), half of the drops after the write was applied: what a worker must ride out."""

    def __init__(self) -> None:
        super().__init__()
        self.drops = 0

    async def save(self, thread_id: str, state: ThreadState, expected_version: int) -> int:
        if expected_version == 0:
            return await super().save(thread_id, state, expected_version)
        self.drops += 1
        if self.drops % 4 == 1:
            raise StoreUnavailableError("connection refused (the test's database is restarting)")
        version = await super().save(thread_id, state, expected_version)
        if self.drops % 4 == 2:
            raise StoreUnavailableError("connection lost after the commit")
        return version


async def test_a_store_that_drops_its_connection_for_a_moment_delays_a_run_but_does_not_fail_it(
    deployment: Deployment,
) -> None:
    ran: list[str] = []
    store = DroppingEveryOtherWrite()
    producer = await deployment.start(
        [plan(), call("A"), done("A"), call("B"), done("B"), call("C"), done("C"), ANSWER],
        write_tools(ran),
        store=store,
    )
    response = await (await producer.enqueue(QUERY, thread_id="t-flaky")).response(timeout_s=60)
    assert response is not None and response["status"] == "success", response
    assert ran == ["A n=1", "B n=2", "C n=3"]  # no tool ran twice for a retried save
    assert store.drops >= 4


class DownBeforeToolC(MemoryStore):
    """A database that becomes unreachable as the run is about to start tool C, and stays down until
    the test brings it back: an outage longer than the worker's window."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.went_down = False

    def _check(self) -> None:
        if self.down:
            raise StoreUnavailableError("connection refused (the test's database is down)")

    async def call_started(
        self, thread_id: str, item_id: str, call_id: str, tool_name: str, arguments: Any
    ) -> None:
        if tool_name == "tool_c" and not self.went_down:
            self.down = self.went_down = True
        self._check()
        await super().call_started(thread_id, item_id, call_id, tool_name, arguments)

    async def load(self, thread_id: str) -> Any:
        self._check()
        return await super().load(thread_id)

    async def save(self, thread_id: str, state: ThreadState, expected_version: int) -> int:
        self._check()
        return await super().save(thread_id, state, expected_version)

    async def append_events(self, events: Any) -> None:
        self._check()
        await super().append_events(events)


async def test_an_outage_past_the_window_fails_the_run_honestly_and_recover_continues_it(
    deployment: Deployment,
) -> None:
    ran: list[str] = []
    store = DownBeforeToolC()
    script = [plan(), call("A"), done("A"), call("B"), done("B"), call("C"), call("C"), done("C"), ANSWER]
    producer = await deployment.start(script, write_tools(ran), store=store, storeOutageS=0.5)

    handle = await producer.enqueue(QUERY, thread_id="t-outage")
    failed = await handle.response(timeout_s=30)

    assert failed is not None and failed["failed"]["type"] == "StoreUnavailableError", failed
    assert "was unreachable for 0.5 s" in failed["failed"]["message"]
    assert "Producer.recover" in failed["failed"]["message"]
    assert ran == ["A n=1", "B n=2"]
    steps = await DBOS.list_workflow_steps_async(handle.workflow_id)
    assert not [s for s in steps if isinstance(s.get("error"), StoreUnavailableError)]  # never an outcome

    store.down = False  # the database is back
    recovered = await (await producer.recover("t-outage")).response(timeout_s=30)

    assert recovered is not None and recovered["status"] == "success", recovered
    assert ran == ["A n=1", "B n=2", "C n=3"]  # A and B, finished in the journal, did not run again
    state, _ = await store.load("t-outage")
    assert state is not None and state.lease is None
    deployment.provider.assert_complete()


def one_step(call_: Any) -> str:
    """Any number of concurrent runs, each planning one step with the tool its query names
    ("Letter B, please." pauses for approval when B needs it), then answering."""
    request = call_.request
    asked = re.search(r"Letter ([ABC]), please", " ".join(m.content for m in request.messages))
    letter = asked.group(1) if asked else "A"
    if request.phase == "planning":
        step = {
            "id": "step_1",
            "description": f"write {letter}",
            "stepType": "tool",
            "requiredTools": [f"tool_{letter.lower()}"],
        }
        body = {"title": "Write", "intent": "write", "plan": "one step", "todoList": [step]}
        return f"---JSON_OUTPUT_START---\n{json.dumps(body)}\n---JSON_OUTPUT_END---"
    if request.phase == "synthesis":
        return f"<mainContent>{letter} written</mainContent>"
    if any(m.role == "assistant" for m in request.messages):
        return done(letter)
    return call(letter)


async def test_paused_runs_free_their_slots_and_a_decision_continues_them(deployment: Deployment) -> None:
    """By default (``approvalWaitS: 0``) a paused run's workflow ends: more paused runs than slots
    never keep a new run from starting; the decision enqueues the run that continues the pause."""
    ran: list[str] = []
    producer = await deployment.start([one_step] * 100, write_tools(ran, approval="B"), concurrency=2)

    paused = [await producer.enqueue("Letter B, please.", thread_id=f"t-paused-{i}") for i in range(4)]
    pauses = [await h.response(timeout_s=30) for h in paused]
    assert [p and p["status"] for p in pauses] == ["suspended"] * 4, pauses
    fresh = await (await producer.enqueue("Letter A, please.", thread_id="t-fresh")).response(timeout_s=10)
    assert fresh is not None and fresh["status"] == "success", fresh

    first = pauses[0]
    assert first is not None
    decided = await producer.resume(first["thread_id"], first["suspension"]["id"], {"approved": True})
    final = await decided.response(timeout_s=30)
    assert final is not None and final["status"] == "success", final
    assert sorted(ran) == ["A n=1", "B n=2"]


async def test_queues_take_rate_limit_and_concurrency_from_config(deployment: Deployment) -> None:
    await deployment.start(
        [],
        write_tools([]),
        concurrency=3,
        providers={"scripted": {"runsPerPeriod": 7, "periodS": 2, "concurrency": 5}},
    )

    queue = await DBOS.retrieve_queue_async("pes-agent.default")

    assert queue is not None
    assert (queue.worker_concurrency, queue.partition_concurrency) == (3, 1)
    # providers injected in code are not in the config's `providers`: the queue is `default`, and
    # `workers.providers.scripted` only applies to a configured provider of that name
    assert queue.limiter is None and queue.concurrency is None


def approval_script() -> list[Any]:
    return [plan(), call("A"), done("A"), call("B")]


async def test_a_paused_run_waits_and_a_decision_from_elsewhere_continues_the_same_workflow(
    deployment: Deployment,
) -> None:
    ran: list[str] = []
    producer = await deployment.start(
        [*approval_script(), done("B"), call("C"), done("C"), ANSWER],
        write_tools(ran, approval="B"),
        approvalWaitS=60,
    )
    handle = await producer.enqueue(QUERY, thread_id="t-hitl")
    paused = await handle.response(timeout_s=30)
    assert paused is not None and paused["status"] == "suspended"
    suspension = paused["suspension"]
    assert ran == ["A n=1"]

    with pytest.raises(UnknownSuspensionError):
        await producer.resume("t-hitl", "susp_wrong", {"approved": True})
    resumed = await producer.resume("t-hitl", suspension["id"], {"approved": True})
    after = await resumed.response(timeout_s=30)

    assert resumed.workflow_id == handle.workflow_id  # the waiting workflow took it
    assert after is not None and after["status"] == "success", json.dumps(after)[:800]
    assert ran == ["A n=1", "B n=2", "C n=3"]
    assert await handle.result() == after
    deployment.provider.assert_complete()


async def test_a_decision_after_the_wait_is_run_by_a_new_job(deployment: Deployment) -> None:
    ran: list[str] = []
    producer = await deployment.start(
        [*approval_script(), done("B"), call("C"), done("C"), ANSWER],
        write_tools(ran, approval="B"),
        approvalWaitS=0,
    )
    handle = await producer.enqueue(QUERY, thread_id="t-late")
    paused = await handle.result()  # no wait: the workflow ended with the pause
    assert paused["status"] == "suspended"

    resumed = await producer.resume("t-late", paused["suspension"]["id"], {"approved": True})
    after = await resumed.response(timeout_s=30)

    assert resumed.workflow_id != handle.workflow_id
    assert after is not None and after["status"] == "success"
    assert ran == ["A n=1", "B n=2", "C n=3"]


def test_the_example_config_maps_to_dbos_queue_options(monkeypatch: pytest.MonkeyPatch) -> None:
    from pes_agent.config import load_config
    from pes_agent.workers.queues import queue_name, queue_options

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("PGPASSWORD", "pw")
    cfg = load_config(Path(__file__).resolve().parents[1] / "config" / "workers.example.yaml")

    assert cfg.workers.enabled and queue_name("openai") == "pes-agent.openai"
    assert queue_options(cfg.workers, "openai", concurrency=2) == {
        "worker_concurrency": 2,
        "partition_concurrency": 1,
        "polling_interval_sec": 0.2,
        "limiter": {"limit": 60, "period": 60.0},
        "global_concurrency": 32,
    }
    assert "pw" not in repr(cfg.workers)  # the system database URL is a secret


async def test_a_save_repeated_after_it_reached_the_store_is_taken_as_the_runs_own(
    deployment: Deployment, tmp_path: Path
) -> None:
    """DBOS steps are at least once: a save whose step was not recorded runs again on replay."""
    await deployment.start([], write_tools([]))  # DBOS launched
    from pes_agent.errors import VersionConflictError
    from pes_agent.state.models import Lease, ThreadState
    from pes_agent.state.sqlite import SQLiteStore
    from pes_agent.workers.store import DurableStore

    store = DurableStore(SQLiteStore(str(tmp_path / "other.db")))
    try:
        ours = ThreadState(query="q", lease=Lease(trace_id="run-1", owner="w1:1", heartbeat=1.0))
        first = await store.save("t", ours, 0)
        ours.plan = "step two"
        assert await store.save("t", ours, 0) == first + 1  # the same save again, from its replay
        state, _ = await store.load("t")
        assert state is not None and state.plan == "step two"

        theirs = ThreadState(query="q", lease=Lease(trace_id="run-2", owner="w2:1", heartbeat=1.0))
        with pytest.raises(VersionConflictError):
            await store.save("t", theirs, first)  # another run: a real conflict
    finally:
        await store.aclose()
