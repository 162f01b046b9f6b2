"""Pausing a run for a person: approval of a blocking tool, or values only the user can give.

Everything needed to continue is saved with the suspension: the item, the call, its arguments and
the item's conversation so far.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pes_agent.agent.context import RunContext
from pes_agent.agent.item_loop import ItemLoop, new_loop, recovery_messages
from pes_agent.events import EventType
from pes_agent.gate import FieldNeed
from pes_agent.prompts.recovery import NeededField, clarification_text
from pes_agent.state.models import ItemStatus, Suspension, TodoItem
from pes_agent.tools.spec import ToolCall, ToolResult


async def _pause(ctx: RunContext, loop: ItemLoop, suspension: Suspension) -> None:
    ctx.state.suspension = suspension
    ctx.state.is_paused = True
    await ctx.set_status(loop.item, ItemStatus.WAITING)


def _suspension(
    ctx: RunContext,
    loop: ItemLoop,
    kind: Literal["approval", "clarification"],
    call: ToolCall | ToolResult,
    message: str,
    arguments: dict[str, Any],
    fields: list[dict[str, Any]] | None = None,
) -> Suspension:
    return Suspension(
        id=f"susp_{ctx.steps.new_id()[:16]}",
        kind=kind,
        item_id=loop.item.id,
        tool_name=call.tool_name,
        call_id=call.call_id,
        arguments=arguments,
        message=message,
        fields=fields or [],
        messages=[m.to_dict() for m in loop.messages],
    )


async def pause_for_approval(ctx: RunContext, loop: ItemLoop, call: ToolCall, result: ToolResult) -> None:
    output = result.output if isinstance(result.output, dict) else {}
    message = str(output.get("message") or f"{call.tool_name} is waiting for approval")
    suspension = _suspension(ctx, loop, "approval", call, message, dict(call.arguments))
    await _pause(ctx, loop, suspension)
    await ctx.emit(
        EventType.SUSPENDED,
        {
            "suspension_id": suspension.id,
            "kind": "approval",
            "tool_name": call.tool_name,
            "call_id": call.call_id,
            "message": message,
        },
        step_id=loop.item.id,
    )


def field_dicts(tool: str, needs: Sequence[FieldNeed]) -> list[dict[str, Any]]:
    return [
        {
            "tool": tool,
            "name": n.name,
            "description": n.description,
            "type": n.type,
            "allowed": list(n.allowed) if n.allowed else None,
        }
        for n in needs
    ]


async def pause_for_clarification(
    ctx: RunContext, loop: ItemLoop, call: ToolCall, needs: Sequence[FieldNeed]
) -> None:
    """The user must supply values: the call waits (not run) with what the model already gave."""
    text = clarification_text(
        call.tool_name,
        [NeededField(name=n.name, description=n.description, type=n.type, allowed=n.allowed) for n in needs],
    )
    fields = field_dicts(call.tool_name, needs)
    suspension = _suspension(ctx, loop, "clarification", call, text, dict(call.arguments), fields)
    await _pause(ctx, loop, suspension)
    await ctx.emit(
        EventType.CLARIFICATION,
        {"suspension_id": suspension.id, "text": text, "fields": fields},
        step_id=loop.item.id,
    )


async def pause_unknown_outcome(
    ctx: RunContext, item: TodoItem, call_id: str, tool_name: str, arguments: dict[str, Any]
) -> None:
    """A run died while a non-idempotent tool was running: ask a person rather than guess."""
    loop = new_loop(ctx, item)
    loop.messages = recovery_messages(ctx, loop)
    call = ToolCall(call_id=call_id, tool_name=tool_name, arguments=arguments)
    message = (
        f"The previous run stopped while `{tool_name}` was running (call {call_id}), so it may or may "
        f"not have taken effect. Approve to run it again, or reject to continue without it."
    )
    await _pause(ctx, loop, _suspension(ctx, loop, "approval", call, message, dict(arguments)))
    await ctx.emit(
        EventType.SUSPENDED,
        {
            "suspension_id": ctx.state.suspension.id if ctx.state.suspension else None,
            "kind": "approval",
            "tool_name": tool_name,
            "call_id": call_id,
            "message": message,
        },
        step_id=item.id,
    )
