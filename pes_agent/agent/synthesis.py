"""Synthesis: the answer, written from the items' results, clean of reply markers."""

from __future__ import annotations

from collections.abc import Sequence

from pes_agent.agent.context import PhaseFailure, RunContext
from pes_agent.guided.answer import findings, plain_statement, unstated
from pes_agent.agent.views import results_before
from pes_agent.events import EventType
from pes_agent.llm.parser import parse_answer
from pes_agent.llm.replies import ParsedAnswer
from pes_agent.guided.prompts import build_guided_synthesis
from pes_agent.prompts.synthesis import build_synthesis
from pes_agent.prompts.views import HistoryTurn


async def run_synthesis(ctx: RunContext, history: Sequence[HistoryTurn], *, status: str) -> ParsedAnswer:
    if ctx.guided:
        return await _guided_synthesis(ctx, status=status)
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
    return await _announce(ctx, answer, status)


async def _guided_synthesis(ctx: RunContext, *, status: str) -> ParsedAnswer:
    """A short answer from the findings; replaced by the plain findings when it misses one."""
    found = findings(ctx.state.todo_list)
    request = build_guided_synthesis(ctx.query, [(f.description, f.text) for f in found], ctx.settings)
    reply = await ctx.call_model(request)
    answer = parse_answer(reply.text)
    missed = unstated(answer.response, found)
    if found and (missed or not answer.response.strip()):
        metadata = {
            **(answer.ui_metadata or {}),
            "answer_source": "step_outputs",
            "model_answer": answer.response,
            "unstated_steps": [f.step_id for f in missed],
        }
        answer = ParsedAnswer(response=plain_statement(found), ui_metadata=metadata, thinking=answer.thinking)
    if not answer.response.strip():
        raise PhaseFailure("empty_answer", "synthesis", "the synthesis reply held no answer text")
    return await _announce(ctx, answer, status)


async def _announce(ctx: RunContext, answer: ParsedAnswer, status: str) -> ParsedAnswer:
    await ctx.emit(
        EventType.SYNTHESIS,
        {"response": answer.response, "status": status, "ui_metadata": answer.ui_metadata},
    )
    return answer
