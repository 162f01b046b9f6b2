"""Running one tool call: approval first when the tool requires it, then exactly once (journalled as
started before the tool runs, finished with the state after), and its record on the item with the
events observers see. A blocking tool's result waits for a person.
"""

from __future__ import annotations

from pes_agent.agent.context import RunContext
from pes_agent.agent.item_loop import ItemLoop
from pes_agent.events import EventType
from pes_agent.state.journal import CallFinish
from pes_agent.state.models import ToolCallRecord
from pes_agent.tools.spec import ToolCall, ToolContext, ToolResult


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
