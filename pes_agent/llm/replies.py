"""What the parser makes of a model reply, per phase."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pes_agent.tools.spec import ToolCall


@dataclass(frozen=True, kw_only=True)
class ParseWarning:
    """Something the parser tolerated; becomes a PARSE_WARNING event."""

    code: str  # truncation_detected, multiple_objects_ignored, bad_todo_item, ...
    detail: str


@dataclass(frozen=True, kw_only=True)
class PlannedItem:
    id: str
    description: str
    step_type: Literal["tool", "reasoning"]
    required_tools: tuple[str, ...] = ()
    expected_outcome: str | None = None
    dependencies: tuple[str, ...] = ()
    bindings: tuple[tuple[str, str], ...] = ()
    """(argument, ``$step.path`` reference): arguments wired to an earlier step's output field."""


@dataclass(frozen=True, kw_only=True)
class ParsedPlan:
    title: str | None
    intent: str | None
    plan: str | None
    items: tuple[PlannedItem, ...]
    warnings: tuple[ParseWarning, ...] = ()
    unplanned: tuple[str, ...] = ()
    """Parts of the request that ask something and got no step (guided plans say so)."""


@dataclass(frozen=True, kw_only=True)
class ParsedStep:
    """An execution reply: tool calls, or content that ends the item, maybe with a plan update.

    ``truncated`` is set when the reply was cut off (finish reason ``length``, or an unclosed root
    object): nothing in it may run.
    """

    tool_calls: tuple[ToolCall, ...] = ()
    content: str | None = None
    next_step_decision: str | None = None
    updated_plan: ParsedPlan | None = None
    thinking: str | None = None
    truncated: bool = False
    warnings: tuple[ParseWarning, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ParsedAnswer:
    response: str
    ui_metadata: dict[str, Any] | None = None
    thinking: str | None = None
