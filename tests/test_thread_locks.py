"""The in-process thread guard: runs on one thread queue or are refused, and a finished thread
leaves nothing behind (a service that has seen a million threads must not hold a million locks)."""

from __future__ import annotations

import asyncio

import pytest

from pes_agent import ThreadBusyError, create_art_instance
from pes_agent.agent.thread_locks import ThreadLocks
from pes_agent.testing import ScriptedProvider

ANSWER = "<mainContent>done</mainContent>"
PLAN = (
    '{"title": "t", "intent": "i", "plan": "p", "todoList": [{"id": "s1", "description": "think", '
    '"stepType": "reasoning"}]}'
)


async def test_finished_threads_leave_no_lock_behind() -> None:
    replies = [PLAN, "thought", ANSWER] * 50
    art = await create_art_instance(
        {"storage": {"type": "memory"}}, providers={"scripted": ScriptedProvider(replies)}
    )
    for i in range(50):
        response = await art.process("q", thread_id=f"t{i}")
        assert response.status == "success", response.error
    assert len(art._locks) == 0


async def test_waiters_run_one_after_another_and_the_lock_goes_with_the_last() -> None:
    locks = ThreadLocks()
    order: list[str] = []

    async def run(name: str) -> None:
        async with locks.hold("t", refuse_when_busy=False):
            order.append(f"{name} in")
            await asyncio.sleep(0.01)
            order.append(f"{name} out")

    await asyncio.gather(run("a"), run("b"), run("c"))
    assert order == ["a in", "a out", "b in", "b out", "c in", "c out"]
    assert len(locks) == 0


async def test_a_busy_thread_is_refused_when_asked_and_others_are_not() -> None:
    locks = ThreadLocks()
    async with locks.hold("t", refuse_when_busy=True):
        with pytest.raises(ThreadBusyError):
            locks.hold("t", refuse_when_busy=True)
        async with locks.hold("other", refuse_when_busy=True):
            assert len(locks) == 2
    assert len(locks) == 0


async def test_a_cancelled_waiter_and_a_failing_holder_leave_nothing() -> None:
    locks = ThreadLocks()
    entered = asyncio.Event()
    release = asyncio.Event()

    async def holder() -> None:
        async with locks.hold("t", refuse_when_busy=False):
            entered.set()
            await release.wait()
            raise RuntimeError("the run failed")

    async def waiter() -> None:
        async with locks.hold("t", refuse_when_busy=False):
            raise AssertionError("a cancelled waiter must never get the lock")

    first = asyncio.ensure_future(holder())
    await entered.wait()
    second = asyncio.ensure_future(waiter())
    await asyncio.sleep(0)
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    release.set()
    with pytest.raises(RuntimeError):
        await first
    assert len(locks) == 0
