"""A process-local store: the reference for the conformance suite and the overhead benchmark.

State and history cross this boundary as JSON, exactly as they do in SQLite, so a caller that works
against this store sees the same copies (and the same JSON coercions) it would get from a database,
and can never reach into the store's own objects by mutating what it loaded.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence

from pes_agent.errors import VersionConflictError
from pes_agent.events import Event, EventType
from pes_agent.state.models import HistoryMessage, ThreadState


class MemoryStore:
    """Everything in dicts; gone when the process ends.

    A plain lock guards the compare-and-set so the store stays correct even when instances on
    different event loops (threads) share it; uncontended, it costs next to nothing.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[str, tuple[str, int]] = {}
        self._events: dict[str, list[Event]] = {}
        self._event_ids: set[str] = set()
        self._messages: dict[str, list[str]] = {}

    async def load(self, thread_id: str) -> tuple[ThreadState | None, int]:
        stored = self._states.get(thread_id)
        if stored is None:
            return None, 0
        raw, version = stored
        return ThreadState.model_validate_json(raw), version

    async def save(self, thread_id: str, state: ThreadState, expected_version: int) -> int:
        raw = state.model_dump_json()
        with self._lock:
            _, actual = self._states.get(thread_id, ("", 0))
            if actual != expected_version:
                raise VersionConflictError(thread_id, expected_version, actual)
            self._states[thread_id] = (raw, actual + 1)
        return actual + 1

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
