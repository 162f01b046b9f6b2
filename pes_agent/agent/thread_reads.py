"""Reading a thread outside a run: its state, what it waits for, its events, its conversation, and
the threads a user owns. Every read of one thread checks the caller first (see `ownership`)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from pes_agent.agent.ownership import check_access
from pes_agent.agent.pes import suspension_info
from pes_agent.config import ThreadConfig
from pes_agent.events import Event, EventType
from pes_agent.state.models import HistoryMessage, ThreadState, ThreadSummary
from pes_agent.state.store import StateStore


class ThreadReads:
    """The read half of `ArtInstance`'s thread API; it needs only the store."""

    store: StateStore

    async def get_thread_config(self, thread_id: str, *, user_id: str | None = None) -> ThreadConfig | None:
        state = await self._read_state(thread_id, user_id)
        return state.config if state else None

    async def get_thread_state(self, thread_id: str, *, user_id: str | None = None) -> ThreadState | None:
        """The stored state (None for an unknown thread); `ThreadAccessError` for another user's."""
        return await self._read_state(thread_id, user_id)

    async def check_for_suspended_state(
        self, thread_id: str, *, user_id: str | None = None
    ) -> dict[str, Any] | None:
        """What the thread is waiting for, or None when it is not suspended."""
        state = await self._read_state(thread_id, user_id)
        if state is None or state.suspension is None:
            return None
        info = suspension_info(state.suspension)
        return {"suspension_id": info.pop("id"), **info, "arguments": dict(state.suspension.arguments)}

    async def get_observations(
        self,
        thread_id: str,
        *,
        types: Collection[EventType | str] | None = None,
        since: float | None = None,
        user_id: str | None = None,
    ) -> list[Event]:
        """Stored events of the thread. Live ones (`subscribe`) are not checked: the bus holds no
        state, so a service checks the thread's owner before it forwards them (examples/service does)."""
        await self._read_state(thread_id, user_id)
        wanted = [EventType(t) for t in types] if types is not None else None
        return await self.store.events(thread_id, types=wanted, since=since)

    async def get_history(
        self, thread_id: str, *, user_id: str | None = None, limit: int | None = None
    ) -> list[HistoryMessage]:
        """The thread's conversation with its user (the last ``limit`` turns), oldest first."""
        await self._read_state(thread_id, user_id)
        return await self.store.messages(thread_id, limit=limit)

    async def list_threads(self, *, user_id: str | None = None, limit: int = 50) -> list[ThreadSummary]:
        """The threads ``user_id`` owns (None: those started without a user), latest first."""
        return await self.store.threads(user_id, limit=limit)

    async def _read_state(self, thread_id: str, user_id: str | None) -> ThreadState | None:
        state, _ = await self.store.load(thread_id)
        check_access(thread_id, state, user_id)
        return state
