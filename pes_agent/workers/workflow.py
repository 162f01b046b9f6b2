"""The workflow a worker runs for each queued job: one pes-agent run, durable.

A job is a plain dict (it is stored by DBOS as the workflow's input): ``kind`` is ``process`` (a new
query) or ``resume`` (a person's decision on a paused thread), with ``thread_id``, ``trace_id`` and
the fields of that call. The workflow publishes each response it reaches as a DBOS event (key
``response start`` for the job's first outcome, ``response <suspension id>`` for the outcome of a
decision), so the producer can show it while the workflow goes on waiting.

A run that pauses for a person keeps its workflow waiting (``DBOS.recv``) up to
``workers.approvalWaitS`` for the decision a ``resume`` from any process sends; the same workflow
then continues the same item. Past that wait it ends, and a later ``resume`` enqueues a new job.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from dbos import DBOS

from pes_agent.agent.response import AgentFinalResponse
from pes_agent.errors import PesAgentError
from pes_agent.instance import ArtInstance
from pes_agent.workers.steps import CallInterrupted, new_attempt

logger = logging.getLogger("pes_agent.workers")

WORKFLOW = "pes_agent.run"
DECISION_TOPIC = "pes-agent.decision"
START = "start"
_PAUSED = ("suspended", "needs_input")


def response_key(suspension_id: str | None) -> str:
    """The event a response is published under: the job's first, or the one after a decision."""
    return f"response {suspension_id or START}"


def ack_key(suspension_id: str) -> str:
    """Set by the waiting workflow when it has taken a decision, so the sender knows it arrived."""
    return f"took {suspension_id}"


@dataclass
class _Runtime:
    art: ArtInstance
    approval_wait_s: float


_RUNTIME: list[_Runtime] = []
"""The instance this worker process runs jobs with (set by ``install``; one per process)."""


def install(art: ArtInstance, *, approval_wait_s: float) -> None:
    _RUNTIME[:] = [_Runtime(art, approval_wait_s)]


def uninstall() -> None:
    _RUNTIME.clear()


def _runtime() -> _Runtime:
    if not _RUNTIME:
        raise PesAgentError(
            "this process received a pes-agent job but runs no worker; start one with "
            "`pes-agent worker --config FILE` (or `pes_agent.workers.Worker`)"
        )
    return _RUNTIME[0]


@DBOS.workflow(name=WORKFLOW)
async def run_job(job: dict[str, Any]) -> dict[str, Any]:
    new_attempt()
    runtime = _runtime()
    art, thread_id, user_id = runtime.art, str(job["thread_id"]), job.get("user_id")
    response = await _published(response_key(job.get("suspension_id")), thread_id,
                                _outcome(art, thread_id, user_id, lambda: _first(art, job)))
    while response.get("status") in _PAUSED and runtime.approval_wait_s > 0:
        message = await DBOS.recv_async(DECISION_TOPIC, timeout_seconds=runtime.approval_wait_s)
        if message is None:
            break  # nobody decided in time: the run stays paused in the store
        suspension_id = str(message["suspension_id"])
        await DBOS.set_event_async(ack_key(suspension_id), True)
        decided = partial(_decide, art, thread_id, {**message, "user_id": user_id})
        after = await _published(response_key(suspension_id), thread_id, _outcome(art, thread_id, user_id, decided))
        if "refused" not in after:
            response = after
    return response


async def _published(key: str, thread_id: str, outcome: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    """``outcome``, published under ``key`` for the caller waiting on it. A failure that is no
    refusal (a store that went away) is published too, as ``{"failed": {type, message}}``, so the
    caller learns at once rather than after its whole wait, then raised, so DBOS records the
    workflow as failed. Its text stays in the worker's log: it may name a database."""
    try:
        response = await outcome
    except Exception as exc:
        kind = type(exc).__name__
        message = f"the run failed on a worker ({kind}); the worker's log has why"
        logger.error("run on thread %r failed", thread_id, exc_info=exc)
        await DBOS.set_event_async(key, {"thread_id": thread_id, "failed": {"type": kind, "message": message}})
        raise
    await DBOS.set_event_async(key, response)
    return response


async def _first(art: ArtInstance, job: dict[str, Any]) -> AgentFinalResponse:
    thread_id = str(job["thread_id"])
    if job["kind"] == "resume":
        return await _decide(art, thread_id, job)
    return await art.process(
        job["query"], thread_id=thread_id, trace_id=job.get("trace_id"), user_id=job.get("user_id"),
        options=job.get("options"),
    )


async def _decide(art: ArtInstance, thread_id: str, message: dict[str, Any]) -> AgentFinalResponse:
    return await art.resume(
        thread_id, str(message["suspension_id"]), message.get("decision") or {}, user_id=message.get("user_id")
    )


async def _outcome(
    art: ArtInstance, thread_id: str, user_id: str | None, start: Callable[[], Awaitable[AgentFinalResponse]]
) -> dict[str, Any]:
    """The response of ``start`` as a dict; a refusal (busy thread, unknown suspension) as
    ``{"refused": {type, message}}``. A tool call cut short by a dead worker hands the thread to
    the agent's recovery, as often as that happens."""
    call = start
    try:
        while True:
            try:
                return (await call()).to_dict()
            except CallInterrupted:
                call = partial(art.resume, thread_id, user_id=user_id)
    except PesAgentError as exc:
        return {"thread_id": thread_id, "refused": {"type": type(exc).__name__, "message": str(exc)}}
