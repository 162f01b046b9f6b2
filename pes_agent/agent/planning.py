"""Planning: one model call over the tool manifesto, turned into a validated todo list."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pes_agent.agent.context import PhaseFailure, RunContext
from pes_agent.agent.plan_items import plan_event_data, todo_from_plan
from pes_agent.agent.plan_update import apply_plan_update
from pes_agent.agent.tool_offer import (
    ToolOffer,
    choose_tools,
    every_tool,
    preview_offer,
    search_texts,
    unindexed,
    widen,
)
from pes_agent.agent.views import results_before
from pes_agent.config import RetrievalConfig
from pes_agent.errors import ParseError
from pes_agent.events import EventType
from pes_agent.guided.consumers import needed_consumers
from pes_agent.guided.parts import query_parts
from pes_agent.guided.producers import needed_producers
from pes_agent.llm.parser import parse_plan
from pes_agent.llm.plans import find_tools_request
from pes_agent.llm.replies import ParsedPlan, ParseWarning
from pes_agent.llm.types import LLMReply, PromptRequest
from pes_agent.prompts.planning import build_planning, chosen_manifesto
from pes_agent.prompts.refinement import build_refinement
from pes_agent.prompts.views import HistoryTurn, PromptSettings
from pes_agent.tools.finder import ToolFinder
from pes_agent.tools.index import hit_names
from pes_agent.tools.registry import ToolRegistry


async def emit_warnings(
    ctx: RunContext, warnings: Sequence[ParseWarning], step_id: str | None = None
) -> None:
    for warning in warnings:
        await ctx.emit(
            EventType.PARSE_WARNING, {"code": warning.code, "detail": warning.detail}, step_id=step_id
        )


async def offer_tools(
    ctx: RunContext, *, guided: bool, parts: Sequence[str] | None = None, keep: Sequence[str] = ()
) -> ToolOffer:
    """The tools the planner is shown for this run, each part of the query searched on its own. A
    ``TOOLS_OFFERED`` event tells when that is not simply every tool: chosen by retrieval (with
    scores), or all for want of the extra. ``guided``: the offer of guided planning, whose small
    model chooses a tool per part among a few candidates each (``choose_tools``); else the fair
    merge of the parts' rankings a free-form planner is shown. Guided planning is also offered the
    producers of the ids its offered tools require (``producers``): it plans by data flow.
    ``parts``: the query's parts when the caller has split it already (``query_parts``), else split
    here."""
    offer = every_tool(ctx.enabled_tools, ctx.retrieval, ctx.finder)
    if offer is None:
        assert ctx.finder is not None  # every_tool offers all without one
        parts = query_parts(ctx.query) if parts is None else parts
        searcher = await ctx.finder.searcher(search_texts(ctx.query, parts, guided=guided))
        if searcher is None:  # the index could not be built after all
            offer = unindexed(ctx.enabled_tools, ctx.finder)
        else:
            offer = choose_tools(
                ctx.query, ctx.enabled_tools, ctx.retrieval, searcher, parts=parts, guided=guided, keep=keep
            )
            if guided:  # the lookups its tools need, and the tools taking what the request wants
                # its results sent to or turned into ("in US dollars"), which no word of it names
                offer = offer.with_producers(
                    needed_producers(offer.names, ctx.enabled_tools, ctx.registry, ctx.query)
                )
                offer = offer.with_producers(
                    needed_consumers(offer.names, ctx.enabled_tools, ctx.registry, ctx.query)
                )
    if offer.mode != "all":
        await ctx.emit(EventType.TOOLS_OFFERED, offer.event_data(ctx.retrieval.k))
    return offer


def tools_text(registry: ToolRegistry, offer: ToolOffer, *, find_tools: bool) -> str:
    """The ``$tools`` text: every line as before, or the chosen ones (and those named only) with a
    note saying so."""
    lines = registry.manifesto_lines(offer.names)
    if not offer.retrieved:
        return "\n".join(lines)
    named = hit_names(offer.named)
    return chosen_manifesto(lines, total=offer.total, find_tools=find_tools, named=named)


def first_planning_request(
    query: str,
    enabled: Sequence[str],
    registry: ToolRegistry,
    settings: PromptSettings,
    retrieval: RetrievalConfig,
    finder: ToolFinder | None,
) -> PromptRequest:
    """The first planning prompt a run would send (what `pes-agent prompts` shows), tools chosen as
    a run chooses them: by words and the built-in meaning table, by words alone when the run would ask
    an embeddings endpoint (a preview sends no request)."""
    offer = every_tool(enabled, retrieval, finder)
    if offer is None:
        assert finder is not None  # every_tool offers all without one
        offer = preview_offer(query, enabled, retrieval, finder)
    find = offer.searchable and retrieval.find_tools_calls > 0
    return build_planning(
        query,
        tools_text(registry, offer, find_tools=find),
        settings,
        tool_names=offer.plannable,
        find_tools=find,
    )


async def run_planning(ctx: RunContext, history: Sequence[HistoryTurn]) -> ParsedPlan:
    """The plan, asked of the run's strategy, made the thread's todo list."""
    parsed, raw = await ctx.strategy.plan(ctx, history)
    await emit_warnings(ctx, parsed.warnings)
    now = ctx.clock()
    ctx.state.title = parsed.title
    ctx.state.intent = parsed.intent
    ctx.state.plan = parsed.plan
    ctx.state.unplanned = list(parsed.unplanned)
    ctx.state.todo_list = [
        todo_from_plan(p, validation_mode=ctx.limits.validation_mode, now=now) for p in parsed.items
    ]
    ctx.state.current_step_id = None
    await ctx.save()
    await ctx.emit(EventType.PLAN, {**plan_event_data(ctx), "raw": raw})
    return parsed


async def free_form_plan(ctx: RunContext, history: Sequence[HistoryTurn]) -> tuple[ParsedPlan, str]:
    """The model writes the plan over the tool manifesto (``findTools`` as it asks)."""
    reply = await _plan_with_finds(ctx, history, await offer_tools(ctx, guided=False))
    return unparseable_as_failure(parse_plan, reply.text), reply.text


def unparseable_as_failure(parse: Callable[[str], ParsedPlan], text: str) -> ParsedPlan:
    """A plan reply that holds no plan ends the run as ``unparseable_plan``."""
    try:
        return parse(text)
    except ParseError as exc:
        raise PhaseFailure(
            "unparseable_plan", "planning", f"the planning reply held no usable plan: {exc}"
        ) from exc


async def _plan_with_finds(ctx: RunContext, history: Sequence[HistoryTurn], offer: ToolOffer) -> LLMReply:
    """Ask for the plan; while the planner may and does reply ``findTools``, show it the tools found
    for its words (a ``TOOLS_OFFERED`` event each time) and ask again. The last ask offers no search,
    so the planner has to plan with what it has."""
    finds_left = ctx.retrieval.find_tools_calls if offer.searchable else 0
    while True:
        request = build_planning(
            ctx.query,
            tools_text(ctx.registry, offer, find_tools=finds_left > 0),
            ctx.settings,
            history=history,
            tool_names=offer.plannable,
            find_tools=finds_left > 0,
        )
        reply = await ctx.call_model(request)
        phrases = find_tools_request(reply.text) if finds_left > 0 else ()
        if not phrases or ctx.finder is None:
            return reply
        finds_left -= 1
        searcher = await ctx.finder.searcher(phrases)
        if searcher is not None:  # None: the index is gone (its extra broke); ask again, adding nothing
            offer, added = widen(offer, phrases, ctx.enabled_tools, ctx.retrieval, searcher)
            await ctx.emit(EventType.TOOLS_OFFERED, offer.event_data(ctx.retrieval.k, added=added))
            finds_left = finds_left if offer.searchable else 0  # every tool is shown now


async def run_refinement(ctx: RunContext, history: Sequence[HistoryTurn]) -> None:
    """A follow-up on a thread with a plan: revise it, merged by id (completed items keep their
    status and results), with a PLAN_UPDATE event carrying the diff."""
    in_plan = [t for item in ctx.state.todo_list for t in item.required_tools]
    offer = await offer_tools(ctx, guided=False, keep=in_plan)
    request = build_refinement(
        ctx.query,
        intent=ctx.state.intent,
        steps=results_before(ctx.state),
        manifesto=tools_text(ctx.registry, offer, find_tools=False),
        settings=ctx.settings,
        history=history,
        tool_names=offer.plannable,
    )
    reply = await ctx.call_model(request)
    try:
        parsed = parse_plan(reply.text)
    except ParseError as exc:
        raise PhaseFailure(
            "unparseable_plan", "refinement", f"the refinement reply held no usable plan: {exc}"
        ) from exc
    await emit_warnings(ctx, parsed.warnings)
    await apply_plan_update(ctx, parsed, current_id=None)
