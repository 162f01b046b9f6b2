"""A process-local store: the reference for the conformance suite and the overhead benchmark.

State and history cross this boundary as JSON, exactly as they do in SQLite, so a caller that works
against this store sees the same copies (and the same JSON coercions) it would get from a database,
and can never reach into the store's own objects by mutating what it loaded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pes_agent.errors import VersionConflictError
from pes_agent.events import Event, EventType
from pes_agent.state.journal import CallFinish, JournalEntry, dumps, make_entry, not_started_error
from pes_agent.state.models import HistoryMessage, ThreadState, ThreadSummary


@dataclass(frozen=True)
class _StoredCall:
    """A journal row as JSON text, like a database row, so reads hand out fresh copies."""

    tool_name: str
    arguments: str
    started_at: float
    result: str | None = None
    finished_at: float | None = None


@dataclass(frozen=True)
class _StoredState:
    """A thread row: the state as JSON, plus what `threads` filters and sorts on (a database's columns)."""

    raw: str
    version: int
    owner: str | None
    updated_at: float


class MemoryStore:
    """Everything in dicts; gone when the process ends.

    A plain lock guards the compare-and-set so the store stays correct even when instances on
    different event loops (threads) share it; uncontended, it costs next to nothing.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[str, _StoredState] = {}
        self._events: dict[str, list[Event]] = {}
        self._event_ids: set[str] = set()
        self._messages: dict[str, list[str]] = {}
        self._calls: dict[str, dict[tuple[str, str], _StoredCall]] = {}

    async def load(self, thread_id: str) -> tuple[ThreadState | None, int]:
        stored = self._states.get(thread_id)
        if stored is None:
            return None, 0
        return ThreadState.model_validate_json(stored.raw), stored.version

    async def save(self, thread_id: str, state: ThreadState, expected_version: int) -> int:
        return self._finish(thread_id, state, expected_version, ())

    async def threads(self, owner: str | None, *, limit: int = 50) -> list[ThreadSummary]:
        with self._lock:
            rows = [(tid, row) for tid, row in self._states.items() if row.owner == owner]
        rows.sort(key=lambda pair: pair[1].updated_at, reverse=True)
        return [
            ThreadSummary.of(tid, row.updated_at, ThreadState.model_validate_json(row.raw))
            for tid, row in rows[: check_limit(limit)]
        ]

    # -- journal ----------------------------------------------------------------------------

    async def call_started(
        self,
        thread_id: str,
        item_id: str,
        call_id: str,
        tool_name: str,
        arguments: Mapping[str, Any],
    ) -> None:
        """A call already journaled is left exactly as it is (see ``StateStore``)."""
        stored = _StoredCall(tool_name=tool_name, arguments=dumps(arguments), started_at=time.time())
        with self._lock:
            self._calls.setdefault(thread_id, {}).setdefault((item_id, call_id), stored)

    async def call_finished(
        self, thread_id: str, item_id: str, call_id: str, result: Mapping[str, Any]
    ) -> None:
        self._finish(thread_id, None, 0, [CallFinish(item_id, call_id, result)])

    async def finish_calls_and_save(
        self,
        thread_id: str,
        state: ThreadState,
        expected_version: int,
        finished: Sequence[CallFinish],
    ) -> int:
        return self._finish(thread_id, state, expected_version, finished)

    def _finish(
        self, thread_id: str, state: ThreadState | None, expected_version: int, finished: Sequence[CallFinish]
    ) -> int:
        """Checks everything before writing anything, so a refused step leaves no trace.

        ``state=None`` records the calls alone (``call_finished``); the version is then ignored.
        """
        results = [(f.item_id, f.call_id, dumps(f.result)) for f in finished]
        raw = state.model_dump_json() if state is not None else None
        owner = state.owner if state is not None else None
        now = time.time()
        with self._lock:
            calls = self._calls.get(thread_id, {})
            for item_id, call_id, _ in results:
                if (item_id, call_id) not in calls:
                    raise not_started_error(thread_id, item_id, call_id)
            if raw is not None:
                self._check_version(thread_id, expected_version)
                self._states[thread_id] = _StoredState(raw, expected_version + 1, owner, now)
            for item_id, call_id, result in results:
                row = calls[(item_id, call_id)]
                calls[(item_id, call_id)] = _StoredCall(
                    row.tool_name, row.arguments, row.started_at, result=result, finished_at=now
                )
        return expected_version + 1

    async def calls(self, thread_id: str, item_id: str | None = None) -> list[JournalEntry]:
        with self._lock:
            rows = list(self._calls.get(thread_id, {}).items())
        return [
            make_entry(
                thread_id,
                item,
                call,
                row.tool_name,
                row.arguments,
                row.result,
                row.started_at,
                row.finished_at,
            )
            for (item, call), row in rows
            if item_id is None or item == item_id
        ]

    def _check_version(self, thread_id: str, expected_version: int) -> None:
        """Under ``self._lock``: the compare half of the compare-and-set."""
        stored = self._states.get(thread_id)
        actual = stored.version if stored is not None else 0
        if actual != expected_version:
            raise VersionConflictError(thread_id, expected_version, actual)

    # -- events and history -----------------------------------------------------------------

    async def append_events(self, events: Sequence[Event]) -> None:
        """Events are frozen, so the log keeps them as given; an id already held is skipped."""
        with self._lock:
            for event in events:
                if event.id in self._event_ids:
                    continue
                self._event_ids.add(event.id)
                self._events.setdefault(event.thread_id, []).append(event)

    async def events(
        self,
        thread_id: str,
        types: Collection[EventType] | None = None,
        since: float | None = None,
    ) -> list[Event]:
        log = self._events.get(thread_id, ())
        wanted = frozenset(EventType(t) for t in types) if types is not None else None
        return [
            ev
            for ev in log
            if (wanted is None or ev.type in wanted) and (since is None or ev.timestamp > since)
        ]

    async def append_message(self, thread_id: str, message: HistoryMessage) -> None:
        raw = message.model_dump_json()
        with self._lock:
            self._messages.setdefault(thread_id, []).append(raw)

    async def messages(self, thread_id: str, limit: int | None = None) -> list[HistoryMessage]:
        """The last ``limit`` messages (all when None), oldest first."""
        history = self._messages.get(thread_id, [])
        window = history if limit is None else history[max(0, len(history) - check_limit(limit)) :]
        return [HistoryMessage.model_validate_json(raw) for raw in window]

    async def aclose(self) -> None:
        """Nothing to release; present so every store closes the same way."""


def check_limit(limit: int) -> int:
    """A negative limit is a caller bug; slicing would silently turn it into "all but the first"."""
    if limit < 0:
        raise ValueError(f"`messages(limit=...)` must be None or >= 0, got {limit!r}")
    return limit
