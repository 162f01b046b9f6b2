"""Events: the one record of everything observable in a run, and the bus that broadcasts them.

Every event except ``TOKEN`` is persisted (an *observation*) before it is broadcast, so a subscriber
never sees something the store does not hold.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import os
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class EventType(StrEnum):
    NOTICE = "NOTICE"
    """Something about how the run is set up that its user should know, said first (a small local
    model running unguided, and the setting that turns guided mode on)."""
    TOOLS_OFFERED = "TOOLS_OFFERED"
    """Which tools the planner was shown and why: all of them, or those found for the query (with
    their scores), or more it asked for with ``findTools``."""
    PLAN = "PLAN"
    PLAN_UPDATE = "PLAN_UPDATE"
    ITEM_STATUS = "ITEM_STATUS"
    THOUGHTS = "THOUGHTS"
    TOKEN = "TOKEN"
    TOOL_CALL = "TOOL_CALL"
    ARG_REPAIR = "ARG_REPAIR"
    REASK = "REASK"
    ARG_FILL_ATTEMPT = "ARG_FILL_ATTEMPT"
    ARG_FILL_SUCCESS = "ARG_FILL_SUCCESS"
    ARG_FILL_FAILURE = "ARG_FILL_FAILURE"
    TOOL_EXECUTION = "TOOL_EXECUTION"
    TOOL_REPEAT = "TOOL_REPEAT"
    """An identical call the step already made: its result reused, the tool not run again."""
    PARSE_WARNING = "PARSE_WARNING"
    CLARIFICATION = "CLARIFICATION"
    SUSPENDED = "SUSPENDED"
    RESUMED = "RESUMED"
    SYNTHESIS = "SYNTHESIS"
    FINAL_RESPONSE = "FINAL_RESPONSE"
    ERROR = "ERROR"


class _EventIds:
    """Event ids: 64 random bits drawn once per process (again in a forked child) and a counter.

    Unique across the processes sharing a store, like a uuid4, at a fraction of its cost: one id
    per event, and a run publishes a dozen or more.
    """

    def __init__(self) -> None:
        self.reseed()
        os.register_at_fork(after_in_child=self.reseed)

    def reseed(self) -> None:
        self._prefix = os.urandom(8).hex()
        self._counter = itertools.count()

    def __call__(self) -> str:
        return f"{self._prefix}{next(self._counter):016x}"


new_event_id = _EventIds()
"""``new_event_id()`` → 32 hex digits, never the same twice."""


@dataclass(frozen=True, kw_only=True)
class Event:
    id: str
    type: EventType
    thread_id: str
    trace_id: str
    step_id: str | None
    timestamp: float
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def persisted(self) -> bool:
        return self.type is not EventType.TOKEN

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type.value,
            "thread_id": self.thread_id,
            "trace_id": self.trace_id,
            "step_id": self.step_id,
            "timestamp": self.timestamp,
            "data": self.data,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Event:
        return cls(
            id=raw["id"],
            type=EventType(raw["type"]),
            thread_id=raw["thread_id"],
            trace_id=raw["trace_id"],
            step_id=raw.get("step_id"),
            timestamp=float(raw["timestamp"]),
            data=dict(raw.get("data") or {}),
        )


Listener = Callable[[Event], None] | Callable[[Event], Awaitable[None]]


@dataclass(eq=False)
class Subscription:
    """Handle returned by ``EventBus.subscribe``; call ``close()`` to stop receiving."""

    listener: Listener
    thread_id: str | None
    types: frozenset[EventType] | None
    _bus: EventBus

    def matches(self, event: Event) -> bool:
        if self.thread_id is not None and event.thread_id != self.thread_id:
            return False
        return self.types is None or event.type in self.types

    def close(self) -> None:
        self._bus._remove(self)


class EventBus:
    """Synchronous fan-out to listeners filtered by thread and type.

    A listener that raises is isolated: the run never fails because an observer did.
    """

    def __init__(self) -> None:
        self._subs: list[Subscription] = []
        self._pending: set[asyncio.Task[None]] = set()
        self.listener_errors = 0

    def subscribe(
        self,
        listener: Listener,
        *,
        thread_id: str | None = None,
        types: Collection[EventType | str] | None = None,
    ) -> Subscription:
        wanted = frozenset(EventType(t) for t in types) if types is not None else None
        sub = Subscription(listener, thread_id, wanted, self)
        self._subs.append(sub)
        return sub

    def has_listeners(self, thread_id: str, type_: EventType) -> bool:
        """Whether an event of this type on this thread would reach anyone.

        Lets producers skip work nobody would see: a run streams tokens only while someone listens.
        """
        return any(
            (sub.thread_id is None or sub.thread_id == thread_id)
            and (sub.types is None or type_ in sub.types)
            for sub in self._subs
        )

    def _remove(self, sub: Subscription) -> None:
        if sub in self._subs:
            self._subs.remove(sub)

    def publish(self, event: Event) -> None:
        for sub in tuple(self._subs):
            if not sub.matches(event):
                continue
            try:
                outcome = sub.listener(event)
            except Exception:  # noqa: BLE001 -- a listener's bug must not stop the run or the other listeners
                self.listener_errors += 1
                continue
            if inspect.isawaitable(outcome):
                task = asyncio.ensure_future(outcome)
                self._pending.add(task)
                task.add_done_callback(self._finish)

    def _finish(self, task: asyncio.Task[None]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.listener_errors += 1
