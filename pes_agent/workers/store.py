"""The store of a worker: every read and write of a workflow's run is a DBOS step.

A replayed workflow must see what the first attempt saw (the state it loaded, the version each save
returned) and must not write again what the first attempt wrote (events, history, journal), so each
call goes through ``durable``. Outside a workflow (a web handler reading a thread) calls go straight
to the store.

One window needs care: a save that reached the store but whose step was not recorded before the
worker died. Replayed, it finds the stored version one ahead, written by this very run (the lease on
the thread names the run's trace, or the run had just released it); that save is then redone on top
of the version found, since nobody else can have written under the run's lease.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any

from pes_agent.errors import VersionConflictError
from pes_agent.events import Event, EventType
from pes_agent.state.journal import CallFinish, JournalEntry
from pes_agent.state.models import HistoryMessage, ThreadState, ThreadSummary
from pes_agent.state.store import StateStore
from pes_agent.workers.steps import durable


class DurableStore:
    """A ``StateStore`` whose calls are checkpointed as steps of the workflow that makes them."""

    def __init__(self, inner: StateStore) -> None:
        self.inner = inner

    async def load(self, thread_id: str) -> tuple[ThreadState | None, int]:
        return await durable("store.load", lambda: self.inner.load(thread_id))

    async def save(self, thread_id: str, state: ThreadState, expected_version: int) -> int:
        def write(version: int) -> Awaitable[int]:
            return self.inner.save(thread_id, state, version)

        return await durable("store.save", lambda: _own_write(self.inner, thread_id, state, expected_version, write))

    async def finish_calls_and_save(
        self, thread_id: str, state: ThreadState, expected_version: int, finished: Sequence[CallFinish]
    ) -> int:
        def write(version: int) -> Awaitable[int]:
            return self.inner.finish_calls_and_save(thread_id, state, version, finished)

        return await durable(
            "store.finish_calls_and_save", lambda: _own_write(self.inner, thread_id, state, expected_version, write)
        )

    async def threads(self, owner: str | None, *, limit: int = 50) -> list[ThreadSummary]:
        return await durable("store.threads", lambda: self.inner.threads(owner, limit=limit))

    async def call_started(
        self, thread_id: str, item_id: str, call_id: str, tool_name: str, arguments: Mapping[str, Any]
    ) -> None:
        await durable(
            "store.call_started", lambda: self.inner.call_started(thread_id, item_id, call_id, tool_name, arguments)
        )

    async def call_finished(self, thread_id: str, item_id: str, call_id: str, result: Mapping[str, Any]) -> None:
        await durable("store.call_finished", lambda: self.inner.call_finished(thread_id, item_id, call_id, result))

    async def calls(self, thread_id: str, item_id: str | None = None) -> list[JournalEntry]:
        return await durable("store.calls", lambda: self.inner.calls(thread_id, item_id))

    async def append_events(self, events: Sequence[Event]) -> None:
        await durable("store.append_events", lambda: self.inner.append_events(events))

    async def events(
        self, thread_id: str, types: Collection[EventType] | None = None, since: float | None = None
    ) -> list[Event]:
        return await durable("store.events", lambda: self.inner.events(thread_id, types, since))

    async def append_message(self, thread_id: str, message: HistoryMessage) -> None:
        await durable("store.append_message", lambda: self.inner.append_message(thread_id, message))

    async def messages(self, thread_id: str, limit: int | None = None) -> list[HistoryMessage]:
        return await durable("store.messages", lambda: self.inner.messages(thread_id, limit))

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _own_write(
    store: StateStore, thread_id: str, state: ThreadState, expected: int, write: Callable[[int], Awaitable[int]]
) -> int:
    """``write`` at ``expected``; when the stored version is one ahead and was written by this run
    (an earlier attempt of this same step), at that version instead."""
    try:
        return await write(expected)
    except VersionConflictError:
        stored, version = await store.load(thread_id)
        if stored is None or version != expected + 1 or not _same_run(stored, state):
            raise
        return await write(version)


def _same_run(stored: ThreadState, ours: ThreadState) -> bool:
    if stored.lease is not None and ours.lease is not None:
        return stored.lease.trace_id == ours.lease.trace_id
    return stored.lease is None and ours.lease is None and stored.run_count == ours.run_count
