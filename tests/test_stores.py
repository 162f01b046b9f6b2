"""One conformance suite for every StateStore, plus what only SQLite, PostgreSQL and the factory promise.

The PostgreSQL cases run against the server in ``PES_AGENT_PG_DSN`` (``.ci/run`` starts one) and skip
without it; see ``pg_server.py``.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from pg_server import admin, pg_database_dsn, pg_dsn, pg_schema, unique_name

from pes_agent.config import StorageConfig
from pes_agent.errors import ConfigError, PesAgentError, StoreUnavailableError, VersionConflictError
from pes_agent.events import Event, EventType
from pes_agent.state import postgres as postgres_module
from pes_agent.state import postgres_schema, sqlite_schema
from pes_agent.state import sqlite as sqlite_module
from pes_agent.state.factory import open_store
from pes_agent.state.journal import CallFinish
from pes_agent.state.memory import MemoryStore
from pes_agent.state.models import (
    HistoryMessage,
    ItemStatus,
    Suspension,
    ThreadState,
    TodoItem,
    ToolCallRecord,
)
from pes_agent.state.postgres import PostgresStore
from pes_agent.state.sqlite import SCHEMA_VERSION, SQLiteStore
from pes_agent.state.store import StateStore

__all__ = ["pg_database_dsn", "pg_dsn", "pg_schema"]  # fixtures, imported for pytest to find

PACKAGE_ROOT = Path(sqlite_module.__file__).resolve().parents[2]
"""Where the `pes_agent` under test lives, so a child process imports the same code."""


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StateStore]:
    made: StateStore
    if request.param == "memory":
        made = MemoryStore()
    elif request.param == "sqlite":
        made = SQLiteStore(str(tmp_path / "state.db"))
    else:
        dsn = request.getfixturevalue("pg_dsn")  # skips without a server
        made = PostgresStore(dsn, schema=unique_name())
    assert isinstance(made, StateStore)
    yield made
    await made.aclose()
    if isinstance(made, PostgresStore):
        await admin(dsn, f'DROP SCHEMA IF EXISTS "{made.schema}" CASCADE')


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


async def test_threads_lists_an_owners_threads_most_recently_saved_first(store: StateStore) -> None:
    await store.save("a1", ThreadState(owner="alice", query="first"), 0)
    await store.save("b1", ThreadState(owner="bob"), 0)
    await store.save("a2", ThreadState(owner="alice", query="second"), 0)
    await store.save("n1", ThreadState(query="nobody's"), 0)
    assert [t.thread_id for t in await store.threads("alice")] == ["a2", "a1"]

    await store.call_started("a1", "2", "c1", "send_email", {})
    saved = a_state().model_copy(update={"owner": "alice"})  # a step's save moves a1 to the top
    await store.finish_calls_and_save("a1", saved, 1, [CallFinish("2", "c1", a_result("c1", 1))])
    listed = await store.threads("alice")
    assert [t.thread_id for t in listed] == ["a1", "a2"]
    assert (listed[0].title, listed[0].query, listed[0].waiting_for) == ("Weather trip", None, "approval")
    assert listed[1].query == "second" and listed[1].waiting_for is None and listed[1].running is False
    assert listed[0].updated_at >= listed[1].updated_at > 0

    assert [t.thread_id for t in await store.threads("alice", limit=1)] == ["a1"]
    assert [t.thread_id for t in await store.threads("bob")] == ["b1"]
    assert [t.thread_id for t in await store.threads(None)] == ["n1"]
    assert await store.threads("carol") == []


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


# -- tool-call journal ----------------------------------------------------------------------


def a_result(call_id: str, output: object, status: str = "success") -> dict[str, object]:
    """Shaped like ``ToolResult.to_dict()``."""
    return {"call_id": call_id, "tool_name": "send_email", "status": status, "output": output, "error": None}


async def test_a_started_call_is_journaled_with_its_arguments_and_no_result(store: StateStore) -> None:
    await store.call_started("t1", "1", "c1", "send_email", {"to": "ana@example.org", "cc": ["bo"]})

    (entry,) = await store.calls("t1")

    assert (entry.thread_id, entry.item_id, entry.call_id, entry.tool_name) == ("t1", "1", "c1", "send_email")
    assert entry.arguments == {"to": "ana@example.org", "cc": ["bo"]}
    assert (entry.state, entry.finished, entry.result, entry.finished_at) == ("started", False, None, None)
    assert isinstance(entry.started_at, float)


async def test_a_second_start_never_erases_a_finished_result(store: StateStore) -> None:
    await store.call_started("t1", "1", "c1", "send_email", {"to": "ana"})
    await store.call_finished("t1", "1", "c1", a_result("c1", {"sent": True}))
    # A resumed run re-announcing the call (even with other arguments) must not reopen it.
    await store.call_started("t1", "1", "c1", "send_email", {"to": "someone else"})

    (entry,) = await store.calls("t1")

    assert entry.state == "finished" and entry.finished
    assert entry.result == a_result("c1", {"sent": True})
    assert entry.arguments == {"to": "ana"}
    assert entry.finished_at is not None


async def test_starting_a_started_call_again_keeps_it_started_with_its_first_arguments(
    store: StateStore,
) -> None:
    await store.call_started("t1", "1", "c1", "send_email", {"to": "ana"})
    await store.call_started("t1", "1", "c1", "other_tool", {"to": "bo"})

    (entry,) = await store.calls("t1")
    assert (entry.state, entry.tool_name, entry.arguments) == ("started", "send_email", {"to": "ana"})


async def test_finishing_a_call_again_replaces_its_result(store: StateStore) -> None:
    await store.call_started("t1", "1", "c1", "send_email", {})
    await store.call_finished("t1", "1", "c1", a_result("c1", {"message": "approve?"}, status="suspended"))
    await store.call_finished("t1", "1", "c1", a_result("c1", {"sent": True}))

    (entry,) = await store.calls("t1")
    assert entry.result == a_result("c1", {"sent": True})


async def test_finishing_a_call_never_started_is_refused_and_records_nothing(store: StateStore) -> None:
    with pytest.raises(PesAgentError, match="never recorded as started") as info:
        await store.call_finished("t1", "1", "ghost", a_result("ghost", None))
    assert "'ghost'" in str(info.value) and "`call_started(...)`" in str(info.value)
    assert await store.calls("t1") == []

    await store.call_started("t1", "1", "c1", "send_email", {})
    with pytest.raises(PesAgentError, match="never recorded as started"):
        await store.call_finished("t1", "2", "c1", a_result("c1", None))  # same call id, other item
    assert [(e.item_id, e.state) for e in await store.calls("t1")] == [("1", "started")]


async def test_calls_come_back_in_start_order_for_their_thread_and_item(store: StateStore) -> None:
    for thread, item, call in [("t1", "1", "c2"), ("t1", "2", "c1"), ("other", "1", "c1"), ("t1", "1", "c1")]:
        await store.call_started(thread, item, call, "send_email", {"n": call})
    await store.call_finished("t1", "1", "c2", a_result("c2", "done"))  # finishing does not reorder

    async def keys(thread: str, item: str | None = None) -> list[tuple[str, str]]:
        return [(e.item_id, e.call_id) for e in await store.calls(thread, item)]

    assert await keys("t1") == [("1", "c2"), ("2", "c1"), ("1", "c1")]
    assert await keys("t1", "1") == [("1", "c2"), ("1", "c1")]
    assert await keys("t1", "2") == [("2", "c1")]
    assert await keys("other") == [("1", "c1")]
    assert await keys("t1", "9") == []
    assert await keys("nobody") == []


async def test_mutating_a_returned_entry_does_not_change_the_journal(store: StateStore) -> None:
    await store.call_started("t1", "1", "c1", "send_email", {"to": ["ana"]})
    await store.call_finished("t1", "1", "c1", a_result("c1", {"ids": [1]}))
    (entry,) = await store.calls("t1")
    entry.arguments["to"].append("eve")
    assert entry.result is not None
    entry.result["output"]["ids"].append(2)

    (again,) = await store.calls("t1")
    assert (again.arguments, again.result) == ({"to": ["ana"]}, a_result("c1", {"ids": [1]}))


async def test_journal_values_json_cannot_express_come_back_as_json(store: StateStore) -> None:
    await store.call_started("t1", "1", "c1", "write_file", {"tags": ("a", "b")})
    await store.call_finished("t1", "1", "c1", a_result("c1", {"path": Path("/tmp/out.txt")}))

    (entry,) = await store.calls("t1")
    assert entry.arguments == {"tags": ["a", "b"]}
    assert entry.result == a_result("c1", {"path": "/tmp/out.txt"})


# -- one step: finished calls and state in one transaction ----------------------------------


async def test_a_step_records_its_finished_calls_and_saves_the_state_together(store: StateStore) -> None:
    await store.save("t1", a_state(), 0)
    await store.call_started("t1", "2", "c1", "send_email", {"to": "ana"})
    await store.call_started("t1", "2", "c2", "send_email", {"to": "bo"})
    after = a_state().model_copy(update={"title": "after the step"})

    version = await store.finish_calls_and_save(
        "t1",
        after,
        1,
        [
            CallFinish("2", "c1", a_result("c1", "sent to ana")),
            CallFinish("2", "c2", a_result("c2", "sent to bo")),
        ],
    )

    assert version == 2
    assert await store.load("t1") == (after, 2)
    assert [(e.call_id, e.state, e.result) for e in await store.calls("t1")] == [
        ("c1", "finished", a_result("c1", "sent to ana")),
        ("c2", "finished", a_result("c2", "sent to bo")),
    ]


async def test_a_thread_first_step_saves_at_version_zero(store: StateStore) -> None:
    await store.call_started("new", "1", "c1", "send_email", {})

    assert await store.finish_calls_and_save("new", ThreadState(title="first"), 0, []) == 1
    assert (
        await store.finish_calls_and_save("new", ThreadState(), 1, [CallFinish("1", "c1", a_result("c1", 1))])
        == 2
    )
    assert [e.state for e in await store.calls("new")] == ["finished"]


async def test_a_conflicting_step_leaves_the_call_started_and_the_state_unchanged(store: StateStore) -> None:
    await store.save("t1", a_state(), 0)
    await store.call_started("t1", "2", "c1", "send_email", {})
    winner = ThreadState(title="the other run")
    await store.save("t1", winner, 1)

    with pytest.raises(VersionConflictError) as info:
        await store.finish_calls_and_save(
            "t1", ThreadState(title="lost"), 1, [CallFinish("2", "c1", a_result("c1", "sent"))]
        )

    assert (info.value.expected, info.value.actual) == (1, 2)
    assert await store.load("t1") == (winner, 2)
    (entry,) = await store.calls("t1")
    assert (entry.state, entry.result, entry.finished_at) == ("started", None, None)


async def test_a_step_naming_a_call_never_started_saves_nothing(store: StateStore) -> None:
    await store.save("t1", a_state(), 0)
    await store.call_started("t1", "2", "c1", "send_email", {})

    with pytest.raises(PesAgentError, match="'ghost' was never recorded as started"):
        await store.finish_calls_and_save(
            "t1",
            ThreadState(title="half a step"),
            1,
            [CallFinish("2", "c1", a_result("c1", "sent")), CallFinish("2", "ghost", a_result("ghost", 0))],
        )

    assert await store.load("t1") == (a_state(), 1)
    assert [(e.call_id, e.state) for e in await store.calls("t1")] == [("c1", "started")]


async def test_concurrent_steps_at_one_version_record_only_the_winner_result(store: StateStore) -> None:
    await store.save("t1", ThreadState(), 0)
    await store.call_started("t1", "1", "c1", "send_email", {})
    steps = [
        store.finish_calls_and_save(
            "t1", ThreadState(title=f"run {i}"), 1, [CallFinish("1", "c1", a_result("c1", i))]
        )
        for i in range(3)
    ]

    outcomes = await asyncio.gather(*steps, return_exceptions=True)

    assert [o for o in outcomes if not isinstance(o, VersionConflictError)] == [2]
    winner = outcomes.index(2)
    assert await store.load("t1") == (ThreadState(title=f"run {winner}"), 2)
    (entry,) = await store.calls("t1")
    assert entry.result == a_result("c1", winner)


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


def old_sqlite_file(path: Path, schema_version: int, thread_id: str, version: int) -> None:
    """A file as an older pes-agent left it: its tables at ``schema_version``, one thread."""
    with sqlite3.connect(path) as conn:
        for step in range(1, schema_version + 1):
            for statement in sqlite_schema.MIGRATIONS[step]:
                conn.execute(statement)
        conn.execute(
            "INSERT INTO threads (thread_id, version, state, updated_at) VALUES (?, ?, ?, 0)",
            (thread_id, version, a_state().model_dump_json()),
        )
        conn.execute(f"PRAGMA user_version = {schema_version}")
    conn.close()


async def test_sqlite_upgrades_a_version_1_file_keeping_its_threads(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old_sqlite_file(path, 1, "t1", 7)  # a file written before the journal existed

    store = SQLiteStore(str(path))
    try:
        assert await store.load("t1") == (a_state(), 7)
        await store.call_started("t1", "2", "c1", "send_email", {})
        assert (
            await store.finish_calls_and_save("t1", a_state(), 7, [CallFinish("2", "c1", a_result("c1", 1))])
            == 8
        )
    finally:
        await store.aclose()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    conn.close()


async def test_sqlite_upgrades_a_version_2_file_its_threads_open_to_calls_without_a_user(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v2.db"
    old_sqlite_file(path, 2, "old", 4)  # a file written before threads had owners

    store = SQLiteStore(str(path))
    try:
        assert await store.load("old") == (a_state(), 4)
        assert [t.thread_id for t in await store.threads(None)] == ["old"]
        await store.save("new", ThreadState(owner="alice"), 0)
        assert [t.thread_id for t in await store.threads("alice")] == ["new"]
    finally:
        await store.aclose()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("SELECT owner FROM threads WHERE thread_id = 'new'").fetchone() == ("alice",)
    conn.close()


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


# -- PostgreSQL only ------------------------------------------------------------------------


async def test_postgres_keeps_everything_across_store_instances(pg_dsn: str, pg_schema: str) -> None:
    first = PostgresStore(pg_dsn, schema=pg_schema)
    await first.save("t1", a_state(), 0)
    await first.call_started("t1", "2", "c1", "send_email", {"to": "ana"})
    await first.append_events([an_event("e1", EventType.PLAN), an_event("e2", EventType.ERROR)])
    await first.append_message("t1", a_message(1))
    await first.aclose()
    await first.aclose()  # closing twice is harmless

    second = PostgresStore(pg_dsn, schema=pg_schema)
    try:
        assert await second.load("t1") == (a_state(), 1)
        assert [(e.call_id, e.state) for e in await second.calls("t1")] == [("c1", "started")]
        assert [e.id for e in await second.events("t1")] == ["e1", "e2"]
        assert await second.messages("t1") == [a_message(1)]
    finally:
        await second.aclose()
    assert await admin(pg_dsn, f'SELECT MAX(version) FROM "{pg_schema}".pes_agent_schema') == (
        postgres_module.SCHEMA_VERSION
    )


async def test_postgres_refuses_a_schema_newer_than_it_understands(pg_dsn: str, pg_schema: str) -> None:
    store = PostgresStore(pg_dsn, schema=pg_schema)
    await store.load("t1")
    await store.aclose()
    newer = postgres_module.SCHEMA_VERSION + 1
    await admin(pg_dsn, f'INSERT INTO "{pg_schema}".pes_agent_schema (version) VALUES ({newer})')

    again = PostgresStore(pg_dsn, schema=pg_schema)
    with pytest.raises(ConfigError, match="newer than this pes-agent") as info:
        await again.load("t1")
    assert info.value.key_path == "storage.dsn"
    await again.aclose()


async def test_postgres_workers_starting_together_create_the_tables_once(pg_dsn: str, pg_schema: str) -> None:
    stores = [PostgresStore(pg_dsn, schema=pg_schema) for _ in range(4)]
    try:
        assert await asyncio.gather(*(s.load("t1") for s in stores)) == [(None, 0)] * 4
    finally:
        for s in stores:
            await s.aclose()
    assert await admin(pg_dsn, f'SELECT COUNT(*) FROM "{pg_schema}".pes_agent_schema') == (
        postgres_module.SCHEMA_VERSION
    )


async def test_postgres_upgrades_a_version_1_schema_keeping_its_threads(pg_dsn: str, pg_schema: str) -> None:
    import asyncpg

    await admin(pg_dsn, f'CREATE SCHEMA "{pg_schema}"')
    conn = await asyncpg.connect(pg_dsn, server_settings={"search_path": pg_schema})
    try:  # a database written before threads had owners
        for statement in postgres_schema.MIGRATIONS[1]:
            await conn.execute(statement)
        await conn.execute("CREATE TABLE pes_agent_schema (version INTEGER PRIMARY KEY)")
        await conn.execute("INSERT INTO pes_agent_schema (version) VALUES (1)")
        await conn.execute(
            "INSERT INTO threads (thread_id, version, state, updated_at) VALUES ('old', 4, $1, 1)",
            a_state().model_dump_json(),
        )
    finally:
        await conn.close()

    store = PostgresStore(pg_dsn, schema=pg_schema)
    try:
        assert await store.load("old") == (a_state(), 4)
        assert [t.thread_id for t in await store.threads(None)] == ["old"]
        await store.save("new", ThreadState(owner="alice"), 0)
        assert [t.thread_id for t in await store.threads("alice")] == ["new"]
    finally:
        await store.aclose()
    assert await admin(pg_dsn, f'SELECT MAX(version) FROM "{pg_schema}".pes_agent_schema') == 2
    assert (
        await admin(pg_dsn, f"SELECT owner FROM \"{pg_schema}\".threads WHERE thread_id = 'new'") == "alice"
    )


async def test_postgres_user_who_cannot_create_tables_gets_the_server_reason(
    pg_database_dsn: str,
) -> None:
    role = unique_name()
    await admin(pg_database_dsn, f'CREATE ROLE "{role}" LOGIN')
    parts = urlsplit(pg_database_dsn)
    as_role = urlunsplit(parts._replace(netloc=f"{role}:hunter2-secret@{parts.hostname}:{parts.port}"))
    store = PostgresStore(as_role)
    try:
        with pytest.raises(PesAgentError, match="permission denied") as info:
            await store.load("t1")
        assert f"{parts.hostname}:{parts.port}/" in str(info.value) and "hunter2" not in str(info.value)
        with pytest.raises(PesAgentError, match="permission denied"):  # not stuck half-open: it retries
            await store.load("t1")
    finally:
        await store.aclose()
        await admin(pg_database_dsn, f'DROP ROLE "{role}"')


async def test_postgres_closed_store_says_so_without_the_password(pg_dsn: str, pg_schema: str) -> None:
    store = PostgresStore(pg_dsn, schema=pg_schema)
    await store.save("t1", ThreadState(), 0)
    await store.aclose()

    with pytest.raises(PesAgentError, match="is closed"):
        await store.load("t1")


async def test_postgres_wrong_database_is_a_config_error_naming_host_port_and_database(pg_dsn: str) -> None:
    parts = urlsplit(pg_dsn)
    user = parts.username or "postgres"
    dsn = urlunsplit(
        parts._replace(netloc=f"{user}:hunter2-secret@{parts.hostname}:{parts.port}", path="/no_such_db")
    )
    store = PostgresStore(dsn)

    with pytest.raises(ConfigError) as info:
        await store.load("t1")

    message = str(info.value)
    assert info.value.key_path == "storage.dsn"
    assert f"{parts.hostname}:{parts.port}/no_such_db" in message
    assert "hunter2" not in message and "hunter2" not in repr(info.value.value)
    await store.aclose()


class _Proxy:
    """A TCP relay on loopback in front of the PostgreSQL server that can cut every connection and
    refuse new ones, like a database restarting."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.up = True
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.up:
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self.writers += [writer, up_writer]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def cut(self) -> None:
        self.up = False
        for writer in self.writers:
            writer.close()
        self.writers.clear()

    async def aclose(self) -> None:
        self.cut()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


async def test_postgres_connection_lost_mid_use_is_store_unavailable_and_works_once_back(
    pg_database_dsn: str,
) -> None:
    """A database that goes away while in use is `StoreUnavailableError` (worth trying again: the
    workers do), not a refusal; once it is back the same store works again."""
    parts = urlsplit(pg_database_dsn)
    proxy = _Proxy(parts.hostname or "127.0.0.1", parts.port or 5432)
    port = await proxy.start()
    store = PostgresStore(urlunsplit(parts._replace(netloc=f"{parts.username}@127.0.0.1:{port}")))
    try:
        await store.save("t1", ThreadState(title="before the drop"), 0)
        proxy.cut()
        with pytest.raises(StoreUnavailableError, match="Check that the server is up"):
            await store.load("t1")
        proxy.up = True
        state, version = await store.load("t1")
    finally:
        await store.aclose()
        await proxy.aclose()
    assert state is not None and state.title == "before the drop" and version == 1


async def test_postgres_unreachable_server_error_hides_the_password() -> None:
    pytest.importorskip(
        "asyncpg", reason="the PostgreSQL driver is not installed: pip install 'pes-agent[postgres]'"
    )

    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    store = PostgresStore(f"postgresql://app:hunter2-secret@127.0.0.1:{port}/orders")
    try:
        assert repr(store) == f"PostgresStore('127.0.0.1:{port}/orders')"
        with pytest.raises(StoreUnavailableError) as info:  # a server that hangs up: worth trying again
            await store.load("t1")
    finally:
        await store.aclose()
        server.close()
        await server.wait_closed()

    assert f"127.0.0.1:{port}/orders" in str(info.value)
    chain = [info.value, info.value.__cause__, info.value.__context__]
    assert not any("hunter2" in f"{e!s} {e!r}" for e in chain if e is not None)


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://app:p%40ss@db.internal:6432/orders", "db.internal:6432/orders"),
        ("postgres://app@db.internal/orders", "db.internal:5432/orders"),
        ("postgresql:///orders?host=/run/postgresql&password=pw", "/run/postgresql:5432/orders"),
    ],
)
def test_postgres_dsn_is_described_without_user_or_password(dsn: str, shown: str) -> None:
    assert postgres_module.describe_dsn(dsn) == shown


def test_postgres_dsn_that_is_not_a_url_is_refused_without_echoing_it() -> None:
    with pytest.raises(ConfigError, match="must be a URL") as info:
        postgres_module.describe_dsn("host=db user=app password=hunter2")
    assert "hunter2" not in str(info.value) and info.value.key_path == "storage.dsn"


def test_postgres_without_the_driver_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "asyncpg", None)  # makes `import asyncpg` fail

    with pytest.raises(ConfigError, match=r"pip install 'pes-agent\[postgres\]'") as info:
        open_store(StorageConfig(type="postgres", dsn="postgresql://app:pw@db/orders"))
    assert info.value.key_path == "storage.type"


def test_importing_pes_agent_does_not_import_the_postgres_driver(tmp_path: Path) -> None:
    code = (
        "import sys, pes_agent, pes_agent.state.factory, pes_agent.state.postgres; "
        "assert 'asyncpg' not in sys.modules, 'asyncpg imported'"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


# -- several workers on one database (SQLite file or PostgreSQL schema) ----------------------


@dataclass(frozen=True)
class Shared:
    """One database that several stores (in this process or in children) open independently."""

    kind: str
    target: str
    """The SQLite path, or the PostgreSQL schema (the server comes from ``PES_AGENT_PG_DSN``)."""

    def open(self) -> StateStore:
        if self.kind == "sqlite":
            return SQLiteStore(self.target)
        return PostgresStore(os.environ["PES_AGENT_PG_DSN"], schema=self.target)


@pytest.fixture(params=["sqlite", "postgres"])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Shared]:
    if request.param == "sqlite":
        yield Shared("sqlite", str(tmp_path / "shared.db"))
        return
    dsn = request.getfixturevalue("pg_dsn")
    schema = unique_name()
    yield Shared("postgres", schema)
    asyncio.run(admin(dsn, f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))


async def test_stores_sharing_a_database_cannot_both_win_a_version(shared: Shared) -> None:
    stores = [shared.open() for _ in range(2)]
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
    sys.path.insert(0, sys.argv[1])
    from test_stores import Shared
    from pes_agent.errors import VersionConflictError
    from pes_agent.state.models import ThreadState

    async def main(shared, rounds):
        store = shared.open()
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

    asyncio.run(main(Shared(sys.argv[2], sys.argv[3]), int(sys.argv[4])))
    """
)


def test_processes_sharing_a_database_lose_no_update(shared: Shared, tmp_path: Path) -> None:
    rounds = 30
    python_path = os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": python_path}
    argv = [
        sys.executable,
        "-c",
        _WORKER,
        str(Path(__file__).parent),
        shared.kind,
        shared.target,
        str(rounds),
    ]
    procs = [subprocess.Popen(argv, cwd=tmp_path, env=env) for _ in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]

    async def final() -> tuple[ThreadState | None, int]:
        store = shared.open()
        try:
            return await store.load("t1")
        finally:
            await store.aclose()

    state, version = asyncio.run(final())
    assert version == 3 * rounds
    assert state is not None and state.run_count == 3 * rounds


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


def test_factory_needs_a_dsn_for_postgres() -> None:
    with pytest.raises(ConfigError) as info:
        open_store(StorageConfig(type="postgres"))

    assert info.value.key_path == "storage.dsn"
    assert "`storage.type: postgres` needs a DSN" in str(info.value)


async def test_factory_builds_a_postgres_store_that_hides_the_password() -> None:
    pytest.importorskip(
        "asyncpg", reason="the PostgreSQL driver is not installed: pip install 'pes-agent[postgres]'"
    )
    config = StorageConfig(type="postgres", dsn="postgresql://app:hunter2@db.internal:6432/orders")

    store = open_store(config)

    assert isinstance(store, PostgresStore)
    assert repr(store) == "PostgresStore('db.internal:6432/orders')"
    assert "hunter2" not in repr(config)
    await store.aclose()  # never connected: nothing to close, and no network touched


async def test_factory_postgres_store_works_end_to_end(pg_database_dsn: str) -> None:
    store = open_store(StorageConfig(type="postgres", dsn=pg_database_dsn))
    try:
        assert await store.save("t1", a_state(), 0) == 1
        assert await store.load("t1") == (a_state(), 1)
    finally:
        await store.aclose()


# -- benchmark --------------------------------------------------------------------------------


def test_store_latency_benchmark_reports_every_store(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.store_latency import main

    monkeypatch.delenv("PES_AGENT_PG_DSN", raising=False)
    assert main(["--n", "5", "--warmup", "1"]) == 0

    out = capsys.readouterr().out
    rows = {
        line.split()[0]: line
        for line in out.splitlines()
        if line.split()[:1] in (["memory"], ["sqlite"], ["postgres"])
    }
    assert set(rows) == {"memory", "sqlite", "postgres"}
    assert "skipped: set PES_AGENT_PG_DSN" in rows["postgres"]
    (summary,) = [line for line in out.splitlines() if line.startswith("SUMMARY ")]
    assert "(N=5)" in summary and "sqlite save median" in summary and "postgres skipped" in summary
