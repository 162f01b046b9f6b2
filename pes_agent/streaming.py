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
