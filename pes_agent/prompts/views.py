"""Frozen inputs of the prompt builders, and the rendering of earlier results they share."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from string import Template
from typing import Any


@dataclass(frozen=True, kw_only=True)
class PromptSettings:
    """What stays fixed for a run: who the agent is and which templates it speaks with."""

    persona: str
    templates: Mapping[str, Template]
    planning_guidance: str | None = None
    synthesis_guidance: str | None = None


@dataclass(frozen=True, kw_only=True)
class StepView:
    id: str
    description: str
    expected_outcome: str | None = None
    required_tools: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ToolResultView:
    call_id: str
    tool_name: str
    status: str
    output: Any = None
    error: str | None = None
    text: str | None = None
    """``output`` already rendered (`render_output`), when the caller has it; saves rendering again."""


@dataclass(frozen=True, kw_only=True)
class StepResultView:
    id: str
    description: str
    status: str
    result: str | None = None
    tool_results: tuple[ToolResultView, ...] = ()


@dataclass(frozen=True, kw_only=True)
class HistoryTurn:
    role: str
    content: str


def clip(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    return f"{text[:limit]}… [{cut} more characters cut]"


def render_output(output: Any) -> str:
    if isinstance(output, str):
        return output
    return json.dumps(output, ensure_ascii=False, separators=(",", ":"), default=str)


def render_tool_result(result: ToolResultView, limit: int) -> str:
    head = f"- {result.tool_name} ({result.call_id})"
    if result.status in ("success", "suspended"):
        text = result.text if result.text is not None else render_output(result.output)
        verb = "succeeded" if result.status == "success" else "is waiting for the user"
        return f"{head} {verb}: {clip(text, limit)}"
    return f"{head} failed ({result.status}): {result.error or 'no detail given'}"


def render_previous(steps: Sequence[StepResultView], max_length: int) -> str:
    """Every completed step's result and tool outputs, each output cut to its share of the budget."""
    done = [s for s in steps if s.status == "completed"]
    if not done:
        return "(none yet)"
    n_outputs = sum(len(s.tool_results) for s in done) or 1
    share = max(max_length // n_outputs, 200)
    blocks = []
    for step in done:
        lines = [f"[{step.id}] {step.description}"]
        if step.result:
            lines.append(f"result: {clip(step.result, share)}")
        lines.extend(render_tool_result(r, share) for r in step.tool_results)
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def render_history(turns: Sequence[HistoryTurn]) -> str:
    if not turns:
        return ""
    lines = [f"{t.role}: {t.content}" for t in turns]
    return "\nConversation so far:\n" + "\n".join(lines) + "\n"


def guidance_suffix(guidance: str | None) -> str:
    """Custom guidance, delimited so it cannot be mistaken for the built-in instructions."""
    if not guidance or not guidance.strip():
        return ""
    return f"\n<guidance>\n{guidance.strip()}\n</guidance>"
