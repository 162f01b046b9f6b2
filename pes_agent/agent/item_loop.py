"""One todo item's turns: the loop's state, the tools it may call and the messages it opens with.

Below the item loop itself (``execution``) and pausing (``pauses``), which both start or rebuild a
loop: after an interruption the opening messages also say what already ran in the item.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pes_agent.agent.context import RunContext
from pes_agent.agent.views import results_before, step_view, tool_result_view
from pes_agent.llm.types import Message, Phase, PromptRequest
from pes_agent.prompts.execution import build_reasoning_step, build_tool_step, resumed_text
from pes_agent.state.models import TodoItem


@dataclass(kw_only=True)
class ItemLoop:
    """Mutable bookkeeping of one item's turns (rebuilt from the saved messages on resume)."""

    item: TodoItem
    allowed: tuple[str, ...]
    tools: tuple[str, ...] = ()
    messages: list[Message] = field(default_factory=list)
    enforcements: int = 0
    next_phase: Phase = "execution"
    failures: dict[str, int] = field(default_factory=dict)
    """Consecutive calls per tool that the gate would not run; refused names (not a tool of this
    step) count under ``NOT_A_TOOL``. At `maxConsecutiveFailuresPerTool` the item ends at once."""
    unusable: bool = False
    """The last reply held nothing to act on (cut off, or neither calls nor content)."""
    fill_attempts: dict[str, int] = field(default_factory=dict)
    response_schema: Mapping[str, Any] | None = None
    """The reply schema of the item's first request, kept for every turn (structured output)."""
    recovered: bool = False
    """The item restarts after an interruption: calls that already succeeded are not run again."""
    retry_tool: str | None = None
    """Guided mode: the tool whose last call did not work, retried with ``retry_tail``."""
    retry_tail: list[Message] = field(default_factory=list)
    retry_avoid: dict[str, Any] = field(default_factory=dict)
    """Guided mode: argument values that failed, not offered on the retry."""

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(self.item.required_tools)

    def ran(self) -> set[str]:
        """Tools done in this item: run, or decided on by a person (a rejection settles it too)."""
        return {
            r.tool_name
            for r in self.item.tool_results
            if r.status in ("success", "suspended") or r.decision is not None
        }

    def missing(self) -> list[str]:
        done = self.ran()
        return [name for name in self.required if name not in done]


def allowed_tools(ctx: RunContext, item: TodoItem) -> tuple[str, ...]:
    return allowed_for(item, ctx.limits.tool_schema_mode, ctx.enabled_tools)


def allowed_for(item: TodoItem, schema_mode: str, enabled: tuple[str, ...]) -> tuple[str, ...]:
    """The tools a step may call: none for a reasoning step, its required ones (strict mode) or
    every enabled one (flexible mode)."""
    if not item.is_tool_step:
        return ()
    if schema_mode == "flexible":
        return enabled
    return tuple(name for name in item.required_tools if name in enabled)


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
        tool_schemas={
            n: spec.model_schema for n in loop.allowed if (spec := ctx.registry.get(n)) is not None
        },
    )


def new_loop(ctx: RunContext, item: TodoItem) -> ItemLoop:
    return ItemLoop(item=item, allowed=allowed_tools(ctx, item), tools=tuple(item.required_tools))


def recovery_messages(ctx: RunContext, loop: ItemLoop) -> list[Message]:
    """The item's opening messages; after an interruption, plus what already ran in it."""
    request = first_request(ctx, loop)
    loop.response_schema = request.response_schema if ctx.structured_output else None
    messages = list(request.messages)
    done_before = [r for r in loop.item.tool_results if r.status == "success"]
    if done_before:
        loop.recovered = True
        views = [tool_result_view(r) for r in done_before]
        messages.append(Message(role="user", content=resumed_text(views, ctx.limits.tool_result_max_length)))
    return messages
