"""The per-item loop (TAEF): bounded model turns, every call through the gate, required tools
enforced, results saved after every change."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from enum import Enum
from typing import Literal

from pes_agent.agent.calls import NOT_A_TOOL, handle_call
from pes_agent.agent.context import RunContext
from pes_agent.agent.item_loop import ItemLoop, new_loop, recovery_messages
from pes_agent.agent.pauses import pause_for_approval, pause_for_clarification
from pes_agent.agent.plan_update import apply_plan_update
from pes_agent.agent.planning import emit_warnings
from pes_agent.agent.views import output_text, tool_result_view
from pes_agent.events import EventType
from pes_agent.llm.parser import parse_step
from pes_agent.llm.replies import ParsedStep
from pes_agent.llm.types import Message, PromptRequest
from pes_agent.prompts.execution import (
    enforcement_text,
    tool_results_text,
    truncated_text,
)
from pes_agent.state.models import ItemStatus, TodoItem, ToolCallRecord
from pes_agent.tools.spec import ToolCall, ToolResult


class ItemOutcome(Enum):
    DONE = "done"
    SUSPENDED = "suspended"
    NEEDS_INPUT = "needs_input"


GiveUp = Literal[
    "tools_unavailable", "max_iterations", "taef_max_retries", "max_consecutive_failures", "unusable_reply"
]
"""Why an item was given up: no required tool usable; `maxIterations` or `taefMaxRetries` spent; a
tool's failure counter at `maxConsecutiveFailuresPerTool`; the budget spent on a last reply that
held nothing usable."""


async def fail_item(ctx: RunContext, item: TodoItem, reason: str, *, code: GiveUp) -> ItemOutcome:
    """Give the item up: failed, with ``reason`` for the user, and an ERROR event saying so, also
    when the run goes on to other items or ends `partial` (docs/recovery.md, "Rules made exact" 4)."""
    item.error = reason
    item.result = item.result or reason
    await ctx.set_status(item, ItemStatus.FAILED)
    await _report_give_up(ctx, item, reason, code)
    return ItemOutcome.DONE


async def _report_give_up(ctx: RunContext, item: TodoItem, reason: str, code: GiveUp) -> None:
    data = {"code": code, "phase": ctx.phase, "step_id": item.id, "message": reason}
    await ctx.emit(EventType.ERROR, data, step_id=item.id)


async def complete_item(ctx: RunContext, loop: ItemLoop, content: str | None) -> ItemOutcome:
    item = loop.item
    if content is None:
        last_ok = next((r for r in reversed(item.tool_results) if r.status == "success"), None)
        content = output_text(last_ok) if last_ok is not None else ""
    item.result = content
    if item.validation_status == "pending":
        item.validation_status = "passed" if item.is_tool_step else "skipped"
    await ctx.set_status(item, ItemStatus.COMPLETED)
    return ItemOutcome.DONE


async def run_item(ctx: RunContext, item: TodoItem) -> ItemOutcome:
    ctx.state.current_step_id = item.id
    # Not saved on its own: a step that dies before its first tool call or its end is run again
    # from the start whether the store says pending or in_progress, so that write would buy nothing.
    await ctx.set_status(item, ItemStatus.IN_PROGRESS, save=False)
    loop = new_loop(ctx, item)
    unavailable = [n for n in item.required_tools if n not in ctx.enabled_tools]
    if item.required_tools and len(unavailable) == len(item.required_tools):
        return await fail_item(
            ctx,
            item,
            f"required tool(s) {', '.join(unavailable)} are not registered or not enabled",
            code="tools_unavailable",
        )
    loop.messages = recovery_messages(ctx, loop)
    return await turns(ctx, loop)


async def turns(ctx: RunContext, loop: ItemLoop) -> ItemOutcome:
    """Model turns until the item ends, pauses, or runs out of its `maxIterations` budget."""
    item = loop.item
    while item.iterations < ctx.limits.max_iterations:
        stuck = _stuck(ctx, loop)  # a resumed call may have reached the limit: no turn after it
        if stuck is not None:
            return await fail_item(ctx, item, stuck, code="max_consecutive_failures")
        item.iterations += 1
        outcome = await ctx.strategy.turn(ctx, loop)
        if outcome is not None:
            return outcome
    return await _out_of_turns(ctx, loop)


async def free_form_turn(ctx: RunContext, loop: ItemLoop) -> ItemOutcome | None:
    """One free-form turn: the conversation so far, a reply of tool calls or content."""
    item = loop.item
    turn = PromptRequest(
        phase=loop.next_phase,
        step_id=item.id,
        messages=tuple(loop.messages),
        tools=loop.tools,
        response_schema=loop.response_schema,
    )
    reply = await ctx.call_model(turn)
    parsed = parse_step(reply.text, finish_reason=reply.finish_reason)
    await emit_warnings(ctx, parsed.warnings, step_id=item.id)
    if parsed.thinking:
        await ctx.emit(EventType.THOUGHTS, {"phase": "execution", "text": parsed.thinking}, step_id=item.id)
    loop.messages.append(Message(role="assistant", content=reply.text))
    loop.next_phase = "execution"
    loop.unusable = parsed.truncated or (not parsed.tool_calls and parsed.content is None)
    if parsed.truncated:
        loop.messages.append(Message(role="user", content=truncated_text(_cut_for(loop, reply.text))))
        return None
    if parsed.updated_plan is not None:
        await apply_plan_update(ctx, parsed.updated_plan, current_id=item.id)
    return await (handle_calls if parsed.tool_calls else _handle_content)(ctx, loop, parsed)


def _cut_for(loop: ItemLoop, text: str) -> list[str]:
    """The step's tools a cut-off reply names (in quotes), else those the step still needs."""
    named = [n for n in loop.allowed if f'"{n}"' in text]
    return named or [n for n in loop.missing() if n in loop.allowed]


async def _handle_content(ctx: RunContext, loop: ItemLoop, parsed: ParsedStep) -> ItemOutcome | None:
    """A reply without tool calls ends the item, unless strict TAEF still wants required tools."""
    missing = loop.missing()
    if not missing:
        return await complete_item(ctx, loop, parsed.content)
    if loop.item.validation_mode == "advisory":
        loop.item.validation_status = "failed"
        return await complete_item(ctx, loop, parsed.content)
    if loop.enforcements >= ctx.limits.taef_max_retries:
        loop.item.validation_status = "failed"
        return await fail_item(
            ctx,
            loop.item,
            f"the step ended without calling its required tool(s): {', '.join(missing)}",
            code="unusable_reply" if loop.unusable else "taef_max_retries",
        )
    loop.enforcements += 1
    loop.next_phase = "enforcement"
    text = enforcement_text(ctx.settings, missing=missing, allowed_tools=loop.allowed)
    loop.messages.append(Message(role="user", content=text))
    return None


def _assign_ids(item: TodoItem, calls: Sequence[ToolCall]) -> list[ToolCall]:
    used = {r.call_id for r in item.tool_results}
    out = []
    for call in calls:
        call_id = call.call_id or f"call_{item.id}_{len(used) + 1}"
        while call_id in used:
            call_id = f"{call_id}_{len(used) + 1}"
        used.add(call_id)
        out.append(replace(call, call_id=call_id))
    return out


async def handle_calls(ctx: RunContext, loop: ItemLoop, parsed: ParsedStep) -> ItemOutcome | None:
    """Run a reply's calls through the gate, in order; pause, end the step, or tell the next turn."""
    results: list[ToolResult] = []
    corrections: list[str] = []
    for call in _assign_ids(loop.item, parsed.tool_calls):
        outcome = await handle_call(ctx, loop, call)
        stuck = _stuck(ctx, loop)
        if stuck is not None:  # at once: no pause, no later call of this reply, no further turn
            return await fail_item(ctx, loop.item, stuck, code="max_consecutive_failures")
        pausing = bool(outcome.clarify) or outcome.result.status == "suspended"
        if pausing and results:  # what already ran in this reply stays in the saved conversation
            ran = [tool_result_view(_record(loop, r)) for r in results if r.status != "refused"]
            if ran:
                text = tool_results_text(ran, ctx.limits.tool_result_max_length)
                loop.messages.append(Message(role="user", content=text))
        if outcome.clarify:
            await pause_for_clarification(ctx, loop, outcome.call or call, outcome.clarify)
            return ItemOutcome.NEEDS_INPUT
        if outcome.result.status == "suspended":
            await pause_for_approval(ctx, loop, call, outcome.result)
            return ItemOutcome.SUSPENDED
        results.append(outcome.result)
        if outcome.corrective:
            corrections.append(outcome.corrective)
    if _can_close_early(ctx, loop, parsed, results):
        outputs = [output_text(_record(loop, r)) for r in results if r.status == "success"]
        return await complete_item(ctx, loop, "\n".join(outputs))
    await ctx.strategy.after_calls(ctx, loop, results, corrections)
    return None


def _stuck(ctx: RunContext, loop: ItemLoop) -> str | None:
    """Why the item must end now, when a failure counter reached `maxConsecutiveFailuresPerTool`."""
    limit = ctx.gate.max_consecutive_failures_per_tool
    over = [(n, c) for n, c in loop.failures.items() if c >= limit]
    if not over:
        return None
    name, count = over[0]
    if name != NOT_A_TOOL:
        return f"stopped: {name} was called with unusable arguments {count} times in a row"
    refused = [r.tool_name for r in loop.item.tool_results if r.status == "refused"][-count:]
    names = ", ".join(dict.fromkeys(refused)) or "unnamed"
    usable = ", ".join(loop.allowed) or "none"
    return f"stopped: {count} calls in a row named no tool this step may use ({names}; its tools: {usable})"


def _can_close_early(ctx: RunContext, loop: ItemLoop, parsed: ParsedStep, results: list[ToolResult]) -> bool:
    """`closeStepOnToolSuccess`: a reply of tool calls only, all succeeded, all required tools run."""
    return (
        (ctx.limits.close_step_on_tool_success or ctx.strategy.closes_steps)
        and parsed.content is None
        and bool(results)
        and all(r.status == "success" for r in results)
        and not loop.missing()
    )


def after_calls_text(
    ctx: RunContext, loop: ItemLoop, results: list[ToolResult], corrections: list[str]
) -> str:
    """One message back to the model: results that ran, then at most one corrective part."""
    ran = [
        tool_result_view(_record(loop, r))
        for r in results
        if r.status in ("success", "suspended") or _ran_and_failed(r)
    ]
    parts = [tool_results_text(ran, ctx.limits.tool_result_max_length)] if ran else []
    refused = [r.tool_name for r in results if r.status == "refused"]
    attempted = {r.tool_name for r in results if r.status != "refused"}
    missing = [n for n in loop.missing() if n not in attempted]
    wants_enforcement = bool(missing) and loop.item.validation_mode == "strict"
    if wants_enforcement and loop.enforcements < ctx.limits.taef_max_retries:
        loop.enforcements += 1
        loop.next_phase = "enforcement"
        parts.append(
            enforcement_text(ctx.settings, missing=missing, refused=refused, allowed_tools=loop.allowed)
        )
    elif corrections:
        parts.extend(corrections)
    return "\n\n".join(parts)


def _ran_and_failed(result: ToolResult) -> bool:
    """An error from the tool itself (it ran), as opposed to a call the gate never let through."""
    return result.status == "error" and result.metadata.get("ran", True) is True


def _record(loop: ItemLoop, result: ToolResult) -> ToolCallRecord:
    """The item's stored record of ``result`` (whose rendered output later prompts reuse), or a
    fresh one for a result that was not stored."""
    for record in reversed(loop.item.tool_results):
        if (
            record.call_id == result.call_id
            and record.output is result.output
            and record.status == result.status
        ):
            return record
    return ToolCallRecord(
        call_id=result.call_id,
        tool_name=result.tool_name,
        status=result.status,
        output=result.output,
        error=result.error,
    )


async def _out_of_turns(ctx: RunContext, loop: ItemLoop) -> ItemOutcome:
    """The iteration cap ends the item: complete if its required tools ran, else failed."""
    missing = loop.missing()
    if not (loop.item.is_tool_step and missing):
        return await complete_item(ctx, loop, None)
    loop.item.validation_status = "failed"
    reason = f"stopped after {ctx.limits.max_iterations} model calls without running: {', '.join(missing)}"
    code: GiveUp = "max_iterations"
    if loop.unusable:
        code = "unusable_reply"
        reason += " (the last reply held nothing usable: cut off or unreadable)"
    if loop.item.validation_mode == "strict":
        return await fail_item(ctx, loop.item, reason, code=code)
    await _report_give_up(ctx, loop.item, reason, code)  # advisory: the item closes, not done
    return await complete_item(ctx, loop, None)
