"""The store of a worker: every read and write of a workflow's run is a DBOS step.

A replayed workflow must see what the first attempt saw (the state it loaded, the version each save
returned) and must not write again what the first attempt wrote (events, history, journal), so each
call goes through ``durable``. Outside a workflow (a web handler reading a thread) calls go straight
to the store.

Steps are at least once: a write that reached the store but whose step was not recorded before the
worker died runs again on replay, so every write here is made safe to repeat. A save finds the
stored version one ahead, written by this very run (the lease names the run's trace, or the run had
just released it) and is redone on top of it, since nobody else writes under the run's lease.
Events get ids that a replay draws again, which the stores skip when held (so appending them needs no
step); a history message equal to the thread's last one of the same run is not appended again; the
journal already ignores a second start (no step either) and replaces a finish with the same result.

That also makes them safe to try again when the database cannot be reached: each operation (with its
own safety check) is tried again while it fails with a transient fault (``pes_agent.state.transient``:
the one definition the store shares), for ``workers.storeOutageS``, so a database restart or an outage
delays a run instead of failing it. Past that window the run ends ``failed`` (``workflow``), and
``Producer.recover`` continues it from its journal.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from dbos import DBOS

from pes_agent.errors import VersionConflictError
from pes_agent.events import Event, EventType
from pes_agent.state.journal import CallFinish, JournalEntry
from pes_agent.state.models import HistoryMessage, ThreadState, ThreadSummary
from pes_agent.state.store import StateStore
from pes_agent.state.transient import ride_out
from pes_agent.workers.steps import durable, stable_id

T = TypeVar("T")

STORE_OUTAGE_S = 60.0
"""The default of ``workers.storeOutageS``."""


class DurableStore:
    """A ``StateStore`` whose calls are checkpointed as steps of the workflow that makes them."""

    def __init__(self, inner: StateStore, *, outage_s: float = STORE_OUTAGE_S) -> None:
        self.inner = inner
        self.outage_s = outage_s

    def patient(self, operation: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        """``operation``, tried again while the database is unreachable, up to ``outage_s``."""
        return ride_out(operation, self.outage_s, what=describe_store(self.inner))

    def stored(self, name: str, operation: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        """A store operation as a step, patient with an unreachable database."""
        return durable(name, lambda: self.patient(operation))

    async def load(self, thread_id: str) -> tuple[ThreadState | None, int]:
        return await self.stored("store.load", lambda: self.inner.load(thread_id))

    async def save(self, thread_id: str, state: ThreadState, expected_version: int) -> int:
        def write(version: int) -> Awaitable[int]:
            return self.inner.save(thread_id, state, version)

        return await self.stored(
            "store.save", lambda: _own_write(self.inner, thread_id, state, expected_version, write)
        )

    async def finish_calls_and_save(
        self, thread_id: str, state: ThreadState, expected_version: int, finished: Sequence[CallFinish]
    ) -> int:
        def write(version: int) -> Awaitable[int]:
            return self.inner.finish_calls_and_save(thread_id, state, version, finished)

        return await self.stored(
            "store.finish_calls_and_save",
            lambda: _own_write(self.inner, thread_id, state, expected_version, write),
        )

    async def threads(self, owner: str | None, *, limit: int = 50) -> list[ThreadSummary]:
        return await self.stored("store.threads", lambda: self.inner.threads(owner, limit=limit))

    async def call_started(
        self, thread_id: str, item_id: str, call_id: str, tool_name: str, arguments: Mapping[str, Any]
    ) -> None:
        """Not a step: the journal ignores a call started again."""
        await self.patient(lambda: self.inner.call_started(thread_id, item_id, call_id, tool_name, arguments))

    async def call_finished(
        self, thread_id: str, item_id: str, call_id: str, result: Mapping[str, Any]
    ) -> None:
        await self.stored(
            "store.call_finished", lambda: self.inner.call_finished(thread_id, item_id, call_id, result)
        )

    async def calls(self, thread_id: str, item_id: str | None = None) -> list[JournalEntry]:
        return await self.stored("store.calls", lambda: self.inner.calls(thread_id, item_id))

    async def append_events(self, events: Sequence[Event]) -> None:
        """Not a step (the most frequent write, a step would double its cost): inside a workflow the
        events get ids a replay draws again, so writing them again changes nothing."""
        replayable = _replayable(events)
        await self.patient(lambda: self.inner.append_events(replayable))

    async def events(
        self, thread_id: str, types: Collection[EventType] | None = None, since: float | None = None
    ) -> list[Event]:
        return await self.stored("store.events", lambda: self.inner.events(thread_id, types, since))

    async def append_message(self, thread_id: str, message: HistoryMessage) -> None:
        await self.stored("store.append_message", lambda: self._append_once(thread_id, message))

    async def messages(self, thread_id: str, limit: int | None = None) -> list[HistoryMessage]:
        return await self.stored("store.messages", lambda: self.inner.messages(thread_id, limit))

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def _append_once(self, thread_id: str, message: HistoryMessage) -> None:
        """History has no ids: a message equal to the last one, of the same run (trace), is this
        step's own earlier attempt (a run never says the same thing twice in a row)."""
        if DBOS.workflow_id is not None:
            last = await self.inner.messages(thread_id, limit=1)
            if last and (last[0].role, last[0].content, last[0].trace_id) == (
                message.role,
                message.content,
                message.trace_id,
            ):
                return
        await self.inner.append_message(thread_id, message)


def describe_store(store: StateStore) -> str:
    """What a warning may name: ``host:port/database`` for PostgreSQL (never the password)."""
    where = getattr(store, "where", None)
    return f"the store at {where!r}" if where else "the store"


def _replayable(events: Sequence[Event]) -> Sequence[Event]:
    """Inside a workflow, events with ids its replay draws again (``stable_id``), which every store
    skips when it holds them."""
    if DBOS.workflow_id is None:
        return events
    return [replace(event, id=stable_id("event") or event.id) for event in events]


async def _own_write(
    store: StateStore,
    thread_id: str,
    state: ThreadState,
    expected: int,
    write: Callable[[int], Awaitable[int]],
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
