"""Whether a person's `Decision` fits the pause it answers, checked before anything is applied.

`ArtInstance.resume` runs this on the stored state, under the thread's lock and before the thread is
claimed: a refusal (`InvalidDecisionError`) leaves the suspension, its step and the thread exactly as
they were, so the same suspension can be decided again. The values a person gives go through the
same gate as a model's call (`ArgumentGate.check`, with the step's allowed tools and the run's
grounding, the person's values counting as grounded), so the run that follows sees the gate give
the same verdict: it executes, and never sends a person's arguments to an arg-fill turn to be
completed by the model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pes_agent.agent.call_check import grounding_of
from pes_agent.agent.item_loop import allowed_for
from pes_agent.agent.settings import enabled_tools
from pes_agent.config import ArtInstanceConfig, ThreadConfig
from pes_agent.config.limits import resolve_execution
from pes_agent.decision import Decision
from pes_agent.errors import InvalidDecisionError
from pes_agent.gate import ArgumentGate, GateResult
from pes_agent.state.models import Suspension, ThreadState
from pes_agent.tools.spec import ToolCall

_NEED_WORDS = {
    "missing": "is required by the tool's schema",
    "placeholder": "looks like a placeholder, not a value",
    "enum_unmapped": "is not one of the values the tool allows",
    "unresolved_reference": "refers to a step result that does not exist",
}


def answer_texts(values: Mapping[str, Any]) -> list[str]:
    """A person's values as grounding text: what they typed counts as said by the user."""
    return [v if isinstance(v, str) else json.dumps(v, default=str) for v in values.values()]


def check_kind(thread_id: str, suspension: Suspension, decision: Decision) -> None:
    """The decision is of the kind the pause asks for (what a process without the tools can check)."""
    where = f"suspension {suspension.id!r} of thread {thread_id!r}"
    if suspension.kind == "approval" and decision.kind != "approval":
        raise InvalidDecisionError(
            f"{where} waits for approval of `{suspension.tool_name}`: send `approved` (true or false), "
            "not `values`; nothing was decided",
            field="values",
        )
    if suspension.kind == "clarification" and decision.kind != "clarification":
        asked = ", ".join(f"`{f.get('name')}`" for f in suspension.fields) or "the values asked"
        raise InvalidDecisionError(
            f"{where} asks for values ({asked}): send `values`, not `approved`; nothing was decided",
            field="approved",
        )


@dataclass(frozen=True, kw_only=True)
class DecisionScope:
    """What the gate sees of the paused run: the stored state and query, the gate, and which tools
    the run would allow (its schema mode and enabled tools, as the resumed run resolves them). No
    provider: a process that only hands decisions to workers has none."""

    thread_id: str
    state: ThreadState
    query: str
    gate: ArgumentGate
    schema_mode: str
    enabled_tools: tuple[str, ...]


def decision_scope(
    thread_id: str,
    state: ThreadState,
    *,
    config: ArtInstanceConfig,
    gate: ArgumentGate,
    call: ThreadConfig | None,
    registered: Sequence[str],
) -> DecisionScope:
    """The scope of a decision on the stored ``state``, its tools resolved as the resumed run will:
    the call's options over the thread's stored config (or the instance's thread defaults) over the
    instance's."""
    stored = state.config or config.thread_defaults
    levels = (call.execution if call else None, stored.execution if stored else None, config.execution)
    return DecisionScope(
        thread_id=thread_id,
        state=state,
        query=state.query or "",
        gate=gate,
        schema_mode=resolve_execution(*levels).tool_schema_mode,
        enabled_tools=enabled_tools(registered, call, stored),
    )


def check_decision(scope: DecisionScope, suspension: Suspension, decision: Decision) -> None:
    """Raise `InvalidDecisionError` naming the field when ``decision`` cannot answer ``suspension``."""
    check_kind(scope.thread_id, suspension, decision)
    where = f"suspension {suspension.id!r} of thread {scope.thread_id!r}"
    tool = suspension.tool_name or "the tool"
    given, label = _given(decision)
    item = scope.state.item(suspension.item_id)
    if not given or item is None:
        return
    if suspension.kind == "approval" and any(r.call_id == suspension.call_id for r in item.tool_results):
        raise InvalidDecisionError(
            f"{where}: `{tool}` already ran and asks a person to accept its request, so its arguments "
            "cannot be changed; approve or reject without `modified_args`; nothing was decided",
            field="modified_args",
        )
    call = ToolCall(
        call_id=suspension.call_id or "",
        tool_name=suspension.tool_name or "",
        arguments={**suspension.arguments, **given},
    )
    allowed = allowed_for(item, scope.schema_mode, scope.enabled_tools)
    checked = scope.gate.check(
        call, allowed=allowed, grounding=grounding_of(scope.state, scope.query, answer_texts(given))
    )
    if checked.outcome in ("execute", "refuse_tool"):
        return  # a tool the step may no longer call is the run's to report, not the decision's fault
    refused = _refused_fields(checked)
    if suspension.kind == "clarification":  # fields the person left out are asked again by the run
        refused = [(name, why) for name, why in refused if name in given]
    if not refused and suspension.kind == "clarification":
        return
    name, why = (
        refused[0] if refused else ("", checked.message or "the tool's schema refuses these arguments")
    )
    field = f"{label}.{name}" if name else label
    others = ", ".join(f"`{label}.{n}`" for n, _ in refused[1:])
    also = f" (also {others})" if others else ""
    raise InvalidDecisionError(
        f"{where}: `decision.{field}` {why}{also}, checked against `{tool}`'s schema as a model's call "
        "would be; nothing was decided: correct it and decide again",
        field=field,
    )


def _given(decision: Decision) -> tuple[Mapping[str, Any], str]:
    if decision.values is not None:
        return decision.values, "values"
    if decision.approved and decision.modified_args is not None:
        return decision.modified_args, "modified_args"
    return {}, "modified_args"


def _refused_fields(checked: GateResult) -> list[tuple[str, str]]:
    """(field, what is wrong) for each need and problem, in the gate's order, each field once."""
    found: dict[str, str] = {}
    for need in checked.needs:
        why = _NEED_WORDS.get(need.reason, "cannot be used")
        if need.allowed:
            why += f" ({', '.join(json.dumps(v, default=str) for v in need.allowed[:20])})"
        found.setdefault(need.name, why)
    for problem in checked.problems:
        name = problem.field or problem.path
        if name:
            found.setdefault(name, f"is refused: {problem.message}")
    return list(found.items())
