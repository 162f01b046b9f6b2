"""The store protocol: one shape for memory, SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from pes_agent.events import Event, EventType
from pes_agent.state.journal import CallFinish, JournalEntry
from pes_agent.state.models import HistoryMessage, ThreadState, ThreadSummary


@runtime_checkable
class StateStore(Protocol):
    """Thread state with optimistic versions, the tool-call journal, the event log and the history.

    ``load`` returns ``(None, 0)`` for an unknown thread. ``save`` raises ``VersionConflictError``
    when ``expected_version`` is not the stored version (no lost write) and returns the new version.

    The journal (see ``pes_agent.state.journal``) is keyed by ``(thread_id, item_id, call_id)``:

    - ``call_started`` records a call before its tool runs. Starting a call the journal already
      holds changes nothing: its first tool name and arguments stay, and a finished call stays
      finished with its result (a resumed run re-announcing a call cannot erase what it did).
    - ``call_finished`` records the result; finishing a call again replaces the result (a
      ``suspended`` result replaced by the outcome after approval). Finishing a call that was
      never started raises ``PesAgentError`` and records nothing.
    - ``finish_calls_and_save`` is the one step transaction: it records the finished calls *and*
      saves the state, or (on a version conflict, or a call never started) writes neither.
    - ``calls`` lists a thread's calls (of one item, when given) in the order they were started.
    """

    async def load(self, thread_id: str) -> tuple[ThreadState | None, int]: ...

    async def save(self, thread_id: str, state: ThreadState, expected_version: int) -> int: ...

    async def threads(self, owner: str | None, *, limit: int = 50) -> list[ThreadSummary]:
        """The threads whose state names ``owner`` (None: no owner), most recently saved first."""
        ...

    async def call_started(
        self,
        thread_id: str,
        item_id: str,
        call_id: str,
        tool_name: str,
        arguments: Mapping[str, Any],
    ) -> None: ...

    async def call_finished(
        self, thread_id: str, item_id: str, call_id: str, result: Mapping[str, Any]
    ) -> None: ...

    async def finish_calls_and_save(
        self,
        thread_id: str,
        state: ThreadState,
        expected_version: int,
        finished: Sequence[CallFinish],
    ) -> int: ...

    async def calls(self, thread_id: str, item_id: str | None = None) -> list[JournalEntry]: ...

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
