"""What a producer's call returns: a handle on the run that carries it, to wait for its response.

A decision may be carried by a run other than the one it was first handed to: the producer sends it
to the workflow waiting on the suspension and, when that workflow does not take it within
``ACK_WAIT_S``, also queues a resume job. Either may end up carrying it, never both (the store
applies a decision once). So a decision's handle watches both and settles on the run that took the
decision; ``workflow_id`` names that run once ``response()`` has answered.

A repeat of a decision (the same decision id: a client retrying) may be handed the waiting workflow
that acked it while the job the first request queued, on another queue, applies it first. The
workflow's refusal is then not the answer: the handle follows that job, which carried the decision.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from dbos import DBOSClient

from pes_agent.workers.workflow import ATTACH_WAIT_S, CARRIED_BY, ack_key

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
        job: str | None = None,
    ) -> None:
        self._client = client
        self.workflow_id = workflow_id
        self.thread_id = thread_id
        self._key = key
        self._watch = list(watch)  # waiting workflows that may still take the decision
        self._decision = decision  # (suspension id, decision id) when watching, or with ``job``
        self._job = job  # the resume job an identical earlier request may have queued

    async def response(self, timeout_s: float = 600.0) -> dict[str, Any] | None:
        """The ``AgentFinalResponse`` (as a dict) this handle's call led to, once a worker reached it
        (an answer, a pause, an error; ``{"refused": ...}`` when the run could not start,
        ``{"failed": ...}`` when it broke on the worker); None when none came within ``timeout_s``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            if self._watch:
                await self._settle(max(0.0, deadline - loop.time()))
            left = max(0.0, deadline - loop.time())
            value = await self._client.get_event_async(self.workflow_id, self._key, timeout_seconds=left)
            if value is None or "refused" not in value or not await self._follow_job():
                return dict(value) if value is not None else None

    async def result(self) -> dict[str, Any]:
        """The last response of the workflow, once it has ended (after any approvals it waited for)."""
        if self._job is not None:
            await self.response(ATTACH_WAIT_S)  # which run carries the decision: this one or the job
        if self._watch:
            await self._settle(None)
        handle: Any = await self._client.retrieve_workflow_async(self.workflow_id)
        return dict(await handle.get_result())

    async def _follow_job(self) -> bool:
        """After this workflow refused the decision it acked: when the job of that same decision has
        run, watch this workflow from the job, whose answer is the truth (``_settle``). If the store
        refused this workflow because the decision was applied, that job applied it (a waiting
        workflow applies no pause but its own, see ``workflow._waits_on``), so it has recorded steps
        by now (its first is the ``store.load`` that precedes any write; steps outlive a recovery
        that queues it again). A job that has not run one (still queued behind this workflow)
        changed nothing: the refusal is the answer, at once."""
        job, self._job = self._job, None
        if job is None or not await self._client.list_workflow_steps_async(job, load_output=False, limit=1):
            return False
        self._watch, self.workflow_id = [self.workflow_id], job
        return True

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
