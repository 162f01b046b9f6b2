"""One tool call from the model's reply to its result: gate, arg-fill, execution, records, events.

Exactly one voice corrects a bad call: the gate's message, or the arg-fill turn, or (when neither
can help) a clarification for the user. A call whose arguments are still invalid never runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pes_agent.agent.context import RunContext
from pes_agent.agent.item_loop import ItemLoop
from pes_agent.agent.views import output_text, results_before
from pes_agent.errors import ParseError, ProviderError
from pes_agent.events import EventType
from pes_agent.gate import FieldNeed, GateResult, Grounding
from pes_agent.llm.parser import parse_fill
from pes_agent.prompts.recovery import NeededField, build_arg_fill
from pes_agent.state.journal import CallFinish
from pes_agent.state.models import ItemStatus, ThreadState, ToolCallRecord
from pes_agent.tools.spec import ToolCall, ToolContext, ToolResult

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
        checked = _as("clarify", checked, tuple(n for n in checked.needs if n.name in answered))
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


def needed(needs: tuple[FieldNeed, ...]) -> list[NeededField]:
    return [
        NeededField(name=n.name, description=n.description, type=n.type, allowed=n.allowed) for n in needs
    ]


def _as(outcome: str, checked: GateResult, needs: tuple[FieldNeed, ...] | None = None) -> GateResult:
    return GateResult(
        outcome=outcome,  # type: ignore[arg-type]
        call=checked.call,
        repairs=(),
        needs=checked.needs if needs is None else needs,
        message=checked.message,
        problems=checked.problems,
    )


async def fill_or_explain(ctx: RunContext, loop: ItemLoop, checked: GateResult) -> GateResult:
    """Arg-fill turns (up to `argFill.maxAttempts` per tool per item) for the missing values; without
    a budget the gate's message goes to the model; when the turns fail, the user is asked."""
    tool = checked.call.tool_name
    if not ctx.arg_fill.enabled or loop.fill_attempts.get(tool, 0) >= ctx.arg_fill.max_attempts:
        return _as("reask", checked)
    while loop.fill_attempts.get(tool, 0) < ctx.arg_fill.max_attempts:
        loop.fill_attempts[tool] = loop.fill_attempts.get(tool, 0) + 1
        filled, checked = await _fill_once(ctx, loop, checked)
        if filled:
            loop.fill_attempts.pop(tool, None)
            return checked
        if not checked.needs:
            break
    return _as("clarify", checked)


async def _fill_once(ctx: RunContext, loop: ItemLoop, checked: GateResult) -> tuple[bool, GateResult]:
    tool = checked.call.tool_name
    names = [n.name for n in checked.needs]
    data = {"call_id": checked.call.call_id, "tool_name": tool, "fields": names}
    ctx.usage.arg_fill_attempts += 1
    await ctx.emit(EventType.ARG_FILL_ATTEMPT, data, step_id=loop.item.id)
    values, reason = await _ask_for_values(ctx, loop, checked, names)
    if values is not None:
        merged = ToolCall(
            call_id=checked.call.call_id, tool_name=tool, arguments={**checked.call.arguments, **values}
        )
        second = await gate_check(ctx, loop, merged)
        if second.outcome == "execute":
            ctx.usage.arg_fill_successes += 1
            await ctx.emit(EventType.ARG_FILL_SUCCESS, {**data, "values": values}, step_id=loop.item.id)
            return True, second
        reason = second.message or "the values supplied were still not valid"
        checked = second if second.needs else checked
    ctx.usage.arg_fill_failures += 1
    await ctx.emit(EventType.ARG_FILL_FAILURE, {**data, "reason": reason}, step_id=loop.item.id)
    return False, checked


async def _ask_for_values(
    ctx: RunContext, loop: ItemLoop, checked: GateResult, names: list[str]
) -> tuple[dict[str, Any] | None, str]:
    spec = ctx.registry.get(checked.call.tool_name)
    request = build_arg_fill(
        tool=checked.call.tool_name,
        tool_description=spec.summary if spec else "",
        fields=needed(checked.needs),
        given={k: v for k, v in checked.call.arguments.items() if k not in names},
        query=ctx.query,
        previous=results_before(ctx.state, loop.item.id),
        max_result_length=ctx.limits.tool_result_max_length,
        settings=ctx.settings,
        step_id=loop.item.id,
    )
    try:
        async with asyncio.timeout(ctx.arg_fill.timeout_s):
            reply = await ctx.call_model(request)
        values = parse_fill(reply.text, names, checked.call.tool_name, finish_reason=reply.finish_reason)
    except TimeoutError:
        return None, f"no reply within {ctx.arg_fill.timeout_s:g} s"
    except (ParseError, ProviderError) as exc:
        return None, str(exc)
    values = {k: v for k, v in values.items() if k in names and v is not None}
    if not values:
        return None, "the model did not supply any of the missing values"
    return values, ""


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


async def run_or_ask(
    ctx: RunContext, loop: ItemLoop, call: ToolCall, *, approved: bool = False
) -> ToolResult:
    """Run the call, or pause first when the tool requires approval before it runs."""
    spec = ctx.registry.get(call.tool_name)
    if not approved and spec is not None and spec.requires_approval and call.tool_name in loop.allowed:
        preview = dict(call.arguments)
        return ToolResult(
            call_id=call.call_id,
            tool_name=call.tool_name,
            status="suspended",
            output={"message": f"Approve running {call.tool_name} with these arguments?", "preview": preview},
            metadata={"ran": False},
        )
    return await execute(ctx, loop, call)


async def execute(ctx: RunContext, loop: ItemLoop, call: ToolCall) -> ToolResult:
    """Run a call exactly once: journalled as started before the tool runs, finished (with the
    state) after. A call that already succeeded before an interruption is answered from its record."""
    earlier = _ran_before_interruption(loop, call)
    if earlier is not None:
        return ToolResult(
            call_id=call.call_id,
            tool_name=call.tool_name,
            status="success",
            output=earlier.output,
            metadata={"ran": False, "replayed_from": earlier.call_id},
        )
    context = ToolContext(
        thread_id=ctx.thread_id,
        trace_id=ctx.trace_id,
        step_id=loop.item.id,
        call_id=call.call_id,
        user_id=ctx.user_id,
    )
    await ctx.store.call_started(
        ctx.thread_id, loop.item.id, call.call_id, call.tool_name, dict(call.arguments)
    )
    attributes = {"tool_name": call.tool_name, "call_id": call.call_id, "step_id": loop.item.id}
    with ctx.tracer.span("tool", f"execute_tool {call.tool_name}", attributes) as span:
        ran = await ctx.steps.run(
            "tool",
            f"tool {call.tool_name} {loop.item.id} {call.call_id}",
            lambda: ctx.executor.execute(call, allowed=loop.allowed, context=context),
        )
        result = _blocking(ctx, ran)
        span.set_attribute("status", result.status)
    if result.status != "refused":
        ctx.usage.tool_calls += 1
    await record(ctx, loop, call, result, journal=True)
    return result


def _blocking(ctx: RunContext, result: ToolResult) -> ToolResult:
    """A blocking tool's function prepares the request; whatever it returns waits for a person."""
    spec = ctx.registry.get(result.tool_name)
    if spec is None or spec.execution_mode != "blocking" or result.status != "success":
        return result
    return ToolResult(
        call_id=result.call_id,
        tool_name=result.tool_name,
        status="suspended",
        output={"message": f"{result.tool_name} is waiting for approval", "preview": result.output},
    )


def _ran_before_interruption(loop: ItemLoop, call: ToolCall) -> ToolCallRecord | None:
    if not loop.recovered:
        return None
    return next(
        (
            r
            for r in loop.item.tool_results
            if r.status == "success" and r.tool_name == call.tool_name and r.arguments == dict(call.arguments)
        ),
        None,
    )


async def record(
    ctx: RunContext, loop: ItemLoop, call: ToolCall, result: ToolResult, *, journal: bool = False
) -> None:
    """Keep the call on the item, save (with its journal entry when it ran), then tell observers."""
    loop.item.tool_results.append(
        ToolCallRecord(
            call_id=call.call_id,
            tool_name=call.tool_name,
            arguments=dict(call.arguments),
            status=result.status,
            output=result.output,
            error=result.error,
        )
    )
    if journal:
        finish = CallFinish(item_id=loop.item.id, call_id=call.call_id, result=result.to_dict())
        await ctx.save(finished=[finish])
    else:
        await ctx.save()
    problems = result.metadata.get("problems") if result.status == "error" else None
    if problems:
        await ctx.emit(
            EventType.REASK,
            {
                "call_id": call.call_id,
                "tool_name": call.tool_name,
                "reason": result.error,
                "fields": sorted({p["field"] for p in problems if p.get("field")}),
            },
            step_id=loop.item.id,
        )
    await ctx.emit(
        EventType.TOOL_EXECUTION,
        {
            "call_id": call.call_id,
            "tool_name": call.tool_name,
            "arguments": dict(call.arguments),
            "status": result.status,
            "output": result.output,
            "error": result.error,
        },
        step_id=loop.item.id,
    )
