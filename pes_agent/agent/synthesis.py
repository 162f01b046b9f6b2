"""Synthesis: the answer, written from the items' results, clean of reply markers."""

from __future__ import annotations

from collections.abc import Sequence

from pes_agent.agent.context import PhaseFailure, RunContext
from pes_agent.agent.views import results_before
from pes_agent.events import EventType
from pes_agent.llm.parser import parse_answer
from pes_agent.llm.replies import ParsedAnswer
from pes_agent.prompts.synthesis import build_synthesis
from pes_agent.prompts.views import HistoryTurn


async def run_synthesis(ctx: RunContext, history: Sequence[HistoryTurn], *, status: str) -> ParsedAnswer:
    """The answer, asked of the run's strategy, announced as a SYNTHESIS event."""
    return await announce(ctx, await ctx.strategy.answer(ctx, history, status=status), status)


async def free_form_answer(ctx: RunContext, history: Sequence[HistoryTurn]) -> ParsedAnswer:
    """The model writes the answer from the items' results."""
    request = build_synthesis(
        ctx.query,
        results_before(ctx.state),
        ctx.settings,
        max_result_length=ctx.limits.tool_result_max_length,
        history=history,
    )
    reply = await ctx.call_model(request)
    answer = parse_answer(reply.text)
    if answer.thinking:
        await ctx.emit(EventType.THOUGHTS, {"phase": "synthesis", "text": answer.thinking})
    if not answer.response.strip():
        raise PhaseFailure("empty_answer", "synthesis", "the synthesis reply held no answer text")
    return answer


async def announce(ctx: RunContext, answer: ParsedAnswer, status: str) -> ParsedAnswer:
    await ctx.emit(
        EventType.SYNTHESIS,
        {"response": answer.response, "status": status, "ui_metadata": answer.ui_metadata},
    )
    return answer
