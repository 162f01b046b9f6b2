"""The per-item loop (TAEF): bounded model turns, tools run through the executor, required
tools enforced, results saved after every change."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from pes_agent.agent.context import RunContext
from pes_agent.agent.plan_update import apply_plan_update
from pes_agent.agent.planning import emit_warnings
from pes_agent.agent.views import results_before, step_view
from pes_agent.events import EventType
from pes_agent.llm.parser import parse_step
from pes_agent.llm.replies import ParsedStep
from pes_agent.llm.types import Message, Phase, PromptRequest
from pes_agent.prompts.execution import (
    build_reasoning_step,
    build_tool_step,
    enforcement_text,
    tool_results_text,
)
from pes_agent.prompts.views import render_output
from pes_agent.state.models import ItemStatus, Suspension, TodoItem, ToolCallRecord
from pes_agent.tools.spec import ToolCall, ToolContext, ToolResult
from pes_agent.agent.views import tool_result_view

TRUNCATED_NOTE = (
    "Your last reply was cut off before it ended, so nothing in it was run. Send it again, shorter: "
    "split large content into smaller pieces or several calls."
)


class ItemOutcome(Enum):
    DONE = "done"
    SUSPENDED = "suspended"


@dataclass(kw_only=True)
class ItemLoop:
    """Mutable bookkeeping of one item's turns."""

    item: TodoItem
    allowed: tuple[str, ...]
    messages: list[Message] = field(default_factory=list)
    enforcements: int = 0
    next_phase: Phase = "execution"

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(self.item.required_tools)

    def ran(self) -> set[str]:
        return {r.tool_name for r in self.item.tool_results if r.status in ("success", "suspended")}

    def missing(self) -> list[str]:
        done = self.ran()
        return [name for name in self.required if name not in done]


def allowed_tools(ctx: RunContext, item: TodoItem) -> tuple[str, ...]:
    if not item.is_tool_step:
        return ()
    if ctx.limits.tool_schema_mode == "flexible":
        return ctx.enabled_tools
    return tuple(name for name in item.required_tools if name in ctx.enabled_tools)


def first_request(ctx: RunContext, loop: ItemLoop) -> PromptRequest:
    item = loop.item
    previous = results_before(ctx.state, item.id)
    max_len = ctx.limits.tool_result_max_length
    if not item.is_tool_step:
        return build_reasoning_step(
            step_view(item), ctx.query, ctx.settings, previous=previous, max_result_length=max_len
        )
    required = [n for n in item.required_tools if n in ctx.enabled_tools]
    others = [n for n in loop.allowed if n not in required]
    return build_tool_step(
        step_view(item),
        ctx.query,
        ctx.settings,
        schemas=ctx.registry.schema_block(required),
        allowed_tools=loop.allowed,
        previous=previous,
        max_result_length=max_len,
        other_tools="\n".join(ctx.registry.manifesto_lines(others)) if others else "",
    )


async def fail_item(ctx: RunContext, item: TodoItem, reason: str) -> ItemOutcome:
    item.error = reason
    item.result = item.result or reason
    await ctx.set_status(item, ItemStatus.FAILED)
    return ItemOutcome.DONE


async def complete_item(ctx: RunContext, loop: ItemLoop, content: str | None) -> ItemOutcome:
    item = loop.item
    if content is None:
        last_ok = next((r for r in reversed(item.tool_results) if r.status == "success"), None)
        content = render_output(last_ok.output) if last_ok is not None else ""
    item.result = content
    if item.validation_status == "pending":
        item.validation_status = "passed" if item.is_tool_step else "skipped"
    await ctx.set_status(item, ItemStatus.COMPLETED)
    return ItemOutcome.DONE


async def run_item(ctx: RunContext, item: TodoItem) -> ItemOutcome:
    ctx.state.current_step_id = item.id
    await ctx.set_status(item, ItemStatus.IN_PROGRESS)
    loop = ItemLoop(item=item, allowed=allowed_tools(ctx, item))
    unavailable = [n for n in item.required_tools if n not in ctx.enabled_tools]
    if item.required_tools and len(unavailable) == len(item.required_tools):
        return await fail_item(
            ctx, item, f"required tool(s) {', '.join(unavailable)} are not registered or not enabled"
        )
    request = first_request(ctx, loop)
    loop.messages = list(request.messages)
    for _ in range(ctx.limits.max_iterations):
        item.iterations += 1
        turn = PromptRequest(phase=loop.next_phase, step_id=item.id, messages=tuple(loop.messages), tools=request.tools)
        reply = await ctx.call_model(turn)
        parsed = parse_step(reply.text, finish_reason=reply.finish_reason)
        await emit_warnings(ctx, parsed.warnings, step_id=item.id)
        if parsed.thinking:
            await ctx.emit(EventType.THOUGHTS, {"phase": "execution", "text": parsed.thinking}, step_id=item.id)
        loop.messages.append(Message(role="assistant", content=reply.text))
        loop.next_phase = "execution"
        if parsed.truncated:
            loop.messages.append(Message(role="user", content=TRUNCATED_NOTE))
            continue
        if parsed.updated_plan is not None:
            await apply_plan_update(ctx, parsed.updated_plan, current_id=item.id)
        if parsed.tool_calls:
            outcome = await _handle_calls(ctx, loop, parsed)
            if outcome is not None:
                return outcome
            continue
        outcome = await _handle_content(ctx, loop, parsed)
        if outcome is not None:
            return outcome
    return await _out_of_turns(ctx, loop)


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
            ctx, loop.item, f"the step ended without calling its required tool(s): {', '.join(missing)}"
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
        out.append(ToolCall(call_id=call_id, tool_name=call.tool_name, arguments=call.arguments))
    return out


async def _run_call(ctx: RunContext, loop: ItemLoop, call: ToolCall) -> ToolResult:
    await ctx.emit(
        EventType.TOOL_CALL,
        {"call_id": call.call_id, "tool_name": call.tool_name, "arguments": dict(call.arguments)},
        step_id=loop.item.id,
    )
    context = ToolContext(
        thread_id=ctx.thread_id, trace_id=ctx.trace_id, step_id=loop.item.id, call_id=call.call_id, user_id=ctx.user_id
    )
    result = await ctx.executor.execute(call, allowed=loop.allowed, context=context)
    if result.status != "refused":
        ctx.usage.tool_calls += 1
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
    return result


async def _handle_calls(ctx: RunContext, loop: ItemLoop, parsed: ParsedStep) -> ItemOutcome | None:
    calls = _assign_ids(loop.item, parsed.tool_calls)
    results: list[ToolResult] = []
    for call in calls:
        result = await _run_call(ctx, loop, call)
        results.append(result)
        if result.status == "suspended":
            await suspend_for_approval(ctx, loop, call, result)
            return ItemOutcome.SUSPENDED
    shown = [tool_result_view(_record(r)) for r in results if r.status != "refused"]
    refused = [r.tool_name for r in results if r.status == "refused"]
    attempted = {r.tool_name for r in results if r.status != "refused"}
    missing = [n for n in loop.missing() if n not in attempted]
    parts = []
    if shown:
        parts.append(tool_results_text(shown, ctx.limits.tool_result_max_length))
    wants_enforcement = bool(missing) and loop.item.validation_mode == "strict"
    if wants_enforcement and loop.enforcements < ctx.limits.taef_max_retries:
        loop.enforcements += 1
        loop.next_phase = "enforcement"
        parts.append(enforcement_text(ctx.settings, missing=missing, refused=refused, allowed_tools=loop.allowed))
    elif refused:
        parts.append(_refusal_note(refused, loop.allowed))
    loop.messages.append(Message(role="user", content="\n\n".join(parts)))
    return None


async def suspend_for_approval(ctx: RunContext, loop: ItemLoop, call: ToolCall, result: ToolResult) -> None:
    """Pause the run on a tool that asked for a human decision; everything needed to continue is saved."""
    output = result.output if isinstance(result.output, dict) else {}
    suspension = Suspension(
        id=f"susp_{uuid.uuid4().hex[:16]}",
        kind="approval",
        item_id=loop.item.id,
        tool_name=call.tool_name,
        call_id=call.call_id,
        arguments=dict(call.arguments),
        message=str(output.get("message") or f"{call.tool_name} is waiting for approval"),
        messages=[m.to_dict() for m in loop.messages],
    )
    ctx.state.suspension = suspension
    ctx.state.is_paused = True
    await ctx.set_status(loop.item, ItemStatus.WAITING)
    await ctx.emit(
        EventType.SUSPENDED,
        {
            "suspension_id": suspension.id,
            "kind": suspension.kind,
            "tool_name": call.tool_name,
            "call_id": call.call_id,
            "message": suspension.message,
        },
        step_id=loop.item.id,
    )


def _refusal_note(refused: Sequence[str], allowed: Sequence[str]) -> str:
    names = ", ".join(f"`{n}`" for n in refused)
    return f"{names} cannot be used in this step; the tools you may use are: {', '.join(allowed) or '(none)'}."


def _record(result: ToolResult) -> ToolCallRecord:
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
    if loop.item.is_tool_step and missing and loop.item.validation_mode == "strict":
        loop.item.validation_status = "failed"
        return await fail_item(
            ctx,
            loop.item,
            f"stopped after {ctx.limits.max_iterations} model calls without running: {', '.join(missing)}",
        )
    return await complete_item(ctx, loop, None)
