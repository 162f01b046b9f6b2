"""Recovering a run that died (``ArtInstance.resume`` without a suspension id): whether the thread has
one to take over, and continuing it without repeating what it did.

A run died when its items are unfinished, when it was stopped (a worker gave up on the database), or
when it still holds the thread's lease though nobody runs under it: the lease went stale, or its run
is known to have ended (``ended_trace``: a worker reported it failed, so its lease is taken over at
once rather than after ``concurrency.leaseTimeoutS``). A run that wrote its answer and then lost the
database before it could say so is finished with that recorded answer, never answered twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pes_agent.agent.context import RunContext
from pes_agent.agent.lease import is_stale, save_and_release
from pes_agent.agent.pauses import pause_unknown_outcome
from pes_agent.agent.pes import RUNNABLE, paused_response, respond, run_pes, run_status
from pes_agent.agent.response import AgentFinalResponse
from pes_agent.errors import InvalidInputError, ThreadSuspendedError
from pes_agent.events import EventType
from pes_agent.prompts.views import HistoryTurn
from pes_agent.state.models import ThreadState
from pes_agent.state.store import StateStore


async def trace_to_recover(
    store: StateStore,
    thread_id: str,
    state: ThreadState,
    *,
    ended_trace: str | None,
    clock: Callable[[], float],
    lease_timeout_s: float,
) -> str | None:
    """The trace of the run to take over (the lease holder's, else ``ended_trace``), once the thread
    is found to have one: `ThreadSuspendedError` for a paused thread (it waits for a decision),
    `InvalidInputError` when there is nothing to recover or the run died before its plan was saved."""
    if state.suspension is not None:
        raise ThreadSuspendedError(thread_id, state.suspension.id, state.suspension.tool_name)
    unfinished = any(it.status in RUNNABLE for it in state.todo_list)
    # Also a run cut off before its answer was written: stopped (a worker gave up on the
    # database), or dead still holding the thread (its lease went stale, or its run is known to
    # have ended: a worker that gave up with every item done could not write `stopped` either).
    cut_off = state.stopped is not None or (
        state.lease is not None
        and (
            state.lease.trace_id == ended_trace
            or is_stale(state.lease, now=clock(), timeout_s=lease_timeout_s)
        )
    )
    # A run that wrote its answer and then lost the database before it could say so (its last
    # save may even have committed): recover gives that answer back rather than refuse.
    if not unfinished and not cut_off and await recorded_answer(store, thread_id, ended_trace) is None:
        raise InvalidInputError(
            f"thread {thread_id!r} has no unfinished run to resume; send a new query with `process`"
        )
    if not state.todo_list:
        raise InvalidInputError(
            f"thread {thread_id!r}: its last run stopped before its plan was saved; send its query again "
            "with `process`"
        )
    return state.lease.trace_id if state.lease is not None else ended_trace


async def recover_run(
    ctx: RunContext, history: Sequence[HistoryTurn], *, previous_trace: str | None = None
) -> AgentFinalResponse:
    """Continue a run that died: from the first unfinished item, never re-running a finished call.

    A call journalled as started but never finished may or may not have taken effect. An idempotent
    tool is simply called again if the model asks; any other pauses the run for a person to decide
    (approve: run it again; reject: go on without it). A run that died after writing its answer
    (``previous_trace``, the run that held the thread, wrote the last message), as one whose
    database went away between the answer and the state's last save does, is finished with that
    answer: not answered twice.
    """
    if not any(it.status in RUNNABLE for it in ctx.state.todo_list):
        answer = await recorded_answer(ctx.store, ctx.thread_id, previous_trace)
        if answer is not None:
            return await _finish_recorded(ctx, answer)
    for entry in await ctx.store.calls(ctx.thread_id):
        item = ctx.state.item(entry.item_id)
        spec = ctx.registry.get(entry.tool_name)
        if entry.finished or item is None or item.status not in RUNNABLE or (spec and spec.idempotent):
            continue
        if any(r.call_id == entry.call_id for r in item.tool_results):
            continue
        await pause_unknown_outcome(ctx, item, entry.call_id, entry.tool_name, entry.arguments)
        return paused_response(ctx)
    return await run_pes(ctx, history, plan=False)


async def recorded_answer(store: StateStore, thread_id: str, trace_id: str | None) -> str | None:
    """The answer run ``trace_id`` wrote, when it is the thread's last message."""
    if trace_id is None:
        return None
    last = await store.messages(thread_id, limit=1)
    if last and last[-1].role == "assistant" and last[-1].trace_id == trace_id:
        return last[-1].content
    return None


async def _finish_recorded(ctx: RunContext, text: str) -> AgentFinalResponse:
    status = run_status(ctx.state.todo_list, ctx.state.unplanned, ctx.strategy.unmet(ctx))
    await save_and_release(ctx)
    await ctx.emit(EventType.FINAL_RESPONSE, {"response": text, "status": status, "ui_metadata": None})
    return respond(ctx, text, status)
