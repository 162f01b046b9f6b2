"""One tool call from the model's reply to its result: the gate's verdict decides whether it runs
(``call_run``), gets its missing values from an arg-fill turn (``arg_fill``), is answered without
running (a decision already taken, a repeat of a deterministic call) or is refused with a corrective.

Exactly one voice corrects a bad call: the gate's message, or the arg-fill turn, or (when neither
can help) a clarification for the user. A call whose arguments are still invalid never runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pes_agent.agent.arg_fill import fill_or_explain
from pes_agent.agent.call_check import as_outcome, gate_check
from pes_agent.agent.call_run import record, run_or_ask
from pes_agent.agent.context import RunContext
from pes_agent.agent.item_loop import ItemLoop
from pes_agent.events import EventType
from pes_agent.gate import FieldNeed, GateResult
from pes_agent.state.models import ToolCallRecord
from pes_agent.tools.spec import ToolCall, ToolResult

NOT_A_TOOL = ""
"""The failure counter shared by refused names (not a tool, or not one of this step's): no tool is
named by the empty string, which the parser never lets through as a name."""


@dataclass(frozen=True, kw_only=True)
class CallOutcome:
    result: ToolResult
    clarify: tuple[FieldNeed, ...] = ()
    """Set when the user must supply values: the item pauses with a clarification."""
    corrective: str | None = None
    """The one corrective message for the model when the call did not run."""
    call: ToolCall | None = None
    """The call after the gate's repairs (what waits for the user on a clarification)."""


async def handle_call(
    ctx: RunContext,
    loop: ItemLoop,
    call: ToolCall,
    *,
    approved: bool = False,
    answered: frozenset[str] = frozenset(),
) -> CallOutcome:
    """``answered`` names fields the user just gave: if one is still unusable the user is asked
    again, never the model (a model guess must not replace a person's answer)."""
    item_id = loop.item.id
    await ctx.emit(
        EventType.TOOL_CALL,
        {"call_id": call.call_id, "tool_name": call.tool_name, "arguments": _as_sent(call)},
        step_id=item_id,
    )
    decided = None if approved else _decided_before(loop, call.tool_name)
    if decided is not None:
        result = await _already_done(ctx, loop, call, decided)
        return CallOutcome(result=result)
    if not ctx.gate.enabled:
        return CallOutcome(result=await run_or_ask(ctx, loop, call, approved=approved))
    checked = await gate_check(ctx, loop, call)
    if checked.outcome == "fill" and any(n.name in answered for n in checked.needs):
        checked = as_outcome("clarify", checked, tuple(n for n in checked.needs if n.name in answered))
    elif checked.outcome == "fill":
        checked = await fill_or_explain(ctx, loop, checked)
    if checked.outcome == "execute":
        loop.failures.pop(checked.call.tool_name, None)
        earlier = None if approved else repeated_call(ctx, loop, checked.call)
        if earlier is not None:
            return CallOutcome(
                result=await _repeat_result(ctx, loop, checked.call, earlier), call=checked.call
            )
        return CallOutcome(
            result=await run_or_ask(ctx, loop, checked.call, approved=approved), call=checked.call
        )
    # One counter per tool, never reset by another tool's success; refused names share one.
    counter = NOT_A_TOOL if checked.outcome == "refuse_tool" else checked.call.tool_name
    loop.failures[counter] = loop.failures.get(counter, 0) + 1
    if checked.outcome == "clarify":
        return CallOutcome(
            result=_not_run(call, "error", checked.message), clarify=checked.needs, call=checked.call
        )
    return await _refuse_or_reask(ctx, loop, call, checked)


def _as_sent(call: ToolCall) -> Any:
    return dict(call.arguments) if call.non_object_arguments is None else call.non_object_arguments


async def _refuse_or_reask(
    ctx: RunContext, loop: ItemLoop, call: ToolCall, checked: GateResult
) -> CallOutcome:
    status = "refused" if checked.outcome == "refuse_tool" else "error"
    message = checked.message or f"the call to {call.tool_name} cannot run as given"
    result = _not_run(checked.call if status == "error" else call, status, message)
    if status == "error":
        await ctx.emit(
            EventType.REASK,
            {
                "call_id": call.call_id,
                "tool_name": checked.call.tool_name,
                "reason": message,
                "fields": sorted(
                    {n.name for n in checked.needs} | {p.field for p in checked.problems if p.field}
                ),
            },
            step_id=loop.item.id,
        )
    await record(ctx, loop, call, result)
    return CallOutcome(result=result, corrective=message)


def _not_run(call: ToolCall, status: str, message: str | None) -> ToolResult:
    return ToolResult(
        call_id=call.call_id,
        tool_name=call.tool_name,
        status=status,  # type: ignore[arg-type]
        error=message,
        metadata={"ran": False},
    )


def _decided_before(loop: ItemLoop, tool_name: str) -> ToolCallRecord | None:
    """A human already decided on this approval-gated tool in this item: never ask or run again."""
    return next(
        (r for r in loop.item.tool_results if r.tool_name == tool_name and r.decision is not None), None
    )


def repeated_call(ctx: RunContext, loop: ItemLoop, call: ToolCall) -> ToolCallRecord | None:
    """The earlier successful call of this step with the same tool and arguments, for a
    deterministic tool: small models re-send the call they just made, and running it again buys
    nothing (a tool declared ``deterministic=False`` runs every time)."""
    spec = ctx.registry.get(call.tool_name)
    if spec is None or not spec.deterministic:
        return None
    return next(
        (
            r
            for r in loop.item.tool_results
            if r.status == "success" and r.tool_name == call.tool_name and r.arguments == dict(call.arguments)
        ),
        None,
    )


async def _repeat_result(
    ctx: RunContext, loop: ItemLoop, call: ToolCall, earlier: ToolCallRecord
) -> ToolResult:
    """The earlier call's result, not run again; the event says which call it repeats."""
    result = ToolResult(
        call_id=call.call_id,
        tool_name=call.tool_name,
        status="success",
        output=earlier.output,
        metadata={"ran": False, "repeat_of": earlier.call_id},
    )
    await ctx.emit(
        EventType.TOOL_REPEAT,
        {
            "call_id": call.call_id,
            "tool_name": call.tool_name,
            "repeat_of": earlier.call_id,
            "note": f"{call.tool_name} was already called with these arguments in this step "
            f"(call {earlier.call_id}); its result is reused and the tool was not run again",
        },
        step_id=loop.item.id,
    )
    return result


async def _already_done(
    ctx: RunContext, loop: ItemLoop, call: ToolCall, decided: ToolCallRecord
) -> ToolResult:
    verdict = "approved" if decided.decision and decided.decision.get("approved") else "rejected"
    result = ToolResult(
        call_id=call.call_id,
        tool_name=call.tool_name,
        status="success",
        output={
            "already_done": True,
            "note": f"{call.tool_name} was already {verdict} by the user in this step "
            f"(call {decided.call_id}); it was not run again.",
            "decision": decided.decision,
        },
        metadata={"ran": False},
    )
    await record(ctx, loop, call, result)
    return result
