"""What a producer's call returns: a handle on the run that carries it, to wait for its response.

A decision may be carried by a run other than the one it was first handed to: the producer sends it
to the workflow waiting on the suspension and, when that workflow does not take it within
``ACK_WAIT_S``, also queues a resume job. Either may end up carrying it, never both (the store
applies a decision once). So a decision's handle watches both and settles on the run that took the
decision; ``workflow_id`` names that run once ``response()`` has answered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from dbos import DBOSClient

from pes_agent.workers.workflow import CARRIED_BY, ack_key

POLL_S = 0.2
"""How often a handle that watches two runs looks at each (DBOS's client has no push)."""


class RunHandle:
    """A queued run or a delivered decision: its workflow id, the response to wait for, and the
    workflow's final result."""

    def __init__(
        self,
        client: DBOSClient,
        workflow_id: str,
        key: str,
        thread_id: str,
        *,
        watch: Sequence[str] = (),
        decision: tuple[str, str] | None = None,
    ) -> None:
        self._client = client
        self.workflow_id = workflow_id
        self.thread_id = thread_id
        self._key = key
        self._watch = list(watch)  # waiting workflows that may still take the decision
        self._decision = decision  # (suspension id, decision id) when watching

    async def response(self, timeout_s: float = 600.0) -> dict[str, Any] | None:
        """The ``AgentFinalResponse`` (as a dict) this handle's call led to, once a worker reached it
        (an answer, a pause, an error; ``{"refused": ...}`` when the run could not start,
        ``{"failed": ...}`` when it broke on the worker); None when none came within ``timeout_s``."""
        if self._watch:
            loop = asyncio.get_running_loop()
            started = loop.time()
            await self._settle(timeout_s)
            timeout_s = max(0.0, timeout_s - (loop.time() - started))
        value = await self._client.get_event_async(self.workflow_id, self._key, timeout_seconds=timeout_s)
        return dict(value) if value is not None else None

    async def result(self) -> dict[str, Any]:
        """The last response of the workflow, once it has ended (after any approvals it waited for)."""
        if self._watch:
            await self._settle(None)
        handle: Any = await self._client.retrieve_workflow_async(self.workflow_id)
        return dict(await handle.get_result())

    async def _settle(self, timeout_s: float | None) -> None:
        """Wait until the decision's carrier is known. The queued job's answer is the truth: it
        applies the decision or, refused, attaches to a watched workflow that took it (see
        ``workflow._carrier``). A watched workflow that took it settles it sooner, but only with an
        answer that is no refusal: it may have lost the decision to the job. With ``timeout_s``
        passed, the queued job stays the handle's run."""
        assert self._decision is not None
        suspension_id, decision_id = self._decision
        loop = asyncio.get_running_loop()
        deadline = None if timeout_s is None else loop.time() + timeout_s
        while deadline is None or loop.time() < deadline:
            if await self._client.get_event_async(self.workflow_id, self._key, 0) is not None:
                carrier = await self._client.get_event_async(self.workflow_id, CARRIED_BY, 0)
                self.workflow_id, self._watch = str(carrier or self.workflow_id), []
                return
            for waiting in self._watch:
                if await self._client.get_event_async(waiting, ack_key(suspension_id), 0) != decision_id:
                    continue
                answer = await self._client.get_event_async(waiting, self._key, 0)
                if answer is not None and "refused" not in answer:
                    self.workflow_id, self._watch = waiting, []
                    return
            await asyncio.sleep(POLL_S)
