"""Thread ownership: a thread belongs to the user of its first run, on every store.

Each case runs on the memory, SQLite and PostgreSQL stores (PostgreSQL skips without
``PES_AGENT_PG_DSN``; see ``pg_server.py``): the owner travels in the stored state, so a store that
dropped it would let another user in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from pg_server import pg_dsn

from pes_agent import ArtInstance, PesAgentError, ThreadAccessError, create_art_instance
from pes_agent.state.store import StateStore
from pes_agent.testing import ScriptedProvider
from tests.test_hitl import PUBLISHED, _call, _done, _plan, publish
from tests.test_stores import store

__all__ = ["pg_dsn", "store"]  # fixtures, imported for pytest to find

REPLIES = [_plan(), _call("Hello"), _done("published"), "<mainContent>Published Hello.</mainContent>"]
"""One run that pauses for approval, then (after approval) publishes and answers."""


async def _instance(store: StateStore, replies: list[str] | None = None) -> ArtInstance:
    PUBLISHED.clear()
    provider = ScriptedProvider(list(REPLIES if replies is None else replies))
    return await create_art_instance(
        {"storage": {"type": "memory"}}, tools=[publish], providers={"s": provider}, store=store
    )


def _refusals(art: ArtInstance, thread: str, user: str | None) -> dict[str, Callable[[], Awaitable[Any]]]:
    """Every way to read or steer a thread, as ``user``."""
    return {
        "process": lambda: art.process("Publish 'Mine'", thread_id=thread, user_id=user),
        "resume (decision)": lambda: art.resume(thread, "susp_any", {"approved": True}, user_id=user),
        "resume (recover)": lambda: art.resume(thread, user_id=user),
        "check_for_suspended_state": lambda: art.check_for_suspended_state(thread, user_id=user),
        "get_thread_state": lambda: art.get_thread_state(thread, user_id=user),
        "get_thread_config": lambda: art.get_thread_config(thread, user_id=user),
        "get_observations": lambda: art.get_observations(thread, user_id=user),
        "get_history": lambda: art.get_history(thread, user_id=user),
    }


async def test_another_user_can_neither_read_nor_steer_a_paused_thread(store: StateStore) -> None:
    art = await _instance(store)
    first = await art.process("Publish 'Hello'", thread_id="t1", user_id="alice")
    assert first.status == "suspended" and first.suspension is not None
    events_before = len(await art.get_observations("t1", user_id="alice"))

    for user in ("bob", None):
        for name, call in _refusals(art, "t1", user).items():
            with pytest.raises(ThreadAccessError) as info:
                await call()
            assert isinstance(info.value, PesAgentError), name
            assert "'t1'" in str(info.value) and "alice" not in str(info.value), name

    # Nothing the refused calls did reached the thread: still paused, nothing published, no events.
    assert PUBLISHED == []
    pending = await art.check_for_suspended_state("t1", user_id="alice")
    assert pending is not None and pending["suspension_id"] == first.suspension["id"]
    assert len(await art.get_observations("t1", user_id="alice")) == events_before

    final = await art.resume("t1", first.suspension["id"], {"approved": True}, user_id="alice")
    assert final.status == "success" and PUBLISHED == [{"title": "Hello"}]
    history = await art.get_history("t1", user_id="alice")
    assert [m.role for m in history] == ["user", "assistant"]
    assert (await art.get_thread_state("t1", user_id="alice")) is not None


async def test_the_owner_is_the_user_of_the_first_run_and_survives_a_new_instance(store: StateStore) -> None:
    art = await _instance(store)
    await art.process("Publish 'Hello'", thread_id="t1", user_id="alice")
    again = await _instance(store)  # another process on the same store
    with pytest.raises(ThreadAccessError):
        await again.get_thread_state("t1", user_id="bob")
    state = await again.get_thread_state("t1", user_id="alice")
    assert state is not None and state.owner == "alice"


async def test_a_thread_started_without_a_user_stays_open_to_calls_without_one(store: StateStore) -> None:
    art = await _instance(store)
    first = await art.process("Publish 'Hello'", thread_id="open")
    assert first.suspension is not None
    assert (await art.check_for_suspended_state("open")) is not None
    with pytest.raises(ThreadAccessError):
        await art.check_for_suspended_state("open", user_id="alice")
    final = await art.resume("open", first.suspension["id"], {"approved": True})
    assert final.status == "success" and PUBLISHED == [{"title": "Hello"}]


async def test_settings_before_the_first_run_do_not_claim_the_thread(store: StateStore) -> None:
    art = await _instance(store)
    await art.set_thread_config("t1", {"historyLimit": 5})
    first = await art.process("Publish 'Hello'", thread_id="t1", user_id="alice")
    assert first.status == "suspended"
    with pytest.raises(ThreadAccessError):
        await art.get_thread_state("t1", user_id="bob")
    state = await art.get_thread_state("t1", user_id="alice")
    assert state is not None and state.owner == "alice" and state.config is not None


async def test_two_users_racing_for_a_new_thread_id_leave_it_to_one(store: StateStore) -> None:
    art = await _instance(store, REPLIES * 2)
    results = await asyncio.gather(
        art.process("Publish 'A'", thread_id="race", user_id="alice"),
        art.process("Publish 'B'", thread_id="race", user_id="bob"),
        return_exceptions=True,
    )
    winners = [r for r in results if not isinstance(r, BaseException)]
    assert len(winners) == 1, results
    loser = next(r for r in results if isinstance(r, BaseException))
    assert isinstance(loser, PesAgentError)  # busy or not theirs, never a run on the other's thread
    state = await store.load("race")
    owner = state[0].owner if state[0] is not None else None
    assert owner in ("alice", "bob")
    assert (await art.get_thread_state("race", user_id=owner)) is not None


async def test_a_user_lists_only_their_own_threads(store: StateStore) -> None:
    art = await _instance(store, [_plan(), _call("x")] * 3)  # three runs, each paused
    await art.process("Publish 'one'", thread_id="a1", user_id="alice")
    await art.process("Publish 'two'", thread_id="b1", user_id="bob")
    await art.process("Publish 'three'", thread_id="a2", user_id="alice")

    mine = await art.list_threads(user_id="alice")
    assert [t.thread_id for t in mine] == ["a2", "a1"]
    assert mine[0].query == "Publish 'three'" and mine[0].title == "t"
    assert mine[0].waiting_for == "approval" and mine[0].running is False
    assert [t.thread_id for t in await art.list_threads(user_id="bob")] == ["b1"]
    assert await art.list_threads(user_id="carol") == []
    assert await art.list_threads() == []
    assert [t.thread_id for t in await art.list_threads(user_id="alice", limit=1)] == ["a2"]
