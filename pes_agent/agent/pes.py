"""The Plan-Execute-Synthesize run: the order of phases and how a run ends.

Every way a run can end produces an ``AgentFinalResponse``; only misuse raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from pes_agent.agent.context import PhaseFailure, RunContext
from pes_agent.agent.execution import ItemOutcome, run_item
from pes_agent.agent.lease import save_and_release
from pes_agent.agent.planning import run_planning, run_refinement
from pes_agent.agent.response import AgentFinalResponse, RunErrorInfo, RunStatus
from pes_agent.agent.resume import Resumption, resume_item
from pes_agent.agent.synthesis import run_synthesis
from pes_agent.errors import RunError, VersionConflictError
from pes_agent.events import EventType
from pes_agent.observability import Span
from pes_agent.prompts.views import HistoryTurn
from pes_agent.state.models import HistoryMessage, ItemStatus, Suspension, TodoItem

RUNNABLE = (ItemStatus.PENDING, ItemStatus.IN_PROGRESS)
"""The statuses of an item a run (or a recovery) still has to work on."""


def next_ready(items: Sequence[TodoItem]) -> TodoItem | None:
    """The first unfinished item whose dependencies have all completed."""
    done = {it.id for it in items if it.status is ItemStatus.COMPLETED}
    for item in items:
        if item.status in RUNNABLE and all(dep in done for dep in item.dependencies):
            return item
    return None


def run_status(
    items: Sequence[TodoItem], unplanned: Sequence[str] = (), unmet: Sequence[str] = ()
) -> RunStatus:
    """``success`` only when every item completed, every tool step ran its required tools (a step
    closed without them, under advisory validation, is work not done), no part of the request
    that asks something was left without a step (``unplanned``) and the calls left nothing of the
    request undone (``unmet``, the strategy's reading)."""
    done = all(it.status is ItemStatus.COMPLETED for it in items)
    skipped = any(it.is_tool_step and it.validation_status == "failed" for it in items)
    return "success" if done and not skipped and not unplanned and not unmet else "partial"


async def execute_items(ctx: RunContext) -> ItemOutcome:
    ctx.phase = "execution"
    for _ in range(ctx.limits.max_items_per_run):
        item = next_ready(ctx.state.todo_list)
        if item is None:
            break
        with phase_span(ctx, "execution", item.id):
            outcome = await run_item(ctx, item)
        if outcome is not ItemOutcome.DONE:
            return outcome
    ctx.state.current_step_id = None
    return ItemOutcome.DONE


async def run_pes(
    ctx: RunContext,
    history: Sequence[HistoryTurn],
    *,
    plan: bool,
    resume: Resumption | None = None,
) -> AgentFinalResponse:
    attributes = {"thread_id": ctx.thread_id, "trace_id": ctx.trace_id, "resume": resume is not None}
    with ctx.tracer.span("run", "invoke_agent pes-agent", attributes) as span:
        response = await _run_phases(ctx, history, plan=plan, resume=resume)
        for key, value in _run_totals(response).items():
            span.set_attribute(key, value)
        return response


def phase_span(ctx: RunContext, phase: str, step_id: str | None = None) -> AbstractContextManager[Span]:
    """Enter a phase: ``ctx.phase`` for error reports, and a ``phase`` span for tracers."""
    ctx.phase = phase
    name = f"execute_step {step_id}" if step_id is not None else phase
    return ctx.tracer.span("phase", name, {"phase": phase, "step_id": step_id})


def _run_totals(response: AgentFinalResponse) -> dict[str, Any]:
    """What the run span ends with; ``status`` last, so a tracer sees the error code first."""
    usage = response.usage
    totals: dict[str, Any] = {
        "usage.llm_calls": usage.llm_calls,
        "usage.prompt_tokens": usage.prompt_tokens,
        "usage.completion_tokens": usage.completion_tokens,
        "usage.tool_calls": usage.tool_calls,
    }
    if response.error is not None:
        totals["error_code"] = response.error.code
    totals["status"] = response.status
    return totals


async def _run_phases(
    ctx: RunContext,
    history: Sequence[HistoryTurn],
    *,
    plan: bool,
    resume: Resumption | None,
) -> AgentFinalResponse:
    try:
        if plan:  # a new request: what it should know of the setup comes first
            for notice in ctx.notices:
                data = {"code": notice.code, "provider": notice.provider, "message": notice.message}
                await ctx.emit(EventType.NOTICE, data)
        if plan and ctx.state.todo_list:
            with phase_span(ctx, "refinement"):
                await run_refinement(ctx, history)
        elif plan:
            with phase_span(ctx, "planning"):
                await run_planning(ctx, history)
        outcome = ItemOutcome.DONE
        if resume is not None:
            with phase_span(ctx, "execution", resume.suspension.item_id):
                outcome = await resume_item(ctx, resume)
        if outcome is ItemOutcome.DONE:
            outcome = await execute_items(ctx)
        if outcome is not ItemOutcome.DONE:
            await save_and_release(ctx)
            return paused_response(ctx)
        status = run_status(ctx.state.todo_list, ctx.state.unplanned, ctx.strategy.unmet(ctx))
        with phase_span(ctx, "synthesis"):
            answer = await run_synthesis(ctx, history, status=status)
    except PhaseFailure as failure:
        return await error_response(ctx, failure.code, failure.phase, str(failure))
    except VersionConflictError as exc:
        return await error_response(ctx, "state_conflict", ctx.phase, str(exc))
    except RunError as exc:
        return await error_response(ctx, exc.code, ctx.phase, str(exc))
    await remember(ctx, "assistant", answer.response)  # before the lease goes: history stays in order
    await save_and_release(ctx)
    await ctx.emit(
        EventType.FINAL_RESPONSE,
        {"response": answer.response, "status": status, "ui_metadata": answer.ui_metadata},
    )
    return respond(ctx, answer.response, status, ui_metadata=answer.ui_metadata)


async def remember(ctx: RunContext, role: str, content: str) -> None:
    message = HistoryMessage(
        role="user" if role == "user" else "assistant",
        content=content,
        trace_id=ctx.trace_id,
        timestamp=ctx.clock(),
    )
    await ctx.store.append_message(ctx.thread_id, message)


def respond(ctx: RunContext, text: str, status: RunStatus, **extra: object) -> AgentFinalResponse:
    return AgentFinalResponse(
        response=text,
        status=status,
        thread_id=ctx.thread_id,
        trace_id=ctx.trace_id,
        # The run is over and its state object is never touched again: handed over, not copied.
        todo_list=list(ctx.state.todo_list),
        usage=ctx.usage,
        **extra,  # type: ignore[arg-type]
    )


def paused_response(ctx: RunContext) -> AgentFinalResponse:
    """`suspended` for an approval, `needs_input` (with a plain-words clarification) for values."""
    susp = ctx.state.suspension
    assert susp is not None
    info = suspension_info(susp)
    if susp.kind == "approval":
        return respond(ctx, susp.message, "suspended", suspension=info)
    clarification = {
        "text": susp.message,
        "fields": [
            {"tool": f["tool"], "name": f["name"], "description": f.get("description")} for f in susp.fields
        ],
    }
    return respond(ctx, susp.message, "needs_input", suspension=info, clarification=clarification)


def suspension_info(susp: Suspension) -> dict[str, Any]:
    return {
        "id": susp.id,
        "kind": susp.kind,
        "tool": susp.tool_name,
        "call_id": susp.call_id,
        "step_id": susp.item_id,
        "message": susp.message,
        "fields": list(susp.fields),
    }


async def error_response(ctx: RunContext, code: str, phase: str, message: str) -> AgentFinalResponse:
    for item in ctx.state.todo_list:
        if item.status is ItemStatus.IN_PROGRESS:
            item.status = ItemStatus.FAILED
            item.error = message
    try:
        await save_and_release(ctx)
    except VersionConflictError:
        pass  # another writer owns the thread now; its state stands, ours is reported below.
    await ctx.emit(EventType.ERROR, {"code": code, "phase": phase, "message": message})
    text = f"The request could not be completed ({phase} failed): {message}"
    return respond(ctx, text, "error", error=RunErrorInfo(code=code, phase=phase, message=message))
