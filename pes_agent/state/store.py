"""The store protocol: one shape for memory, SQLite and (later) PostgreSQL."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol, runtime_checkable

from pes_agent.events import Event, EventType
from pes_agent.state.models import HistoryMessage, ThreadState


@runtime_checkable
class StateStore(Protocol):
    """Thread state with optimistic versions, the event log and the conversation history.

    ``load`` returns ``(None, 0)`` for an unknown thread. ``save`` raises ``VersionConflictError``
    when ``expected_version`` is not the stored version (no lost write) and returns the new version.
    """

    async def load(self, thread_id: str) -> tuple[ThreadState | None, int]: ...

    async def save(self, thread_id: str, state: ThreadState, expected_version: int) -> int: ...

    async def append_events(self, events: Sequence[Event]) -> None: ...

    async def events(
        self,
        thread_id: str,
        types: Collection[EventType] | None = None,
        since: float | None = None,
    ) -> list[Event]: ...

    async def append_message(self, thread_id: str, message: HistoryMessage) -> None: ...

    async def messages(self, thread_id: str, limit: int | None = None) -> list[HistoryMessage]:
        """The last ``limit`` messages (all when None), oldest first."""
        ...

    async def aclose(self) -> None: ...
