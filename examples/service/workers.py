"""When the config's `workers.enabled` is set, runs go to `pes-agent worker` processes: the routes
enqueue them (and deliver decisions) through a `pes_agent.workers.Producer` and wait for the
response; the event stream follows the store, where the workers write the events."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import pes_agent.errors
from pes_agent import ArtInstance, PesAgentError

RESPONSE_WAIT_S = 600.0
"""How long a request waits for a worker's response before giving up (the run goes on)."""


async def open_producer(art: ArtInstance) -> Any:
    """The producer of this service (imported here only: without workers, DBOS is never loaded)."""
    from pes_agent.workers import Producer

    return await Producer.open(art.config, store=art.store)


async def response_of(handing: Awaitable[Any]) -> dict[str, Any]:
    """The response a worker reached for the run or decision just handed over; a refusal there
    (busy thread, another user's thread, a decision that came too late) is raised as the library's
    own error, so the service answers it as it would for a run in this process."""
    handle = await handing
    response: dict[str, Any] | None = await handle.response(timeout_s=RESPONSE_WAIT_S)
    if response is None:
        raise TimeoutError(f"no worker answered within {RESPONSE_WAIT_S:g} s; is `pes-agent worker` running?")
    if response.get("failed"):  # no refusal: the worker's log has why; the client gets a 500
        raise RuntimeError(f"thread {response.get('thread_id')!r}: {response['failed'].get('message')}")
    refused = response.get("refused")
    if refused:
        kind = getattr(pes_agent.errors, str(refused.get("type")), PesAgentError)
        error = (
            kind.__new__(kind)
            if isinstance(kind, type) and issubclass(kind, PesAgentError)
            else PesAgentError()
        )
        Exception.__init__(error, str(refused.get("message")))
        raise error
    return response
