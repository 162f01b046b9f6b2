"""Guided replies (see ``pes_agent.guided.prompts``) turned into the plans and calls the agent runs.

Under a grammar the reply is one compact JSON object; anything else means the reply was cut off
(or the provider ignored the schema), which is reported the way free-text replies are: an
unparseable plan, a truncated step.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pes_agent.errors import ParseError
from pes_agent.gate.references import reference_text
from pes_agent.guided.consumers import consumer_steps
from pes_agent.guided.dataflow import ImpliedStep, ToolShape, implied_steps
from pes_agent.guided.language import language
from pes_agent.guided.language.en import SEQUENCING
from pes_agent.llm.replies import ParsedPlan, ParsedStep, ParseWarning, PlannedItem
from pes_agent.tools.spec import ToolCall

__all__ = ["parse_guided_call", "parse_guided_plan"]


def _object(text: str) -> Mapping[str, Any] | None:
    try:
        value = json.loads(text.strip())
    except ValueError:
        return None
    return value if isinstance(value, Mapping) else None


def _one_call_each(
    parts: Sequence[str], choices: Sequence[Any], tool_names: Sequence[str], query: str
) -> list[tuple[str, Any]]:
    """Adjacent parts that chose the same tool, one call's request said in two sentences ("I have
    the values [2.5, 3.6]. Also, normalise them with the categories ['red', 'blue']"), as one part:
    its call takes what both say. Parts in sequence ("add 8 and 5, then multiply the result by 2")
    and parts opening with the same word (one action said twice: "calculate the tip on $50,
    calculate the tip on $80") stay apart: those are calls in turn."""
    out: list[tuple[str, Any]] = []
    for part, choice in zip(parts, choices, strict=True):
        if (
            out
            and choice in tool_names
            and out[-1][1] == choice
            and _opening(out[-1][0]) != _opening(part)
            and not SEQUENCING.search(_between(query, out[-1][0], part))
        ):
            out[-1] = (f"{out[-1][0]}. {part}", choice)
        else:
            out.append((part, choice))
    return out


def _between(query: str, before: str, after: str) -> str:
    """The query's text between two of its parts; the whole query when either is not found as
    written (a part joined from context), which keeps the parts apart if it says "then"."""
    end = query.find(before[-40:])
    start = query.find(after[:40], max(end, 0))
    return query[end + len(before[-40:]) : start] if end >= 0 and start >= 0 else query


def _opening(part: str) -> str:
    words = part.split()
    return words[0].casefold() if words else ""


def parse_guided_plan(
    text: str,
    parts: Sequence[str],
    tool_names: Sequence[str],
    shapes: Mapping[str, ToolShape] | None = None,
    query: str = "",
) -> ParsedPlan:
    """A tool step per part whose choice is a tool, each depending on the tool step before it; a
    part that asks something (a question) and got no tool is ``unplanned``: nothing will find its
    answer, and the run says so (``partial``) rather than let the answer make one up. With
    the offered tools' ``shapes``, a part's tool is preceded by the steps it implies (producers of
    the values it needs, ``dataflow``), its arguments bound to their outputs, and followed by the
    steps its result is for (a conversion to the currency asked for, a message to the address
    given, ``consumers``)."""
    reply = _object(text)
    if reply is None:
        raise ParseError(f"the guided plan is not one JSON object: {text[:120]!r}")
    items: list[PlannedItem] = []
    warnings = []
    planned: dict[str, str] = {}
    unplanned = []
    picks = _one_call_each(parts, [reply.get(p) for p in parts], tool_names, query)
    parts = [p for p, _ in picks]
    chosen_tools = {str(c) for _, c in picks if c in tool_names}
    for i, (part, choice) in enumerate(picks):
        if choice not in tool_names:
            if choice is None:
                warnings.append(ParseWarning(code="bad_todo_item", detail=f"no choice for part {part!r}"))
            if language().is_question(part):
                unplanned.append(part)
            continue
        picked = str(choice)
        if shapes is not None and picked in shapes:
            steps = implied_steps(picked, part, " ".join(parts[:i]), shapes, planned)
            steps += consumer_steps(steps, part, shapes, chosen_tools)
        else:
            steps = [ImpliedStep(tool=picked)]
        first = len(items)
        for step in steps:
            step_id = f"step_{len(items) + 1}"
            bindings = tuple(
                (b.argument, reference_text(b.step_id or f"step_{first + (b.producer or 0) + 1}", b.path))
                for b in step.bindings
            )
            items.append(
                PlannedItem(
                    id=step_id,
                    description=part,
                    step_type="tool",
                    required_tools=(step.tool,),
                    expected_outcome=f"what {step.provides} needs" if step.provides else None,
                    dependencies=_depends(step, bindings, items, first),
                    bindings=bindings,
                )
            )
            planned.setdefault(step.tool, step_id)
    chosen = ", then ".join(i.required_tools[0] for i in items)
    return ParsedPlan(
        title=parts[0] if parts else None,
        intent=" ".join(parts),
        plan=f"use {chosen}" if items else "answer without tools",
        items=tuple(items),
        warnings=tuple(warnings),
        unplanned=tuple(unplanned),
    )


def _depends(
    step: ImpliedStep, bindings: Sequence[tuple[str, str]], items: Sequence[PlannedItem], first: int
) -> tuple[str, ...]:
    """What a step's values come from. A producer the request implied follows the steps of the
    parts before its own, and its own producers (its bindings), not the producers planned beside
    it for the same part: the destination's airport is not looked up with the origin's. Any other
    step follows the one before it."""
    if step.provides is None:
        return (items[-1].id,) if items else ()
    before = [items[first - 1].id] if first > 0 else []
    bound = [re.split(r"[.\[]", reference.removeprefix("$"), maxsplit=1)[0] for _, reference in bindings]
    return tuple(dict.fromkeys([*before, *bound]))


def forced_arguments(schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The reply a guided schema leaves no choice in: every property has one option (a step's
    argument the request holds once or the plan bound to a ``$step`` reference; a plan's part with
    one tool offered). Such a reply is written here, not asked of the model: a call (seconds on a
    laptop) that could only say this, or fail to. None when any property is a choice or free."""
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties"), Mapping):
        return None
    properties: Mapping[str, Any] = schema["properties"]
    if set(schema.get("required") or ()) != set(properties) or not properties:
        return None
    out: dict[str, Any] = {}
    for name, prop in properties.items():
        options = prop.get("enum") if isinstance(prop, Mapping) else None
        if "const" in prop:
            out[name] = prop["const"]
        elif (
            isinstance(options, list) and len(options) == 1 and not any(k in prop for k in ("anyOf", "oneOf"))
        ):
            out[name] = options[0]
        else:
            return None
    return out


def parse_guided_call(text: str, tool: str, *, finish_reason: str = "stop") -> ParsedStep:
    """The arguments object of one call of ``tool``; a cut-off reply runs nothing."""
    reply = _object(text)
    if reply is None or finish_reason == "length":
        return ParsedStep(
            truncated=True,
            warnings=(
                ParseWarning(
                    code="truncation_detected", detail="the guided reply is not a whole JSON object"
                ),
            ),
        )
    return ParsedStep(tool_calls=(ToolCall(call_id="", tool_name=tool, arguments=dict(reply)),))
