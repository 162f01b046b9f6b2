"""Planning: one model call over the tool manifesto, turned into a validated todo list."""

from __future__ import annotations

from collections.abc import Sequence

from pes_agent.agent.context import PhaseFailure, RunContext
from pes_agent.agent.plan_items import plan_event_data, todo_from_plan
from pes_agent.agent.plan_update import apply_plan_update
from pes_agent.agent.views import results_before
from pes_agent.errors import ParseError
from pes_agent.events import EventType
from pes_agent.llm.guided import parse_guided_plan
from pes_agent.llm.parser import parse_plan
from pes_agent.llm.replies import ParsedPlan, ParseWarning
from pes_agent.prompts.grounding import query_parts
from pes_agent.prompts.guided import build_guided_planning
from pes_agent.prompts.planning import build_planning
from pes_agent.prompts.refinement import build_refinement
from pes_agent.prompts.views import HistoryTurn


async def emit_warnings(ctx: RunContext, warnings: Sequence[ParseWarning], step_id: str | None = None) -> None:
    for warning in warnings:
        await ctx.emit(
            EventType.PARSE_WARNING, {"code": warning.code, "detail": warning.detail}, step_id=step_id
        )


async def run_planning(ctx: RunContext, history: Sequence[HistoryTurn]) -> ParsedPlan:
    manifesto = ctx.registry.manifesto_lines(ctx.enabled_tools)
    if ctx.guided:
        parts = query_parts(ctx.query)
        specs = [s for n in ctx.enabled_tools if (s := ctx.registry.get(n)) is not None]
        request = build_guided_planning(
            ctx.query, parts, manifesto, {s.name: s.summary for s in specs}, ctx.settings,
            schemas={s.name: s.input_schema for s in specs},
        )
    else:
        request = build_planning(
            ctx.query, "\n".join(manifesto), ctx.settings, history=history, tool_names=ctx.enabled_tools
        )
    reply = await ctx.call_model(request)
    try:
        if ctx.guided:
            parsed = parse_guided_plan(reply.text, parts, ctx.enabled_tools)
        else:
            parsed = parse_plan(reply.text)
    except ParseError as exc:
        raise PhaseFailure("unparseable_plan", "planning", f"the planning reply held no usable plan: {exc}") from exc
    await emit_warnings(ctx, parsed.warnings)
    now = ctx.clock()
    ctx.state.title = parsed.title
    ctx.state.intent = parsed.intent
    ctx.state.plan = parsed.plan
    ctx.state.todo_list = [
        todo_from_plan(p, validation_mode=ctx.limits.validation_mode, now=now) for p in parsed.items
    ]
    ctx.state.current_step_id = None
    await ctx.save()
    await ctx.emit(EventType.PLAN, {**plan_event_data(ctx), "raw": reply.text})
    return parsed


async def run_refinement(ctx: RunContext, history: Sequence[HistoryTurn]) -> None:
    """A follow-up on a thread with a plan: revise it, merged by id (completed items keep their
    status and results), with a PLAN_UPDATE event carrying the diff."""
    request = build_refinement(
        ctx.query,
        intent=ctx.state.intent,
        steps=results_before(ctx.state),
        manifesto="\n".join(ctx.registry.manifesto_lines(ctx.enabled_tools)),
        settings=ctx.settings,
        history=history,
        tool_names=ctx.enabled_tools,
    )
    reply = await ctx.call_model(request)
    try:
        parsed = parse_plan(reply.text)
    except ParseError as exc:
        raise PhaseFailure("unparseable_plan", "refinement", f"the refinement reply held no usable plan: {exc}") from exc
    await emit_warnings(ctx, parsed.warnings)
    await apply_plan_update(ctx, parsed, current_id=None)
