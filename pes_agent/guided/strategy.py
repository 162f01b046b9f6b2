"""The guided strategy: every decision of a run is a choice among grounded options.

Planning lists the request's parts and asks for one tool per part, the steps a part implies added by
data flow (``dataflow``); a tool step asks for one tool's arguments, each among values the request or
earlier results hold (``step``); the answer is one short sentence, replaced by the plain findings when
it misses one or states what nothing found (``answer``). See ``pes_agent.agent.strategy``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial

from pes_agent.agent.context import PhaseFailure, RunContext
from pes_agent.agent.execution import ItemOutcome, free_form_turn, handle_calls
from pes_agent.agent.item_loop import ItemLoop
from pes_agent.agent.planning import emit_warnings, offer_tools, unparseable_as_failure
from pes_agent.guided.accounting import doubled_argument, unmet
from pes_agent.guided.answer import findings, not_found, plain_statement, ungrounded, unstated
from pes_agent.guided.coordinated import split_lists
from pes_agent.guided.dataflow import ToolShape
from pes_agent.guided.parts import action_words, joined_unserved, query_parts
from pes_agent.guided.prompts import NO_TOOL, build_guided_planning, build_guided_synthesis
from pes_agent.guided.replies import forced_arguments, parse_guided_call, parse_guided_plan
from pes_agent.guided.step import guided_request, remember_turn, target_tool
from pes_agent.llm.parser import parse_answer
from pes_agent.llm.replies import ParsedAnswer, ParsedPlan
from pes_agent.llm.types import Message
from pes_agent.prompts.execution import truncated_text
from pes_agent.prompts.views import HistoryTurn
from pes_agent.state.models import ItemStatus
from pes_agent.tools.spec import ToolResult

__all__ = ["GUIDED", "Guided"]


class Guided:
    closes_steps = True
    """A tool step whose calls all succeeded ends with its tool output: no closing model turn, and
    the step's result is the output itself rather than a tiny model's summary of it."""

    async def plan(self, ctx: RunContext, history: Sequence[HistoryTurn]) -> tuple[ParsedPlan, str]:
        """One tool (or none) per part of the request, among those its words and values point to."""
        described = {n: s.summary for n in ctx.enabled_tools if (s := ctx.registry.get(n)) is not None}
        parts = split_lists(query_parts(ctx.query, action_words(described.values())), described)
        offer = await offer_tools(ctx, guided=True, parts=parts)
        specs = [s for n in offer.names if (s := ctx.registry.get(n)) is not None]
        ctx.offered = tuple(s.name for s in specs)
        build = partial(
            build_guided_planning,
            ctx.query,
            manifesto=ctx.registry.manifesto_lines(offer.names),
            tools={s.name: s.summary for s in specs},
            settings=ctx.settings,
            schemas={s.name: s.input_schema for s in specs},
            outputs={s.name: s.output_schema for s in specs if s.output_schema is not None},
        )
        request = build(parts=parts)
        offered = (request.response_schema or {}).get("properties") or {}
        served = [offered.get(p, {}).get("enum") != [NO_TOOL] for p in parts]
        if (joined := joined_unserved(parts, served)) != parts:  # an object named, then acted on
            parts, request = joined, build(parts=joined)
        forced = forced_arguments(request.response_schema)  # one tool (or none) offered per part
        text = json.dumps(forced) if forced is not None else (await ctx.call_model(request)).text
        shapes = {
            s.name: ToolShape(
                name=s.name, input_schema=s.input_schema, output_schema=s.output_schema, description=s.summary
            )
            for s in specs
        }
        parse = partial(
            parse_guided_plan, parts=parts, tool_names=offer.names, shapes=shapes, query=ctx.query
        )
        return unparseable_as_failure(parse, text), text

    async def turn(self, ctx: RunContext, loop: ItemLoop) -> ItemOutcome | None:
        """The arguments of the tool the step still needs, chosen under a grammar; a step without
        tools (a free-form plan revision may add one) is a free-form turn."""
        if not (loop.item.is_tool_step and loop.allowed):
            return await free_form_turn(ctx, loop)
        tool = target_tool(loop)
        request = guided_request(ctx, loop, tool)
        loop.messages = list(request.messages)
        forced = forced_arguments(request.response_schema)
        if forced is not None:  # one option per argument: nothing for the model to choose
            text, finish_reason = json.dumps(forced), "stop"
        else:
            reply = await ctx.call_model(request)
            text, finish_reason = reply.text, reply.finish_reason
            spec = ctx.registry.get(tool)
            twice = doubled_argument(text, spec.input_schema if spec else {}, ctx.query)
            if twice is not None and not loop.retry_tail:  # one value the request states once, given
                request = guided_request(ctx, loop, tool, avoid=twice)  # to two arguments: ask once more
                loop.messages = list(request.messages)  # without it for the second
                reply = await ctx.call_model(request)
                text, finish_reason = reply.text, reply.finish_reason
        parsed = parse_guided_call(text, tool, finish_reason=finish_reason)
        await emit_warnings(ctx, parsed.warnings, step_id=loop.item.id)
        loop.messages.append(Message(role="assistant", content=text))
        loop.unusable = parsed.truncated
        if parsed.truncated:
            loop.retry_tool = tool
            loop.retry_tail = [loop.messages[-1], Message(role="user", content=truncated_text([tool]))]
            return None
        return await handle_calls(ctx, loop, parsed)

    async def after_calls(
        self, ctx: RunContext, loop: ItemLoop, results: list[ToolResult], corrections: list[str]
    ) -> None:
        """The failed reply and its reason go to the next turn of the same tool, once."""
        remember_turn(loop, loop.messages[-1].content, results)

    def unmet(self, ctx: RunContext) -> list[str]:
        """The request's stated values no call took, values given to two arguments of one call, and
        tools the request names that never ran (``accounting``), read against the tools the steps
        used and those planning offered."""
        items = ctx.state.todo_list
        used = {n for it in items for n in it.required_tools}
        used |= {r.tool_name for it in items for r in it.tool_results}
        specs = [s for n in sorted(used) if (s := ctx.registry.get(n)) is not None]
        catalogue = {n: s.summary for n in ctx.offered if (s := ctx.registry.get(n)) is not None}
        return unmet(
            ctx.query,
            items,
            {s.name: s.input_schema for s in specs},
            {s.name: s.summary for s in specs},
            catalogue,
        )

    async def answer(self, ctx: RunContext, history: Sequence[HistoryTurn], *, status: str) -> ParsedAnswer:
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
        failed = any(it.is_tool_step and it.status is not ItemStatus.COMPLETED for it in items) or bool(
            ctx.state.unplanned
        )
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
            metadata = {**(answer.ui_metadata or {}), "unplanned_parts": list(ctx.state.unplanned)}
            answer = ParsedAnswer(response=answer.response, ui_metadata=metadata, thinking=answer.thinking)
        left = self.unmet(ctx)
        if left:  # the run is partial: the answer says what of the request its calls did not do
            metadata = {**(answer.ui_metadata or {}), "unmet": left}
            text = "\n".join([answer.response.rstrip(), f"Not done: {'; '.join(left)}."])
            answer = ParsedAnswer(response=text.strip(), ui_metadata=metadata, thinking=answer.thinking)
        if not answer.response.strip():
            raise PhaseFailure("empty_answer", "synthesis", "the synthesis reply held no answer text")
        return answer


GUIDED = Guided()
