"""Continuing a paused item: a human decision on an approval, or values for a clarification.

What a decision does:
- approval of a blocking tool (its function already ran and asked): the decision becomes that call's
  result; the function is not called again.
- approval of a `requires_approval` tool (paused before it ran): it runs once, with the approved
  arguments (`modified_args` merged over the proposed ones and checked by the gate again).
- rejection (either kind): the tool does not run (again); the model is told it was rejected and why,
  and the item continues, so it can finish without that action or explain.
- clarification: the user's values are merged into the waiting call, which goes through the gate
  again; when values are still missing the run pauses with a new clarification.
In every case a later call of the same approval tool in the item is answered "already done".

The decision reaching here was checked against the pause (`decision_check`) before anything was
applied; a person's values count as said by the user (grounding), as they did in that check, so the
gate gives the same verdict here.
"""

from __future__ import annotations

from dataclasses import dataclass

from pes_agent.agent.call_run import record
from pes_agent.agent.calls import CallOutcome, handle_call
from pes_agent.agent.context import RunContext
from pes_agent.agent.decision_check import answer_texts
from pes_agent.agent.execution import ItemOutcome, after_calls_text, turns
from pes_agent.agent.item_loop import ItemLoop, new_loop
from pes_agent.agent.pauses import pause_for_approval, pause_for_clarification
from pes_agent.decision import Decision
from pes_agent.events import EventType
from pes_agent.llm.types import Message
from pes_agent.state.journal import CallFinish
from pes_agent.state.models import ItemStatus, Suspension
from pes_agent.tools.spec import ToolCall, ToolResult


@dataclass(frozen=True, kw_only=True)
class Resumption:
    """What a resumed run continues with: the pause and the person's answer to it."""

    suspension: Suspension
    decision: Decision
    free_text: bool = False
    """The answer came as a plain message (`process` on a thread waiting for values): an arg-fill
    turn may still pick the values out of the sentence."""


async def resume_item(ctx: RunContext, resumption: Resumption) -> ItemOutcome:
    suspension, decision = resumption.suspension, resumption.decision
    item = ctx.state.item(suspension.item_id)
    if item is None:  # the plan no longer holds it: nothing to continue
        return ItemOutcome.DONE
    ctx.state.suspension = None
    ctx.state.is_paused = False
    ctx.state.current_step_id = item.id
    await ctx.set_status(item, ItemStatus.IN_PROGRESS)
    await ctx.emit(
        EventType.RESUMED,
        {
            "suspension_id": suspension.id,
            "kind": suspension.kind,
            "tool_name": suspension.tool_name,
            "call_id": suspension.call_id,
            "message": suspension.message,
            "decision": decision.to_dict(),
        },
        step_id=item.id,
    )
    loop = new_loop(ctx, item)
    loop.messages = [Message(role=m["role"], content=m["content"]) for m in suspension.messages]  # type: ignore[arg-type]
    call = ToolCall(
        call_id=suspension.call_id or "", tool_name=suspension.tool_name or "", arguments=suspension.arguments
    )
    if suspension.kind == "approval":
        outcome = await _decide(ctx, loop, call, decision)
    else:
        values = dict(decision.values or {})
        ctx.user_answers.extend(answer_texts(values))
        merged = ToolCall(
            call_id=call.call_id, tool_name=call.tool_name, arguments={**call.arguments, **values}
        )
        # Values given as such are the user's word; a free-text reply (through `process`) may still
        # need an arg-fill turn to pick them out of the sentence.
        answered = frozenset() if resumption.free_text else frozenset(values)
        outcome = await handle_call(ctx, loop, merged, answered=answered)
    paused = await _pause_again(ctx, loop, call, outcome)
    if paused is not None:
        return paused
    corrections = [outcome.corrective] if outcome.corrective else []
    loop.messages.append(
        Message(role="user", content=after_calls_text(ctx, loop, [outcome.result], corrections))
    )
    return await turns(ctx, loop)


async def _pause_again(
    ctx: RunContext, loop: ItemLoop, call: ToolCall, outcome: CallOutcome
) -> ItemOutcome | None:
    if outcome.clarify:
        await pause_for_clarification(ctx, loop, outcome.call or call, outcome.clarify)
        return ItemOutcome.NEEDS_INPUT
    if outcome.result.status == "suspended":
        await pause_for_approval(ctx, loop, outcome.call or call, outcome.result)
        return ItemOutcome.SUSPENDED
    return None


async def _decide(ctx: RunContext, loop: ItemLoop, call: ToolCall, decision: Decision) -> CallOutcome:
    approved = decision.approved is True
    reason = decision.reason or ""
    stored = next((r for r in loop.item.tool_results if r.call_id == call.call_id), None)
    verdict = {"approved": approved, "reason": reason or None}
    if stored is not None:  # a blocking tool: it ran and asked; the decision is its result
        stored.decision = decision.to_dict()
        stored.status = "success" if approved else "error"
        stored.output = {**verdict, "request": stored.output}
        stored.error = None if approved else f"the user rejected this: {reason or 'no reason given'}"
        final = {
            "call_id": call.call_id,
            "tool_name": call.tool_name,
            "status": stored.status,
            "output": stored.output,
            "error": stored.error,
        }
        await ctx.save(finished=[CallFinish(item_id=loop.item.id, call_id=call.call_id, result=final)])
        result = ToolResult(
            call_id=call.call_id,
            tool_name=call.tool_name,
            status=stored.status,
            output=stored.output,
            error=stored.error,
        )
        return CallOutcome(result=result)
    if not approved:  # requires_approval, rejected: it never runs
        result = ToolResult(
            call_id=call.call_id,
            tool_name=call.tool_name,
            status="error",
            error=f"the user rejected this call, so it did not run: {reason or 'no reason given'}",
            metadata={"ran": True},
        )
        await record(ctx, loop, call, result)
        loop.item.tool_results[-1].decision = decision.to_dict()
        await ctx.save()
        return CallOutcome(result=result)
    modified = dict(decision.modified_args or {})
    ctx.user_answers.extend(answer_texts(modified))
    approved_call = ToolCall(
        call_id=call.call_id, tool_name=call.tool_name, arguments={**call.arguments, **modified}
    )
    outcome = await handle_call(ctx, loop, approved_call, approved=True)
    for rec in loop.item.tool_results:
        if rec.call_id == call.call_id:
            rec.decision = decision.to_dict()
    await ctx.save()
    return outcome
