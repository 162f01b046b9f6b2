"""The gate's check of one call inside a run: what the call may draw on (its grounding: the query,
the user's answers, earlier steps' results) and the repairs the gate made, reported as events.

Below the call's handling (``calls``), arg-fill (``arg_fill``) and the check of a person's decision
(``decision_check``), which all ask the gate with the same grounding, so they get the same verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pes_agent.agent.context import RunContext
from pes_agent.agent.item_loop import ItemLoop
from pes_agent.agent.views import output_text
from pes_agent.events import EventType
from pes_agent.gate import FieldNeed, GateResult, Grounding
from pes_agent.state.models import ItemStatus, ThreadState
from pes_agent.tools.spec import ToolCall


def grounding(ctx: RunContext) -> Grounding:
    return grounding_of(ctx.state, ctx.query, ctx.user_answers)


def grounding_of(state: ThreadState, query_text: str, answers: Sequence[str]) -> Grounding:
    """What a call may draw on: the query, the user's answers and the results of earlier steps."""
    outputs: dict[str, tuple[Any, ...]] = {}
    texts: list[str] = []
    results: dict[str, str] = {}
    for item in state.todo_list:
        ok = [r for r in item.tool_results if r.status == "success"]
        if ok:
            outputs[item.id] = tuple(r.output for r in ok)
            texts.extend(output_text(r) for r in ok)
        if item.status is ItemStatus.COMPLETED and isinstance(item.result, str):
            results[item.id] = item.result
    query = "\n".join([query_text, *answers])
    return Grounding(query=query, step_outputs=outputs, step_results=results, output_texts=tuple(texts))


async def gate_check(ctx: RunContext, loop: ItemLoop, call: ToolCall) -> GateResult:
    checked = ctx.gate_engine.check(call, allowed=loop.allowed, grounding=grounding(ctx))
    for repair in checked.repairs:
        ctx.usage.arg_repairs += 1
        await ctx.emit(
            EventType.ARG_REPAIR,
            {"call_id": call.call_id, "tool_name": checked.call.tool_name, **repair.event_data()},
            step_id=loop.item.id,
        )
    return checked


def as_outcome(outcome: str, checked: GateResult, needs: tuple[FieldNeed, ...] | None = None) -> GateResult:
    """``checked`` with another outcome (and needs), its repairs already reported."""
    return GateResult(
        outcome=outcome,  # type: ignore[arg-type]
        call=checked.call,
        repairs=(),
        needs=checked.needs if needs is None else needs,
        message=checked.message,
        problems=checked.problems,
    )
