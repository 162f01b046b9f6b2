"""The workflow a worker runs for each queued job: one pes-agent run, durable.

A job is a plain dict (it is stored by DBOS as the workflow's input): ``kind`` is ``process`` (a new
query), ``resume`` (a person's decision on a paused thread) or ``recover`` (a run that stopped on an
unreachable database, continued from its journal), with ``thread_id``, ``trace_id`` and
the fields of that call. The workflow publishes each response it reaches as a DBOS event (key
``response start`` for the job's first outcome, ``response <suspension id>`` for the outcome of a
decision), so the producer can show it while the workflow goes on waiting.

A run that pauses for a person keeps its workflow waiting (``DBOS.recv``) up to
``workers.approvalWaitS`` for the decision a ``resume`` from any process sends; the same workflow
then continues the same item. Past that wait it ends, and a later ``resume`` enqueues a new job.

A decision is taken once: the waiting workflow acks it (``took <suspension id>`` = the decision's
id) before applying it, and ignores a second one for a suspension it took a decision on. A resume job whose
decision the store refuses because the waiting workflow took it after all (it acked too late for
the producer) answers with that workflow's response, and names it (``carried by``).

Such a job may run while the workflow still waits (a thread run on another provider's queue than
the default one the job goes to): it takes the pause, reaches the next one and waits there itself.
The workflow left behind stops waiting as soon as it sees the thread went on without it (its own
decision refused, or a decision for a pause that is not its own), so two workflows never both take
the thread's next decision.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from dbos import DBOS

from pes_agent.agent.lease import is_stale
from pes_agent.agent.lease import owner as lease_owner
from pes_agent.agent.response import AgentFinalResponse
from pes_agent.errors import PesAgentError, StoreUnavailableError, VersionConflictError
from pes_agent.instance import ArtInstance
from pes_agent.state.models import ItemStatus, Lease
from pes_agent.state.store import StateStore
from pes_agent.state.transient import new_outage_scope, ride_out
from pes_agent.workers.steps import CallInterrupted, new_attempt
from pes_agent.workers.store import describe_store

logger = logging.getLogger("pes_agent.workers")

WORKFLOW = "pes_agent.run"
DECISION_TOPIC = "pes-agent.decision"
START = "start"
CARRIED_BY = "carried by"
ATTACH_WAIT_S = 24 * 3600.0
"""How long a resume job waits for the response of the workflow that took its decision first."""
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
    store: StateStore
    """The store itself, under the instance's durable one: for what a workflow writes outside steps."""
    store_outage_s: float


_RUNTIME: list[_Runtime] = []
"""The instance this worker process runs jobs with (set by ``install``; one per process)."""


def install(art: ArtInstance, *, approval_wait_s: float, store: StateStore, store_outage_s: float) -> None:
    _RUNTIME[:] = [_Runtime(art, approval_wait_s, store, store_outage_s)]


def uninstall() -> None:
    _RUNTIME.clear()


def _runtime() -> _Runtime:
    if not _RUNTIME:
        raise PesAgentError(
            "this process received a pes-agent job but runs no worker; start one with "
            "`pes-agent worker --config FILE` (or `pes_agent.workers.Worker`)"
        )
    return _RUNTIME[0]


# Without the `dbos` extra DBOS is Any and so is its decorator; with it, the decorator is typed.
@DBOS.workflow(name=WORKFLOW)  # type: ignore[untyped-decorator,unused-ignore]
async def run_job(job: dict[str, Any]) -> dict[str, Any]:
    new_attempt()
    runtime = _runtime()
    art, thread_id, user_id = runtime.art, str(job["thread_id"]), job.get("user_id")
    carried: list[str] = []  # the workflow that carried this resume job's decision, if another
    response = await _published(response_key(job.get("suspension_id")), thread_id, _first(art, job, carried))
    taken = {str(job.get("suspension_id"))}  # suspensions this workflow has taken a decision on
    while not carried and response.get("status") in _PAUSED and runtime.approval_wait_s > 0:
        message = await DBOS.recv_async(DECISION_TOPIC, timeout_seconds=runtime.approval_wait_s)
        if message is None:
            break  # nobody decided in time: the run stays paused in the store
        suspension_id = str(message["suspension_id"])
        if suspension_id in taken:
            # a decision that lost the race for a suspension decided here already: taking it would
            # publish a refusal over that suspension's real response. Its sender saw the ack of the
            # decision that won, so it was told; wait afresh. (Any other id, while the thread waits
            # on this run's pause, goes to the store, which refuses it: its sender is told so.)
            logger.info("thread %r: ignored a second decision on %r", thread_id, suspension_id)
            continue
        own = str((response.get("suspension") or {}).get("id"))
        if suspension_id != own and not await _waits_on(art, thread_id, own):
            break  # left behind: the run that paused on it (or, none waiting, a new job) takes it
        taken.add(suspension_id)
        await acknowledge(suspension_id, message.get("decision_id"))
        decided = partial(_decide, art, thread_id, {**message, "user_id": user_id})
        outcome = _withdrawn_if_invalid(suspension_id, _outcome(art, thread_id, user_id, decided))
        after = await _published(response_key(suspension_id), thread_id, outcome)
        if _invalid(after):
            break  # the pause stands: its next decision goes to a resume job of its own
        if "refused" not in after:
            response = after
        elif not await _waits_on(art, thread_id, own):
            break  # another run took this run's pause (a resume job it acked too late for)
    return response


async def _waits_on(art: ArtInstance, thread_id: str, suspension_id: str) -> bool:
    """Whether the thread still waits on ``suspension_id``, the pause this run reached. When it no
    longer does, another run took that pause and carries the thread (and waits on its next pause
    itself): this run stops waiting, so that it never takes a decision meant for that one (both
    would ack it; the store would apply it for one, and the caller might be told the other's
    refusal). A decision it takes is then always for its own pause, or one the store refuses (the
    thread waits on this run's pause, not on that one): its sender is told so at once."""
    state, _ = await art.store.load(thread_id)
    if state is not None and state.suspension is not None and state.suspension.id == suspension_id:
        return True
    logger.info(
        "thread %r went on past pause %r without this run: it stops waiting", thread_id, suspension_id
    )
    return False


async def acknowledge(suspension_id: str, decision_id: str | None) -> None:
    """Tell the decision's sender this workflow took it (and which decision, when several raced).
    A seam for tests: a slow ack is what a loaded machine does."""
    await DBOS.set_event_async(ack_key(suspension_id), decision_id or True)


def _invalid(response: dict[str, Any]) -> bool:
    return (response.get("refused") or {}).get("type") == "InvalidDecisionError"


async def _withdrawn_if_invalid(suspension_id: str, outcome: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    """``outcome``; when it refused the decision as invalid (nothing was applied, the pause stands),
    this run's ack of it is withdrawn first, before the refusal is published: no later decision on
    the pause is then taken for one that lost to it, and this run stops waiting, so that decision
    goes to a resume job of its own."""
    response = await outcome
    if _invalid(response):
        await DBOS.set_event_async(ack_key(suspension_id), None)
    return response


async def _published(key: str, thread_id: str, outcome: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    """``outcome``, published under ``key`` for the caller waiting on it. A failure that is no
    refusal is published too, as ``{"failed": {type, message}}``, so the caller learns at once rather
    than after its whole wait, then raised, so DBOS records the workflow as failed. Its text stays in
    the worker's log (it may name a database), except a database outage past ``workers.storeOutageS``:
    that message is pes-agent's own (``host:port/database``, never a password) and tells the caller
    how long the database was unreachable and how to continue; the thread is then given back."""
    try:
        response = await outcome
    except Exception as exc:
        kind = type(exc).__name__
        message = f"the run failed on a worker ({kind}); the worker's log has why"
        if isinstance(exc, StoreUnavailableError):
            message = f"the run failed on a worker: {exc}"
        logger.error("run on thread %r failed", thread_id, exc_info=exc)
        await DBOS.set_event_async(
            key, {"thread_id": thread_id, "failed": {"type": kind, "message": message}}
        )
        if isinstance(exc, StoreUnavailableError):
            await _give_back(_runtime(), thread_id, exc)
        raise
    await DBOS.set_event_async(key, response)
    return response


async def _give_back(runtime: _Runtime, thread_id: str, why: StoreUnavailableError) -> None:
    """After a run gave up on an unreachable database: once the store answers (within another window),
    leave the thread as a run that stopped (``ThreadState.stopped``), with no lease and no item
    ``in_progress`` (back to ``pending``: a step that did not finish is run again from its start
    either way), for ``Producer.recover`` to continue. Only a lease of this process's own ended run is taken
    back; a thread another run holds by now is left alone. When the store stays down, the lease goes stale by
    itself and ``recover`` still continues the run."""
    store = runtime.store

    async def settle() -> None:
        state, version = await store.load(thread_id)
        if state is None or (state.lease is not None and not _ended_here(state.lease)):
            return
        state.lease = None
        state.stopped = f"the database was unreachable for {round(why.unreachable_s or 0, 1):g} s"
        for item in state.todo_list:
            if item.status is ItemStatus.IN_PROGRESS:
                item.status = ItemStatus.PENDING
        with contextlib.suppress(VersionConflictError):  # another run took the thread: its state stands
            await store.save(thread_id, state, version)

    new_outage_scope()
    try:
        await ride_out(settle, runtime.store_outage_s, what=describe_store(store))
    except StoreUnavailableError:
        logger.warning("thread %r: the store stayed unreachable; its lease goes stale by itself", thread_id)


def _ended_here(lease: Lease) -> bool:
    return lease.owner == lease_owner() and is_stale(lease, now=time.time(), timeout_s=float("inf"))


async def _first(art: ArtInstance, job: dict[str, Any], carried: list[str]) -> dict[str, Any]:
    """The job's first response: its run's, or, for a resume job whose decision was refused, the
    response of the workflow that took that decision first (its id appended to ``carried``)."""
    thread_id, user_id = str(job["thread_id"]), job.get("user_id")
    if job["kind"] == "recover":  # a run that stopped (an outage): on from its first unfinished item
        return await _outcome(art, thread_id, user_id, await _recovery(art, job))
    if job["kind"] != "resume":
        return await _outcome(
            art,
            thread_id,
            user_id,
            partial(
                art.process,
                job["query"],
                thread_id=thread_id,
                trace_id=job.get("trace_id"),
                user_id=user_id,
                options=job.get("options"),
            ),
        )
    response = await _outcome(art, thread_id, user_id, partial(_decide, art, thread_id, job))
    carrier = await _carrier(job) if "refused" in response else None
    if carrier is None:
        return response
    carried.append(carrier)
    await DBOS.set_event_async(CARRIED_BY, carrier)
    suspension_id = str(job["suspension_id"])
    answer = await DBOS.get_event_async(carrier, response_key(suspension_id), timeout_seconds=ATTACH_WAIT_S)
    if answer is None:
        message = (
            f"workflow {carrier!r} took the decision on {suspension_id!r} but has not answered; ask it later"
        )
        return {"thread_id": thread_id, "refused": {"type": "PesAgentError", "message": message}}
    return dict(answer)


async def _recovery(art: ArtInstance, job: dict[str, Any]) -> Callable[[], Awaitable[AgentFinalResponse]]:
    """How a ``recover`` job continues the thread. A stopped ``process`` run whose query is not the
    stored one never saved its plan (the query is stored with it): nothing of it is in the store but,
    perhaps, its user message, so it runs again as it was, under its own trace (a history message of
    that trace is not appended twice). Otherwise the thread's run goes on from its journal
    (``ArtInstance.resume`` without a suspension). A thread whose run was asked again with the same
    words as its previous one is taken as planned: the agent's recovery then refuses an empty plan."""
    thread_id, user_id, stopped = str(job["thread_id"]), job.get("user_id"), job.get("stopped")
    if stopped is not None:
        state, _ = await art.store.load(thread_id)
        if state is None or state.query != stopped.get("query"):
            return partial(
                art.process,
                stopped["query"],
                thread_id=thread_id,
                trace_id=stopped.get("trace_id"),
                user_id=stopped.get("user_id"),
                options=stopped.get("options"),
            )
    return partial(art.resume, thread_id, user_id=user_id, ended_trace=job.get("ended_trace"))


async def _carrier(job: dict[str, Any]) -> str | None:
    """The workflow among those the producer sent this job's decision to that took it (acked its
    decision id), if any: the store refused the job because that workflow applied it."""
    decision_id = job.get("decision_id")
    for waiting in job.get("sent_to") or ():
        took = await DBOS.get_event_async(waiting, ack_key(str(job["suspension_id"])), timeout_seconds=0)
        if decision_id is not None and took == decision_id:
            return str(waiting)
    return None


async def _decide(art: ArtInstance, thread_id: str, message: dict[str, Any]) -> AgentFinalResponse:
    return await art.resume(
        thread_id,
        str(message["suspension_id"]),
        message.get("decision") or {},
        user_id=message.get("user_id"),
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
    except StoreUnavailableError:
        raise  # the database stayed unreachable past `workers.storeOutageS`: a failure, not a refusal
    except PesAgentError as exc:
        return {"thread_id": thread_id, "refused": {"type": type(exc).__name__, "message": str(exc)}}
