"""Synthesis: the answer, written from the items' results, clean of reply markers."""

from __future__ import annotations

from collections.abc import Sequence

from pes_agent.agent.context import PhaseFailure, RunContext
from pes_agent.agent.views import results_before
from pes_agent.events import EventType
from pes_agent.guided.answer import findings, not_found, plain_statement, ungrounded, unstated
from pes_agent.guided.prompts import build_guided_synthesis
from pes_agent.llm.parser import parse_answer
from pes_agent.llm.replies import ParsedAnswer
from pes_agent.prompts.synthesis import build_synthesis
from pes_agent.prompts.views import HistoryTurn
from pes_agent.state.models import ItemStatus


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
    """A short answer from the findings; replaced by the plain findings when it misses one or
    states a number nothing found, and by what was not found when there are no findings and the
    answer states anything the run did not find."""
    items = ctx.state.todo_list
    found = findings(items)
    request = build_guided_synthesis(ctx.query, [(f.description, f.text) for f in found], ctx.settings)
    reply = await ctx.call_model(request)
    answer = parse_answer(reply.text)
    missed = unstated(answer.response, found)
    invented = ungrounded(answer.response, ctx.query, items)
    empty = not answer.response.strip()
    failed = any(it.is_tool_step and it.status is not ItemStatus.COMPLETED for it in items) or ctx.state.unplanned
    if (found and (missed or invented or empty)) or (not found and (invented or empty or failed)):
        metadata = {
            **(answer.ui_metadata or {}),
            "answer_source": "step_outputs",
            "model_answer": answer.response,
            "unstated_steps": [f.step_id for f in missed],
            "ungrounded_values": invented,
        }
        if not found:
            text = not_found(items, ctx.state.unplanned)
        elif failed:
            text = "\n".join([plain_statement(found), not_found(items, ctx.state.unplanned)])
        else:
            text = plain_statement(found)
        answer = ParsedAnswer(response=text, ui_metadata=metadata, thinking=answer.thinking)
    if ctx.state.unplanned:
        answer = ParsedAnswer(
            response=answer.response,
            ui_metadata={**(answer.ui_metadata or {}), "unplanned_parts": list(ctx.state.unplanned)},
            thinking=answer.thinking,
        )
    if not answer.response.strip():
        raise PhaseFailure("empty_answer", "synthesis", "the synthesis reply held no answer text")
    return await _announce(ctx, answer, status)


async def _announce(ctx: RunContext, answer: ParsedAnswer, status: str) -> ParsedAnswer:
    await ctx.emit(
        EventType.SYNTHESIS,
        {"response": answer.response, "status": status, "ui_metadata": answer.ui_metadata},
    )
    return answer
