"""One run per thread at a time: a second run on a busy thread is refused with `ThreadBusyError`
(or queues, with `concurrency.onBusyThread: wait`) before it calls any model, and the stored state
is the running one's. Workers are instances sharing one SQLite file, or a separate process."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from pes_agent import AgentFinalResponse, ArtInstance, PesAgentError, ThreadBusyError, create_art_instance
from pes_agent.state.models import HistoryMessage, ItemStatus, Lease, ThreadState, TodoItem
from pes_agent.state.sqlite import SQLiteStore
from pes_agent.testing import ScriptedCall, ScriptedProvider

REPO = Path(__file__).resolve().parents[1]
THREAD = "shared-thread"
ANSWER = "<mainContent>done</mainContent>"
TIMEOUT_S = 60

LEASE_KEPT_AFTER_EARLY_FAILURE = (
    "pes_agent/instance.py `process`/`resume`/`_recover`: an exception after `_claim` but before "
    "`_finish` (`_context`, `_history`, `remember`) skips `release`, so the trace id stays in "
    "pes_agent/agent/lease.py `_HELD` and the lease in the store; `is_stale` then never lets this "
    "process run on the thread again (the own-pid branch ignores the heartbeat's age)"
)


def plan(title: str, *step_ids: str) -> str:
    items = [{"id": s, "description": f"think about {s}", "stepType": "reasoning"} for s in step_ids]
    body = {"title": title, "intent": f"intent of {title}", "plan": "p", "todoList": items}
    return f"---JSON_OUTPUT_START---\n{json.dumps(body)}\n---JSON_OUTPUT_END---"


def content(text: str) -> str:
    return "```json\n" + json.dumps({"content": text, "nextStepDecision": "complete_item"}) + "\n```"


def held(
    reply: str, entered: asyncio.Event, release: asyncio.Event
) -> Callable[[ScriptedCall], Awaitable[str]]:
    """A reply that signals the run is in flight (lease taken, model called), then waits."""

    async def answer(_: ScriptedCall) -> str:
        entered.set()
        await release.wait()
        return reply

    return answer


async def instance(db: Path, provider: ScriptedProvider, **config: Any) -> ArtInstance:
    return await create_art_instance(
        {"storage": {"type": "sqlite", "path": str(db)}, **config}, providers={"scripted": provider}
    )


async def stored(db: Path, thread_id: str = THREAD) -> ThreadState:
    store = SQLiteStore(str(db))
    try:
        state, _ = await store.load(thread_id)
    finally:
        await store.aclose()
    assert state is not None
    return state


async def race(
    first: Callable[[], Awaitable[AgentFinalResponse]],
    second: Callable[[], Awaitable[AgentFinalResponse]],
    entered: asyncio.Event,
    release: asyncio.Event,
) -> list[AgentFinalResponse | BaseException]:
    """Both runs in flight: the second starts once the first is inside its (held) planning call;
    the first is released when the second has ended."""

    async def later() -> AgentFinalResponse:
        await entered.wait()
        try:
            return await second()
        finally:
            release.set()

    return list(await asyncio.gather(first(), later(), return_exceptions=True))


# -- refused ----------------------------------------------------------------------------------------


async def test_two_instances_sharing_a_file_run_one_at_a_time(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    entered, release = asyncio.Event(), asyncio.Event()
    p1 = ScriptedProvider(
        [held(plan("first run", "s1", "s2"), entered, release), content("one"), content("two"), ANSWER]
    )
    p2 = ScriptedProvider([plan("second run", "x"), content("x"), ANSWER])
    art1, art2 = await instance(db, p1), await instance(db, p2)
    async with art1, art2:
        won, lost = await race(
            lambda: art1.process("first query", thread_id=THREAD),
            lambda: art2.process("second query", thread_id=THREAD),
            entered,
            release,
        )
    assert isinstance(lost, ThreadBusyError), lost
    assert THREAD in str(lost)
    assert p2.calls == []  # refused before any model call of its own
    assert isinstance(won, AgentFinalResponse) and won.status == "success"
    state = await stored(db)
    assert state.title == "first run" and state.query == "first query"
    assert [(i.id, i.status.value, i.result) for i in state.todo_list] == [
        ("s1", "completed", "one"),
        ("s2", "completed", "two"),
    ]
    assert state.lease is None


async def test_a_second_run_in_the_same_instance_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    entered, release = asyncio.Event(), asyncio.Event()
    provider = ScriptedProvider([held(plan("first run", "s1"), entered, release), content("one"), ANSWER])
    art = await instance(db, provider)
    async with art:
        won, lost = await race(
            lambda: art.process("first query", thread_id=THREAD),
            lambda: art.process("second query", thread_id=THREAD),
            entered,
            release,
        )
    assert isinstance(lost, ThreadBusyError), lost
    assert isinstance(won, AgentFinalResponse) and won.status == "success"
    assert [c.phase for c in provider.calls] == ["planning", "execution", "synthesis"]
    state = await stored(db)
    assert state.title == "first run" and state.query == "first query"
    assert [(i.id, i.status.value) for i in state.todo_list] == [("s1", "completed")]
    store = SQLiteStore(str(db))
    try:
        history = await store.messages(THREAD)
    finally:
        await store.aclose()
    assert [m.content for m in history if m.role == "user"] == ["first query"]


async def test_a_run_in_another_process_makes_the_thread_busy(tmp_path: Path) -> None:
    """The deployment case: two worker processes on one SQLite file."""
    db = tmp_path / "state.db"
    job = {
        "mode": "process",
        "storage": {"type": "sqlite", "path": str(db)},
        "thread_id": THREAD,
        "query": "worker query",
        "effects": str(tmp_path / "effects.txt"),
        "hold": True,
        "replies": [plan("worker run", "s1"), content("from the worker"), ANSWER],
    }
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        str(REPO / "tests" / "crash_worker.py"),
        json.dumps(job),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=str(REPO),
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        ready = await asyncio.wait_for(child.stdout.readline(), TIMEOUT_S)
        assert ready.decode().strip() == "READY", ready
        provider = ScriptedProvider([plan("parent run", "p1"), content("p"), ANSWER])
        async with await instance(db, provider) as art:
            with pytest.raises(ThreadBusyError, match=THREAD):
                await art.process("parent query", thread_id=THREAD)
        assert provider.calls == []
        child.stdin.write(b"go\n")
        await child.stdin.drain()
        out, err = await asyncio.wait_for(child.communicate(), TIMEOUT_S)
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
    assert child.returncode == 0, err.decode()
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["response"]["status"] == "success", err.decode()
    state = await stored(db)
    assert state.title == "worker run" and state.query == "worker query"
    assert [(i.id, i.status.value, i.result) for i in state.todo_list] == [
        ("s1", "completed", "from the worker")
    ]
    assert state.lease is None


# -- waiting ------------------------------------------------------------------------------------------


WAIT = {"concurrency": {"onBusyThread": "wait"}}


async def test_with_wait_configured_the_second_run_queues_behind_the_first(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    entered, release = asyncio.Event(), asyncio.Event()
    provider = ScriptedProvider(
        [
            held(plan("first run"), entered, release),
            "<mainContent>first answer</mainContent>",
            plan("second run"),
            "<mainContent>second answer</mainContent>",
        ]
    )
    art = await instance(db, provider, **WAIT)
    async with art:
        first = asyncio.ensure_future(art.process("first query", thread_id=THREAD))
        await entered.wait()
        second = asyncio.ensure_future(art.process("second query", thread_id=THREAD))
        await asyncio.sleep(0)  # let it start: under `refuse` it would fail right here
        assert not second.done()
        release.set()
        one, two = await asyncio.gather(first, second)
    assert (one.status, one.response) == ("success", "first answer")
    assert (two.status, two.response) == ("success", "second answer")
    assert [c.phase for c in provider.calls] == ["planning", "synthesis", "planning", "synthesis"]
    assert "second query" in provider.calls[2].text and "first answer" in provider.calls[2].text
    state = await stored(db)
    assert state.title == "second run" and state.lease is None


class WatchedStore(SQLiteStore):
    """Sets `waiting` on its second load: a run that found the thread busy is polling the lease."""

    def __init__(self, path: str, waiting: asyncio.Event) -> None:
        super().__init__(path)
        self.loads = 0
        self.waiting = waiting

    async def load(self, thread_id: str) -> tuple[ThreadState | None, int]:
        self.loads += 1
        if self.loads == 2:
            self.waiting.set()
        return await super().load(thread_id)


async def test_with_wait_configured_another_instance_queues_behind_the_first(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    entered, release = asyncio.Event(), asyncio.Event()
    overlapped: list[str] = []

    def second_plan(_: ScriptedCall) -> str:
        if not release.is_set():  # the second run reached its model while the first still ran
            overlapped.append("planning")
            release.set()
        return plan("second run")

    p1 = ScriptedProvider(
        [held(plan("first run"), entered, release), "<mainContent>first answer</mainContent>"]
    )
    p2 = ScriptedProvider([second_plan, "<mainContent>second answer</mainContent>"])
    art1 = await instance(db, p1, **WAIT)
    watched = WatchedStore(str(db), release)
    art2 = await create_art_instance(
        {"storage": {"type": "sqlite", "path": str(db)}, **WAIT}, providers={"scripted": p2}, store=watched
    )
    try:
        async with art1, art2:
            first = asyncio.ensure_future(art1.process("first query", thread_id=THREAD))
            await entered.wait()
            one, two = await asyncio.gather(first, art2.process("second query", thread_id=THREAD))
    finally:
        await watched.aclose()
    assert overlapped == []
    assert (one.status, two.status) == ("success", "success")
    assert "first answer" in p2.calls[0].text  # it ran after the first, on its saved history
    state = await stored(db)
    assert state.title == "second run" and state.lease is None


# -- stale leases -------------------------------------------------------------------------------------

NOW = 1_000_000.0


@pytest.mark.parametrize(("age_s", "busy"), [(31.0, False), (3600.0, False), (29.0, True)])
async def test_a_lease_older_than_the_timeout_does_not_block_a_new_run(
    tmp_path: Path, age_s: float, busy: bool
) -> None:
    """A worker on another host died holding the thread: its lease goes stale after leaseTimeoutS."""
    db = tmp_path / "state.db"
    store = SQLiteStore(str(db))
    left = ThreadState(
        query="the dead run's query",
        title="dead run",
        lease=Lease(trace_id="dead-trace", owner="another-host:4242", heartbeat=NOW - age_s),
    )
    try:
        await store.save(THREAD, left, 0)
    finally:
        await store.aclose()
    provider = ScriptedProvider([plan("new run", "s1"), content("fresh"), ANSWER])
    art = await create_art_instance(
        {"storage": {"type": "sqlite", "path": str(db)}, "concurrency": {"leaseTimeoutS": 30}},
        providers={"scripted": provider},
        clock=lambda: NOW,
    )
    async with art:
        if busy:
            with pytest.raises(ThreadBusyError, match=THREAD):
                await art.process("new query", thread_id=THREAD)
        else:
            response = await art.process("new query", thread_id=THREAD)
            assert response.status == "success"
    state = await stored(db)
    if busy:
        assert provider.calls == []
        assert state.title == "dead run" and state.lease is not None and state.lease.trace_id == "dead-trace"
    else:
        assert state.title == "new run" and state.lease is None
        assert [(i.id, i.status.value) for i in state.todo_list] == [("s1", "completed")]


# -- a run that fails before it starts -----------------------------------------------------------


class FlakyHistoryStore(SQLiteStore):
    """The first history read fails, as a database hiccup would, after the run took its lease."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.failures_left = 1

    async def messages(self, thread_id: str, limit: int | None = None) -> list[HistoryMessage]:
        if self.failures_left:
            self.failures_left -= 1
            raise PesAgentError("history read failed (simulated)")
        return await super().messages(thread_id, limit)


async def test_a_run_that_fails_before_its_first_model_call_does_not_keep_the_thread(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    flaky = FlakyHistoryStore(str(db))
    provider = ScriptedProvider([plan("retry", "s1"), content("ok"), ANSWER])
    art = await create_art_instance(
        {"storage": {"type": "sqlite", "path": str(db)}}, providers={"scripted": provider}, store=flaky
    )
    try:
        with pytest.raises(PesAgentError, match="simulated"):
            await art.process("first try", thread_id=THREAD)
        response = await art.process("second try", thread_id=THREAD)  # the same worker retries
    finally:
        await art.aclose()
        await flaky.aclose()
    assert response.status == "success"
    state = await stored(db)
    assert state.title == "retry" and state.lease is None


# -- a run known to have ended -------------------------------------------------------------------


async def test_recover_continues_a_run_its_worker_reported_ended_though_its_lease_is_fresh(
    tmp_path: Path,
) -> None:
    """A worker gave up on the database after every item was done: it could write neither the answer
    nor ``stopped``, and its lease is seconds old. The producer knows that run ended (its workflow
    failed) and names its trace: recover writes the answer instead of refusing until the lease ages."""
    db = tmp_path / "state.db"
    store = SQLiteStore(str(db))
    left = ThreadState(
        query="what is done",
        title="ended run",
        todo_list=[TodoItem(id="s1", description="look it up", status=ItemStatus.COMPLETED, result="found")],
        lease=Lease(trace_id="ended-trace", owner="another-host:4242", heartbeat=NOW - 1),
    )
    try:
        await store.save(THREAD, left, 0)
    finally:
        await store.aclose()
    provider = ScriptedProvider([ANSWER])
    art = await create_art_instance(
        {"storage": {"type": "sqlite", "path": str(db)}, "concurrency": {"leaseTimeoutS": 30}},
        providers={"scripted": provider},
        clock=lambda: NOW,
    )
    async with art:
        with pytest.raises(PesAgentError, match="no unfinished run"):
            await art.resume(THREAD, ended_trace="another-trace")
        response = await art.resume(THREAD, ended_trace="ended-trace")
    assert response.status == "success" and response.response == "done"
    state = await stored(db)
    assert state.lease is None


@pytest.mark.parametrize("lease_left", [True, False])
async def test_recover_of_a_run_that_had_written_its_answer_returns_it_and_does_not_answer_twice(
    tmp_path: Path, lease_left: bool
) -> None:
    """The database went away after the answer was written: before the state's last save (the lease
    is still there) or during it (the save committed, the worker never heard: no lease, no
    ``stopped``). Either way recover gives that answer back rather than answer again or refuse."""
    db = tmp_path / "state.db"
    store = SQLiteStore(str(db))
    left = ThreadState(
        query="what is done",
        todo_list=[TodoItem(id="s1", description="look it up", status=ItemStatus.COMPLETED, result="found")],
        lease=Lease(trace_id="ended-trace", owner="another-host:4242", heartbeat=NOW - 1)
        if lease_left
        else None,
    )
    try:
        await store.save(THREAD, left, 0)
        for role, text in (("user", "what is done"), ("assistant", "It is found.")):
            await store.append_message(
                THREAD, HistoryMessage(role=role, content=text, trace_id="ended-trace", timestamp=NOW - 2)
            )
    finally:
        await store.aclose()
    provider = ScriptedProvider([])
    art = await create_art_instance(
        {"storage": {"type": "sqlite", "path": str(db)}, "concurrency": {"leaseTimeoutS": 30}},
        providers={"scripted": provider},
        clock=lambda: NOW,
    )
    async with art:
        response = await art.resume(THREAD, ended_trace="ended-trace")
        roles = [m.role for m in await art.store.messages(THREAD)]
    assert response.status == "success" and response.response == "It is found."
    assert provider.calls == [] and roles == ["user", "assistant"]
    assert (await stored(db)).lease is None
