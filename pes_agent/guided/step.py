"""A tool step in guided mode: one tool at a time, its arguments chosen among grounded options.

The step's prompt is rebuilt for every turn (``pes_agent.guided.prompts``): the tool the step still
needs, the earlier results, and this step's part of the query. After a call that did not work, the
next turn carries that reply and why it failed, once; a call that worked starts the next tool fresh.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pes_agent.agent.context import RunContext
from pes_agent.agent.item_loop import ItemLoop
from pes_agent.agent.views import output_text
from pes_agent.guided.arguments import EarlierResult
from pes_agent.guided.prompts import build_guided_step
from pes_agent.llm.types import Message, PromptRequest
from pes_agent.prompts.templates import GUIDED_RETRY
from pes_agent.state.models import ItemStatus
from pes_agent.tools.spec import ToolResult


def target_tool(loop: ItemLoop) -> str:
    """The tool this turn fills in: the first required tool not yet run, else the first allowed."""
    missing = [n for n in loop.missing() if n in loop.allowed]
    return missing[0] if missing else loop.allowed[0]


def earlier_results(ctx: RunContext, item_id: str) -> list[EarlierResult]:
    """Completed steps before this one, each with its last successful output, marked ``direct``
    when this step depends on it."""
    this = ctx.state.item(item_id)
    depends = set(this.dependencies) if this is not None else set()
    out = []
    for item in ctx.state.todo_list:
        if item.id == item_id:
            break
        ok = [r for r in item.tool_results if r.status == "success"]
        if item.status is ItemStatus.COMPLETED and ok:
            last = ok[-1]
            out.append(
                EarlierResult(
                    step_id=item.id,
                    description=item.description,
                    output=last.output,
                    text=output_text(last),
                    direct=item.id in depends,
                    inputs=last.arguments,
                )
            )
    return out


def guided_request(
    ctx: RunContext, loop: ItemLoop, tool: str, avoid: Mapping[str, Any] | None = None
) -> PromptRequest:
    """The turn's prompt for ``tool``; after a failed call of it, without the values that failed
    and with the failed reply and its reason appended; ``avoid``: values not to offer again
    (argument → value) on a fresh turn (one value the model gave two arguments)."""
    spec = ctx.registry.get(tool)
    assert spec is not None, f"allowed tool {tool!r} is registered"
    retrying = loop.retry_tool == tool and bool(loop.retry_tail)
    request = build_guided_step(
        ctx.query,
        loop.item.description,
        step_id=loop.item.id,
        tool=tool,
        description=spec.summary or spec.description,
        input_schema=spec.input_schema,
        earlier=earlier_results(ctx, loop.item.id),
        settings=ctx.settings,
        avoid=loop.retry_avoid if retrying else avoid,
        bindings=loop.item.bindings,
        part_tools=_part_tools(ctx, loop),
    )
    if not retrying:
        return request
    return PromptRequest(
        phase=request.phase,
        step_id=request.step_id,
        messages=(*request.messages, *loop.retry_tail),
        tools=request.tools,
        response_schema=request.response_schema,
    )


def _part_tools(ctx: RunContext, loop: ItemLoop) -> dict[str, str]:
    """The other tools planned for this step's part (producers the part implied, and the tool they
    serve), name → description: the words of the work, not of its values."""
    names = {
        tool
        for item in ctx.state.todo_list
        if item.description == loop.item.description and item.id != loop.item.id
        for tool in item.required_tools
    }
    specs = [s for n in sorted(names) if (s := ctx.registry.get(n)) is not None]
    return {s.name: s.summary or s.description for s in specs}


def retry_text(results: list[ToolResult]) -> str | None:
    """Why the calls did not work, for the next turn; None when every call worked."""
    errors = [f"{r.tool_name}: {r.error or 'no detail given'}" for r in results if r.status != "success"]
    return GUIDED_RETRY.substitute(error="; ".join(errors)) if errors else None


def remember_turn(loop: ItemLoop, reply: str, results: list[ToolResult]) -> None:
    """Keep the failed reply and its reason for the next turn of the same tool; forget it on success."""
    text = retry_text(results)
    if text is None or not results:
        loop.retry_tool, loop.retry_tail, loop.retry_avoid = None, [], {}
        return
    loop.retry_tool = results[0].tool_name
    loop.retry_tail = [Message(role="assistant", content=reply), Message(role="user", content=text)]
    loop.retry_avoid = failed_values(reply, results)


def failed_values(reply: str, results: list[ToolResult]) -> dict[str, Any]:
    """The values to offer no more: those of the fields the error names, or the only argument."""
    try:
        sent = json.loads(reply)
    except ValueError:
        return {}
    if not isinstance(sent, dict):
        return {}
    failed = next(r for r in results if r.status != "success")
    problems = failed.metadata.get("problems") or []
    fields = {str(p.get("field")) for p in problems if isinstance(p, dict)} & set(sent)
    if fields:
        return {f: sent[f] for f in fields}
    return dict(sent) if len(sent) == 1 else {}
