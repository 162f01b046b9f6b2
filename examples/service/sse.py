"""A thread's events as Server-Sent Events, for its owner only."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

from pes_agent import ArtInstance, Event, EventType, ThreadAccessError
from pes_agent.streaming import follow_events


async def event_stream(
    art: ArtInstance,
    thread_id: str,
    user: str,
    *,
    since: float | None,
    last_id: str | None,
    keepalive_s: float,
    follow: bool = False,
) -> AsyncIterator[str]:
    """The thread's events as SSE frames, until the client leaves.

    It subscribes before reading the backlog, so an event published in between is in the queue
    rather than lost (and skipped there when the backlog already had it). The first frame, a
    comment, tells a client that the subscription is in place. Leaving cancels this generator
    (Starlette does, on disconnect), and `finally` unsubscribes.

    A client may watch a thread id before its first run (to miss nothing of it). The event bus
    knows nothing of owners, so until the thread's owner is seen to be this user each live event
    is checked against the stored thread; if another user started it, the stream ends before
    sending any of its events.

    With ``follow`` (runs execute on workers, `pes_agent.workers`), the live events come from the
    store as the workers write them (`pes_agent.streaming.follow_events`), not from this process;
    when that reading stops (another user's run took the id), the stream ends at its next keep-alive.
    """
    queue: asyncio.Queue[Event] = asyncio.Queue()
    subscription = art.subscribe(queue.put_nowait, thread_id=thread_id)
    tail = asyncio.create_task(_tail(art, thread_id, user, queue)) if follow else None
    try:
        yield f": events of thread {json.dumps(thread_id)}\n\n"
        try:
            backlog = await _backlog(art, thread_id, user, since, last_id)
            owned = await art.get_thread_state(thread_id, user_id=user) is not None
            replayed = {event.id for event in backlog}
            for event in backlog:
                yield sse_frame(event)
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), keepalive_s)
                except TimeoutError:
                    if tail is not None and tail.done():
                        return  # the store refused the thread to this user (or failed): nothing more comes
                    yield ": keep-alive\n\n"  # proxies close connections that stay silent
                    continue
                owned = owned or await art.get_thread_state(thread_id, user_id=user) is not None
                if event.id not in replayed:
                    replayed.add(event.id)
                    yield sse_frame(event)
        except ThreadAccessError:
            return  # another user's run took this id: none of it is ours to see
    finally:
        subscription.close()
        if tail is not None:
            tail.cancel()


async def _tail(art: ArtInstance, thread_id: str, user: str, queue: asyncio.Queue[Event]) -> None:
    """Events the workers store from now on, into the same queue as the bus's (a reconnecting
    client gets the earlier ones from the backlog)."""
    try:
        async for event in follow_events(art, thread_id, since=time.time(), user_id=user):
            queue.put_nowait(event)
    except ThreadAccessError:
        return


async def _backlog(
    art: ArtInstance, thread_id: str, user: str, since: float | None, last_id: str | None
) -> list[Event]:
    """Stored events to send before live ones: after ``Last-Event-ID`` (a browser reconnecting),
    else after ``since``. An id the store does not hold (a TOKEN, never stored) replays nothing."""
    if last_id is not None:
        stored = await art.get_observations(thread_id, user_id=user)
        ids = [event.id for event in stored]
        return stored[ids.index(last_id) + 1 :] if last_id in ids else []
    if since is not None:
        return await art.get_observations(thread_id, since=since, user_id=user)
    return []


def sse_frame(event: Event) -> str:
    """``id``/``event``/``data`` lines; TOKEN events carry no id, since they cannot be replayed."""
    data = json.dumps(event.to_dict(), ensure_ascii=False, default=str)
    head = "" if event.type is EventType.TOKEN else f"id: {event.id}\n"
    return f"{head}event: {event.type.value}\ndata: {data}\n\n"
