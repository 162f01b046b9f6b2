"""The in-process guard of a thread: one run at a time per thread within this `ArtInstance`.

The lease (`pes_agent.agent.lease`) guards across processes; this lock only keeps two coroutines of
one instance from racing to the store for the same thread. A lock exists only while someone holds it
or waits for it, so a long-lived service that sees millions of threads keeps none for finished ones.
"""

from __future__ import annotations

import asyncio
from types import TracebackType

from pes_agent.errors import ThreadBusyError


class _Entry:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0
        """Holders and waiters; the entry goes when this falls back to zero."""


class ThreadLocks:
    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    def hold(self, thread_id: str, *, refuse_when_busy: bool) -> _Held:
        """``async with locks.hold(tid, ...)``: waits for the thread, or raises `ThreadBusyError` at
        once when it is busy and ``refuse_when_busy`` is set."""
        entry = self._entries.get(thread_id)
        if entry is not None and refuse_when_busy and entry.lock.locked():
            raise ThreadBusyError(thread_id)
        if entry is None:
            entry = self._entries[thread_id] = _Entry()
        return _Held(self, thread_id, entry)

    def __len__(self) -> int:
        """Threads with a holder or a waiter right now."""
        return len(self._entries)

    def _leave(self, thread_id: str, entry: _Entry) -> None:
        entry.users -= 1
        if entry.users == 0 and self._entries.get(thread_id) is entry:
            del self._entries[thread_id]


class _Held:
    __slots__ = ("_entry", "_owner", "_thread_id")

    def __init__(self, owner: ThreadLocks, thread_id: str, entry: _Entry) -> None:
        self._owner, self._thread_id, self._entry = owner, thread_id, entry
        entry.users += 1

    async def __aenter__(self) -> None:
        try:
            await self._entry.lock.acquire()
        except BaseException:  # cancelled while waiting: this waiter leaves
            self._owner._leave(self._thread_id, self._entry)
            raise

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._entry.lock.release()
        self._owner._leave(self._thread_id, self._entry)
