"""Recovery prompts: the arg-fill turn (ask the model for exactly the missing values) and the
clarification text (ask the user, in plain words, for what nobody can know)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pes_agent.llm.markers import sanitize_user_text
from pes_agent.llm.types import Message, PromptRequest
from pes_agent.prompts.templates import ARG_FILL_SYSTEM
from pes_agent.prompts.views import PromptSettings, StepResultView, render_previous


@dataclass(frozen=True, kw_only=True)
class NeededField:
    """A value to ask for; built from the gate's FieldNeed so prompts don't depend on the gate."""

    name: str
    description: str | None = None
    type: str | None = None
    allowed: tuple[Any, ...] | None = None


def _field_line(field: NeededField) -> str:
    parts = [f"- {field.name}"]
    if field.type:
        parts.append(f"({field.type})")
    if field.description:
        parts.append(f": {field.description}")
    line = " ".join(parts[:2]) + "".join(parts[2:])
    if field.allowed:
        line += f" One of: {', '.join(json.dumps(v, ensure_ascii=False) for v in field.allowed)}."
    return line


def build_arg_fill(
    *,
    tool: str,
    tool_description: str,
    fields: Sequence[NeededField],
    given: dict[str, Any],
    query: str,
    previous: Sequence[StepResultView],
    max_result_length: int,
    settings: PromptSettings,
    step_id: str | None,
) -> PromptRequest:
    names = ", ".join(f.name for f in fields)
    given_text = (
        f"\nAlready given (keep): {json.dumps(given, ensure_ascii=False, separators=(',', ':'))}\n"
        if given
        else ""
    )
    user = settings.templates["arg_fill"].substitute(
        tool=tool,
        tool_description=tool_description,
        names=names,
        fields="\n".join(_field_line(f) for f in fields),
        query=sanitize_user_text(query),
        previous=render_previous(previous, max_result_length),
        given=given_text,
    )
    system = ARG_FILL_SYSTEM.substitute(persona=settings.persona)
    return PromptRequest(
        phase="arg_fill",
        step_id=step_id,
        messages=(Message(role="system", content=system), Message(role="user", content=user)),
        response_schema=fill_schema(fields),
    )


def fill_schema(fields: Sequence[NeededField]) -> dict[str, Any]:
    """JSON Schema of the arg-fill reply, for providers that constrain decoding."""
    props: dict[str, Any] = {}
    for f in fields:
        prop: dict[str, Any] = {}
        if f.allowed:
            prop["enum"] = [*f.allowed, None]
        props[f.name] = prop
    return {"type": "object", "properties": props, "required": [f.name for f in fields]}


def clarification_text(tool: str, fields: Sequence[NeededField]) -> str:
    """What the user reads when a value cannot be found: field names and descriptions, nothing else."""
    if len(fields) == 1:
        f = fields[0]
        what = f"{f.description.rstrip('.')} (`{f.name}`)" if f.description else f"`{f.name}`"
        text = f"To continue I need one more detail for {tool}: {what}."
    else:
        lines = [
            f"- `{f.name}`" + (f": {f.description.rstrip('.')}" if f.description else "") for f in fields
        ]
        text = f"To continue I need a few details for {tool}:\n" + "\n".join(lines)
    allowed = [f for f in fields if f.allowed]
    for f in allowed:
        text += f"\nFor `{f.name}`, choose one of: {', '.join(str(v) for v in f.allowed or ())}."
    return text
