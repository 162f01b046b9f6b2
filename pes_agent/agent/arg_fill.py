"""Arg-fill: turns that ask the model only for the values the gate found missing in a call, within
a budget per tool per item (``argFill.maxAttempts``); when the turns fail, the user is asked.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pes_agent.agent.call_check import as_outcome, gate_check
from pes_agent.agent.context import RunContext
from pes_agent.agent.item_loop import ItemLoop
from pes_agent.agent.views import results_before
from pes_agent.errors import ParseError, ProviderError
from pes_agent.events import EventType
from pes_agent.gate import FieldNeed, GateResult
from pes_agent.llm.parser import parse_fill
from pes_agent.prompts.recovery import NeededField, build_arg_fill
from pes_agent.tools.spec import ToolCall


def needed(needs: tuple[FieldNeed, ...]) -> list[NeededField]:
    return [
        NeededField(name=n.name, description=n.description, type=n.type, allowed=n.allowed) for n in needs
    ]


async def fill_or_explain(ctx: RunContext, loop: ItemLoop, checked: GateResult) -> GateResult:
    """Arg-fill turns (up to `argFill.maxAttempts` per tool per item) for the missing values; without
    a budget the gate's message goes to the model; when the turns fail, the user is asked."""
    tool = checked.call.tool_name
    if not ctx.arg_fill.enabled or loop.fill_attempts.get(tool, 0) >= ctx.arg_fill.max_attempts:
        return as_outcome("reask", checked)
    while loop.fill_attempts.get(tool, 0) < ctx.arg_fill.max_attempts:
        loop.fill_attempts[tool] = loop.fill_attempts.get(tool, 0) + 1
        filled, checked = await _fill_once(ctx, loop, checked)
        if filled:
            loop.fill_attempts.pop(tool, None)
            return checked
        if not checked.needs:
            break
    return as_outcome("clarify", checked)


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
