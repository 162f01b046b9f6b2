"""One run's events as an async iterator, for services that stream progress to a client."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Protocol

from pes_agent.agent.props import AgentProps
from pes_agent.agent.response import AgentFinalResponse
from pes_agent.events import Event, Listener, Subscription


class Runner(Protocol):
    """What a stream needs of an `ArtInstance`: its events, and a run to start (no import back)."""

    def subscribe(self, listener: Listener, *, thread_id: str | None = None) -> Subscription: ...

    async def process(self, query: AgentProps) -> AgentFinalResponse: ...


async def stream_run(art: Runner, props: AgentProps) -> AsyncIterator[Event | AgentFinalResponse]:
    """Events of this run (matched by trace id) in order, then the final response.

    Leaving the loop early cancels the run.
    """
    tid = props.thread_id or f"thread_{uuid.uuid4().hex}"
    trace = props.trace_id or uuid.uuid4().hex
    props = replace(props, thread_id=tid, trace_id=trace)
    queue: asyncio.Queue[Event] = asyncio.Queue()
    sub = art.subscribe(queue.put_nowait, thread_id=tid)
    task = asyncio.ensure_future(art.process(props))
    try:
        while not task.done() or not queue.empty():
            getter = asyncio.ensure_future(queue.get())
            await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                event = getter.result()
                if event.trace_id == trace:
                    yield event
            else:
                getter.cancel()
        yield task.result()
    finally:
        sub.close()
        if not task.done():
            task.cancel()


class ObservationReader(Protocol):
    """What following a thread needs: its stored events (an `ArtInstance` is one)."""

    async def get_observations(
        self, thread_id: str, *, since: float | None = None, user_id: str | None = None
    ) -> list[Event]: ...


FOLLOW_OVERLAP_S = 5.0
"""How far back each poll reads again: events are stamped by the clock of the process that wrote
them, so one written just after a poll may carry a slightly earlier time (ids weed out repeats)."""


async def follow_events(
    reader: ObservationReader,
    thread_id: str,
    *,
    since: float,
    user_id: str | None = None,
    poll_s: float = 0.25,
) -> AsyncIterator[Event]:
    """The thread's stored events after ``since``, as any process writes them, until the caller
    stops iterating: how a client follows a run that executes in another process (a worker).

    The store is read every ``poll_s``; every event except TOKEN is stored, so nothing else is lost.
    """
    seen: dict[str, float] = {}
    cutoff = since
    while True:
        for event in await reader.get_observations(thread_id, since=cutoff, user_id=user_id):
            if event.id not in seen:
                seen[event.id] = event.timestamp
                yield event
        if seen:
            cutoff = max(since, max(seen.values()) - FOLLOW_OVERLAP_S)
            seen = {i: t for i, t in seen.items() if t >= cutoff}
        await asyncio.sleep(poll_s)
