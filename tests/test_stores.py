"""One conformance suite for every StateStore, plus what only SQLite and the factory promise."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Collection
from pathlib import Path

import pytest

from pes_agent.config import StorageConfig
from pes_agent.errors import ConfigError, PesAgentError, VersionConflictError
from pes_agent.events import Event, EventType
from pes_agent.state import sqlite as sqlite_module
from pes_agent.state.factory import open_store
from pes_agent.state.memory import MemoryStore
from pes_agent.state.models import (
    HistoryMessage,
    ItemStatus,
    Suspension,
    ThreadState,
    TodoItem,
    ToolCallRecord,
)
from pes_agent.state.sqlite import SCHEMA_VERSION, SQLiteStore
from pes_agent.state.store import StateStore

PACKAGE_ROOT = Path(sqlite_module.__file__).resolve().parents[2]
"""Where the `pes_agent` under test lives, so a child process imports the same code."""


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StateStore]:
    made: StateStore = MemoryStore() if request.param == "memory" else SQLiteStore(str(tmp_path / "state.db"))
    assert isinstance(made, StateStore)
    yield made
    await made.aclose()


def a_state() -> ThreadState:
    return ThreadState(
        title="Weather trip",
        intent="compare the weather in two cities",
        plan="look both up, then compare",
        todo_list=[
            TodoItem(
                id="1",
                description="weather in Oslo",
                step_type="tool",
                required_tools=["get_weather"],
                status=ItemStatus.COMPLETED,
                result={"temp_c": 4.5},
                tool_results=[
                    ToolCallRecord(
                        call_id="c1",
                        tool_name="get_weather",
                        arguments={"city": "Oslo", "units": "metric"},
                        status="success",
                        output={"temp_c": 4.5, "sky": ["cloudy", "rain"]},
                    ),
                    ToolCallRecord(
                        call_id="c2",
                        tool_name="get_weather",
                        arguments={"city": "Olso"},
                        status="error",
                        error="unknown city 'Olso'",
                    ),
                ],
                iterations=2,
                started_at=10.0,
                completed_at=11.25,
            ),
            TodoItem(id="2", description="compare", dependencies=["1"]),
        ],
        current_step_id="2",
        is_paused=True,
        suspension=Suspension(id="s1", kind="approval", item_id="2", tool_name="send", message="ok?"),
        run_count=3,
    )


def an_event(
    event_id: str, type_: EventType, *, thread: str = "t1", ts: float = 1.0, step: str | None = None
) -> Event:
    return Event(
        id=event_id,
        type=type_,
        thread_id=thread,
        trace_id="trace-1",
        step_id=step,
        timestamp=ts,
        data={"n": event_id, "nested": {"list": [1, 2.5, None]}},
    )


def a_message(n: int, role: str = "user") -> HistoryMessage:
    return HistoryMessage.model_validate(
        {
            "role": role,
            "content": f"message {n}",
            "trace_id": f"tr{n}",
            "timestamp": float(n),
            "metadata": {"n": n},
        }
    )


# -- state ----------------------------------------------------------------------------------


async def test_unknown_thread_loads_as_nothing_at_version_zero(store: StateStore) -> None:
    assert await store.load("nobody") == (None, 0)


async def test_state_round_trips_with_todo_list_and_tool_results(store: StateStore) -> None:
    state = a_state()
    assert await store.save("t1", state, 0) == 1

    loaded, version = await store.load("t1")

    assert version == 1
    assert loaded == state
    assert loaded is not state
    assert loaded.todo_list[0].tool_results[1].error == "unknown city 'Olso'"
    assert loaded.todo_list[0].status is ItemStatus.COMPLETED


async def test_each_save_bumps_the_version_and_a_stale_save_is_refused(store: StateStore) -> None:
    first = a_state()
    assert await store.save("t1", first, 0) == 1
    second = first.model_copy(update={"title": "second"})
    assert await store.save("t1", second, 1) == 2

    stale = first.model_copy(update={"title": "lost write"})
    with pytest.raises(VersionConflictError) as info:
        await store.save("t1", stale, 1)

    assert (info.value.thread_id, info.value.expected, info.value.actual) == ("t1", 1, 2)
    loaded, version = await store.load("t1")
    assert loaded is not None and loaded.title == "second"
    assert version == 2


async def test_saving_an_unknown_thread_at_a_nonzero_version_conflicts(store: StateStore) -> None:
    with pytest.raises(VersionConflictError) as info:
        await store.save("new", a_state(), 4)
    assert (info.value.expected, info.value.actual) == (4, 0)
    assert await store.load("new") == (None, 0)


async def test_concurrent_first_saves_of_one_thread_let_exactly_one_win(store: StateStore) -> None:
    states = [ThreadState(title=f"writer {i}") for i in range(2)]

    outcomes = await asyncio.gather(*(store.save("t1", s, 0) for s in states), return_exceptions=True)

    assert sorted(type(o).__name__ for o in outcomes) == ["VersionConflictError", "int"]
    winner = states[outcomes.index(1)]
    assert await store.load("t1") == (winner, 1)


async def test_concurrent_saves_at_one_version_let_exactly_one_win(store: StateStore) -> None:
    await store.save("t1", a_state(), 0)
    states = [ThreadState(title=f"writer {i}") for i in range(3)]

    outcomes = await asyncio.gather(*(store.save("t1", s, 1) for s in states), return_exceptions=True)

    assert [o for o in outcomes if not isinstance(o, VersionConflictError)] == [2]
    assert await store.load("t1") == (states[outcomes.index(2)], 2)


async def test_mutating_a_loaded_or_saved_state_does_not_change_the_stored_one(
    store: StateStore,
) -> None:
    state = a_state()
    await store.save("t1", state, 0)
    state.title = "changed after save"
    state.todo_list[0].tool_results.clear()

    loaded, _ = await store.load("t1")
    assert loaded is not None
    loaded.title = "changed after load"
    loaded.todo_list[1].status = ItemStatus.FAILED
    loaded.todo_list[0].tool_results[0].arguments["city"] = "Bergen"

    again, _ = await store.load("t1")
    assert again == a_state()


async def test_threads_are_independent(store: StateStore) -> None:
    await store.save("a", ThreadState(title="A"), 0)
    await store.save("b", ThreadState(title="B"), 0)
    await store.save("b", ThreadState(title="B2"), 1)

    assert await store.load("a") == (ThreadState(title="A"), 1)
    assert await store.load("b") == (ThreadState(title="B2"), 2)


# -- events ---------------------------------------------------------------------------------


async def test_events_come_back_in_append_order_for_their_thread_only(store: StateStore) -> None:
    mine = [
        an_event("e1", EventType.PLAN, ts=3.0),
        an_event("e2", EventType.TOOL_CALL, ts=1.0, step="1"),
        an_event("e3", EventType.TOOL_EXECUTION, ts=2.0, step="1"),
    ]
    await store.append_events(mine[:2])
    await store.append_events([an_event("x1", EventType.PLAN, thread="other")])
    await store.append_events(mine[2:])
    await store.append_events([])

    assert await store.events("t1") == mine
    assert [e.id for e in await store.events("other")] == ["x1"]
    assert await store.events("nobody") == []


async def test_events_filter_by_type_and_strictly_after_since(store: StateStore) -> None:
    await store.append_events(
        [
            an_event("e1", EventType.PLAN, ts=1.0),
            an_event("e2", EventType.TOOL_CALL, ts=2.0),
            an_event("e3", EventType.TOOL_EXECUTION, ts=3.0),
            an_event("e4", EventType.TOOL_CALL, ts=4.0),
            an_event("o1", EventType.TOOL_CALL, thread="other", ts=5.0),
        ]
    )

    async def ids(types: Collection[EventType] | None = None, since: float | None = None) -> list[str]:
        return [e.id for e in await store.events("t1", types, since)]

    assert await ids(types={EventType.TOOL_CALL}) == ["e2", "e4"]
    assert await ids(types=[EventType.PLAN, EventType.TOOL_EXECUTION]) == ["e1", "e3"]
    assert await ids(since=2.0) == ["e3", "e4"]
    assert await ids(types={EventType.TOOL_CALL}, since=2.0) == ["e4"]
    assert await ids(types=set()) == []
    assert await ids(since=4.0) == []


async def test_appending_an_event_id_twice_keeps_one_copy(store: StateStore) -> None:
    first = an_event("e1", EventType.PLAN)
    await store.append_events([first])
    await store.append_events([first, an_event("e2", EventType.ERROR)])

    assert [e.id for e in await store.events("t1")] == ["e1", "e2"]


# -- messages -------------------------------------------------------------------------------


async def test_messages_return_the_last_n_oldest_first(store: StateStore) -> None:
    for n in range(1, 6):
        await store.append_message("t1", a_message(n, "user" if n % 2 else "assistant"))
    await store.append_message("other", a_message(99))

    everything = await store.messages("t1")
    assert [m.content for m in everything] == [f"message {n}" for n in range(1, 6)]
    assert everything[1] == a_message(2, "assistant")
    assert [m.timestamp for m in await store.messages("t1", 2)] == [4.0, 5.0]
    assert len(await store.messages("t1", 50)) == 5
    assert await store.messages("t1", 0) == []
    assert await store.messages("nobody") == []
    assert [m.content for m in await store.messages("other", 10)] == ["message 99"]
    with pytest.raises(ValueError, match="limit"):
        await store.messages("t1", -1)


async def test_mutating_a_loaded_message_does_not_change_the_stored_one(store: StateStore) -> None:
    await store.append_message("t1", a_message(1))
    (loaded,) = await store.messages("t1")
    loaded.metadata["n"] = "changed"

    assert await store.messages("t1") == [a_message(1)]


# -- SQLite only ----------------------------------------------------------------------------


async def test_sqlite_keeps_everything_across_store_instances(tmp_path: Path) -> None:
    path = str(tmp_path / "nested" / "dir" / "state.db")  # parent folders do not exist yet
    first = SQLiteStore(path)
    await first.save("t1", a_state(), 0)
    await first.append_events([an_event("e1", EventType.PLAN), an_event("e2", EventType.ERROR)])
    await first.append_message("t1", a_message(1))
    await first.aclose()
    await first.aclose()  # closing twice is harmless

    second = SQLiteStore(path)
    try:
        assert await second.load("t1") == (a_state(), 1)
        assert [e.id for e in await second.events("t1")] == ["e1", "e2"]
        assert await second.messages("t1") == [a_message(1)]
        assert await second.save("t1", ThreadState(title="next"), 1) == 2
        await second.append_message("t1", a_message(2))
        assert [m.content for m in await second.messages("t1", 1)] == ["message 2"]
    finally:
        await second.aclose()


async def test_sqlite_stores_sharing_a_file_cannot_both_win_a_version(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    stores = [SQLiteStore(path) for _ in range(2)]
    try:
        await stores[0].save("t1", ThreadState(), 0)
        outcomes = await asyncio.gather(
            stores[0].save("t1", ThreadState(title="from 0"), 1),
            stores[1].save("t1", ThreadState(title="from 1"), 1),
            return_exceptions=True,
        )
        assert sorted(type(o).__name__ for o in outcomes) == ["VersionConflictError", "int"]
        state, version = await stores[1].load("t1")
        assert version == 2
        assert state is not None and state.title == f"from {outcomes.index(2)}"
    finally:
        for s in stores:
            await s.aclose()


_WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from pes_agent.errors import VersionConflictError
    from pes_agent.state.models import ThreadState
    from pes_agent.state.sqlite import SQLiteStore

    async def main(path, rounds):
        store = SQLiteStore(path)
        for _ in range(rounds):
            while True:
                state, version = await store.load("t1")
                state = state or ThreadState()
                state.run_count += 1
                try:
                    await store.save("t1", state, version)
                    break
                except VersionConflictError:
                    continue
        await store.aclose()

    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
    """
)


def test_sqlite_processes_sharing_a_file_lose_no_update(tmp_path: Path) -> None:
    path = str(tmp_path / "procs.db")
    rounds = 30
    python_path = os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": python_path}
    procs = [
        subprocess.Popen([sys.executable, "-c", _WORKER, path, str(rounds)], cwd=tmp_path, env=env)
        for _ in range(3)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]

    async def final() -> tuple[ThreadState | None, int]:
        store = SQLiteStore(path)
        try:
            return await store.load("t1")
        finally:
            await store.aclose()

    state, version = asyncio.run(final())
    assert version == 3 * rounds
    assert state is not None and state.run_count == 3 * rounds


async def test_sqlite_schema_carries_a_version_and_refuses_a_newer_one(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = SQLiteStore(str(path))
    await store.load("t1")
    await store.aclose()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()

    newer = SQLiteStore(str(path))
    with pytest.raises(ConfigError, match="newer than this pes-agent") as info:
        await newer.load("t1")
    assert info.value.key_path == "storage.path"
    await newer.aclose()


async def test_sqlite_in_memory_works_and_a_closed_store_says_so() -> None:
    store = SQLiteStore(":memory:")
    await store.save("t1", a_state(), 0)
    assert await store.load("t1") == (a_state(), 1)
    await store.aclose()

    with pytest.raises(PesAgentError, match="is closed"):
        await store.load("t1")


async def test_sqlite_unopenable_path_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    store = SQLiteStore(str(blocker / "state.db"))

    with pytest.raises(ConfigError, match="storage.path") as info:
        await store.load("t1")
    assert str(blocker) in str(info.value)
    await store.aclose()


async def test_sqlite_event_data_json_cannot_express_is_kept_as_text(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "state.db"))
    try:
        event = Event(
            id="e1",
            type=EventType.TOOL_EXECUTION,
            thread_id="t1",
            trace_id="tr",
            step_id="1",
            timestamp=1.0,
            data={"output": Path("/tmp/report.txt"), "tags": ("a", "b")},
        )
        await store.append_events([event])
        (loaded,) = await store.events("t1")
        assert loaded.data == {"output": "/tmp/report.txt", "tags": ["a", "b"]}
    finally:
        await store.aclose()


# -- factory --------------------------------------------------------------------------------


async def test_factory_builds_a_memory_store() -> None:
    store = open_store(StorageConfig(type="memory"))
    assert isinstance(store, MemoryStore)
    await store.aclose()


async def test_factory_anchors_a_relative_sqlite_path_at_base_dir(tmp_path: Path) -> None:
    store = open_store(StorageConfig(type="sqlite", path="data/agent.db"), base_dir=str(tmp_path))
    assert isinstance(store, SQLiteStore)
    try:
        await store.save("t1", ThreadState(), 0)
    finally:
        await store.aclose()
    assert store.path == str(tmp_path / "data" / "agent.db")
    assert (tmp_path / "data" / "agent.db").is_file()


async def test_factory_keeps_absolute_and_in_memory_sqlite_paths(tmp_path: Path) -> None:
    absolute = str(tmp_path / "abs.db")
    stores = [
        open_store(StorageConfig(type="sqlite", path=absolute), base_dir="/elsewhere"),
        open_store(StorageConfig(type="sqlite", path=":memory:"), base_dir=str(tmp_path)),
    ]
    assert [s.path for s in stores if isinstance(s, SQLiteStore)] == [absolute, ":memory:"]
    for s in stores:
        await s.aclose()


async def test_factory_without_base_dir_uses_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = open_store(StorageConfig(type="sqlite", path="here.db"))
    assert isinstance(store, SQLiteStore)
    assert store.path == str(tmp_path / "here.db")
    await store.aclose()


def test_factory_rejects_postgres_with_a_clear_message() -> None:
    with pytest.raises(ConfigError) as info:
        open_store(StorageConfig(type="postgres"))

    assert info.value.key_path == "storage.type"
    assert "`storage.type: postgres` is not available in this version yet" in str(info.value)
    assert "use sqlite or memory" in str(info.value)
