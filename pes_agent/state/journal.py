"""The tool-call journal's records, and the row conversions every database store shares.

The journal is what makes tool effects exactly-once: a call is written as ``started`` before the tool
runs and as ``finished`` (with its result) after. On resume, a finished call is answered from its
recorded result and never run again; a call left ``started`` is the one case where the agent has to
decide (re-run an idempotent tool, otherwise ask the user) because the store cannot know whether the
side effect happened.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_core import to_json

from pes_agent.errors import PesAgentError
from pes_agent.events import Event, EventType
from pes_agent.state.models import HistoryMessage

CallState = Literal["started", "finished"]


@dataclass(frozen=True)
class JournalEntry:
    """One tool call as the store holds it; ``result`` is set once the call has finished.

    ``arguments`` and ``result`` are fresh copies on every read, so mutating them changes nothing
    stored.
    """

    thread_id: str
    item_id: str
    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    state: CallState
    result: dict[str, Any] | None
    started_at: float
    finished_at: float | None

    @property
    def finished(self) -> bool:
        return self.state == "finished"


@dataclass(frozen=True)
class CallFinish:
    """A finished call to record together with a state save (``finish_calls_and_save``).

    ``result`` is ``ToolResult.to_dict()``-shaped: ``call_id, tool_name, status, output, error``.
    """

    item_id: str
    call_id: str
    result: Mapping[str, Any]


def dumps(value: Any) -> str:
    """JSON text for everything a store persists besides the state model.

    A value JSON cannot express (a ``Path``, a set) is stored as its ``str``, so a tool returning
    one is recorded rather than failing the step; every store uses this, so every store coerces the
    same way.
    """
    return to_json(value, serialize_unknown=True).decode()


def make_entry(
    thread_id: str,
    item_id: str,
    call_id: str,
    tool_name: str,
    arguments: str,
    result: str | None,
    started_at: float,
    finished_at: float | None,
) -> JournalEntry:
    """Builds an entry from the stored JSON text; the state follows from whether a result exists."""
    return JournalEntry(
        thread_id=thread_id,
        item_id=item_id,
        call_id=call_id,
        tool_name=tool_name,
        arguments=json.loads(arguments),
        state="started" if result is None else "finished",
        result=None if result is None else json.loads(result),
        started_at=float(started_at),
        finished_at=None if finished_at is None else float(finished_at),
    )


def not_started_error(thread_id: str, item_id: str, call_id: str) -> PesAgentError:
    """Finishing a call the journal never saw is a bug in the caller: the effect would be unguarded."""
    return PesAgentError(
        f"thread {thread_id!r}, item {item_id!r}: tool call {call_id!r} was never recorded as started; "
        "call `call_started(...)` before running the tool so a crash cannot run it twice."
    )


# -- rows, in the column order both database stores use ----------------------------------------------


def call_row(
    thread_id: str, item_id: str, call_id: str, tool_name: str, arguments: Mapping[str, Any], now: float
) -> tuple[str, str, str, str, str, float]:
    """``(thread_id, item_id, call_id, tool_name, arguments, started_at)`` of a started call."""
    return (thread_id, item_id, call_id, tool_name, dumps(arguments), now)


def finish_rows(
    thread_id: str, finished: Sequence[CallFinish], now: float
) -> list[tuple[str, float, str, str, str]]:
    """``(result, finished_at, thread_id, item_id, call_id)`` per finished call: the UPDATE's values."""
    return [(dumps(f.result), now, thread_id, f.item_id, f.call_id) for f in finished]


def event_row(event: Event) -> tuple[str, str, str, str | None, str, float, str]:
    """``(id, thread_id, type, step_id, trace_id, ts, data)`` of an event to insert."""
    return (
        event.id,
        event.thread_id,
        event.type.value,
        event.step_id,
        event.trace_id,
        event.timestamp,
        dumps(event.data),
    )


def message_row(thread_id: str, message: HistoryMessage) -> tuple[str, str, str, str | None, float, str]:
    """``(thread_id, role, content, trace_id, ts, metadata)`` of a history message to insert."""
    return (
        thread_id,
        message.role,
        message.content,
        message.trace_id,
        message.timestamp,
        dumps(message.metadata),
    )


def event_from_row(row: Sequence[Any]) -> Event:
    """``(id, type, thread_id, trace_id, step_id, ts, data)`` as selected by the database stores."""
    return Event(
        id=row[0],
        type=EventType(row[1]),
        thread_id=row[2],
        trace_id=row[3],
        step_id=row[4],
        timestamp=float(row[5]),
        data=json.loads(row[6]),
    )


def message_from_row(row: Sequence[Any]) -> HistoryMessage:
    """``(seq, role, content, trace_id, ts, metadata)`` as selected by the database stores."""
    return HistoryMessage.model_validate(
        {
            "role": row[1],
            "content": row[2],
            "trace_id": row[3],
            "timestamp": row[4],
            "metadata": json.loads(row[5]),
        }
    )
