"""Planning replies: the todo list read from JSON that any chat model might wrap in prose.

Ids are coerced to strings, step types read case-insensitively, and one bad item is dropped with a
warning of its own instead of losing the whole list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from pes_agent.errors import ParseError
from pes_agent.llm.jsonfind import Found, as_id, as_text, excerpt, maybe_json, pick, scan
from pes_agent.llm.markers import PLAN_END, PLAN_END_RE, PLAN_START, PLAN_START_RE, split_thinking
from pes_agent.llm.replies import ParsedPlan, ParseWarning, PlannedItem

LENGTH_REASONS = frozenset({"length", "max_tokens", "max_output_tokens"})
"""Finish reasons that say the reply was cut off by the token limit."""

FIND_TOOLS_PHRASES = 3
"""At most this many searches are read from one ``findTools`` reply."""

_TODO_KEYS = ("todoList", "todo_list", "todos")
_FIND_KEYS = ("findTools", "find_tools")
CALL_NAME_KEYS = ("toolName", "tool_name", "name")
_TOOL_WORDS = frozenset({"tool", "tools", "tool_call", "action"})
_REASONING_WORDS = frozenset({"reasoning", "reason", "thinking", "analysis"})
_Warnings = list[ParseWarning]


def _warn(warnings: _Warnings, code: str, detail: str) -> None:
    warnings.append(ParseWarning(code=code, detail=detail))


def _answer_or_thinking(text: str) -> str:
    """The answer, or the thinking when there is no answer: some models put their whole reply there."""
    answer, thinking = split_thinking(text)
    return answer or thinking or ""


def parse_plan(text: str, *, finish_reason: str = "stop") -> ParsedPlan:
    """A planning (or refinement) reply as a plan; an unusable reply raises ``ParseError``.

    The JSON is looked for between the plan markers first, then anywhere in the reply (fenced or
    bare). An empty todo list is a valid plan: the query needs no steps.
    """
    answer = _answer_or_thinking(text)
    repair = finish_reason not in LENGTH_REASONS
    start = PLAN_START_RE.search(answer)
    regions = [answer]
    if start is not None:
        end = PLAN_END_RE.search(answer, start.end())
        regions.insert(0, answer[start.end() : end.start() if end else len(answer)])
    results = [scan(region, repair=repair) for region in regions]
    for result in results:
        obj = _plan_object(result.found)
        if obj is not None:
            return plan_from_object(obj)
    cut_off = finish_reason in LENGTH_REASONS or results[-1].unclosed_at is not None
    why = "it looks cut off (the JSON never closes)" if cut_off else "none was found"
    raise ParseError(
        f"planning reply holds no JSON object with a `todoList`: {why}. Expected "
        f'{{"title", "intent", "plan", "todoList": [...]}} between `{PLAN_START}` and `{PLAN_END}` '
        f"(or in a ```json fence). Reply began: {excerpt(answer)}"
    )


def find_tools_request(text: str) -> tuple[str, ...]:
    """What a planning reply asks to search for (``{"findTools": ["...", ...]}``, or one string),
    before it plans; () when it asks for nothing. A reply that fills ``findTools`` and a todo list
    alike is taken as asking: the planner said it misses tools."""
    for item in scan(_answer_or_thinking(text), repair=True).found:
        if isinstance(item.value, dict):
            asked = pick(item.value, *_FIND_KEYS)
            asked = [asked] if isinstance(asked, str) else asked
            if isinstance(asked, list):
                phrases = dict.fromkeys(a.strip() for a in asked if isinstance(a, str) and a.strip())
                if phrases:
                    return tuple(phrases)[:FIND_TOOLS_PHRASES]
    return ()


def _plan_object(found: Sequence[Found]) -> Mapping[str, Any] | None:
    """The first value that holds a todo list: an object, one nested one level down, or a bare list."""
    for item in found:
        value = item.value
        if not isinstance(value, dict):
            continue
        if pick(value, *_TODO_KEYS) is not None:
            return value
        for key, inner in value.items():
            if isinstance(inner, dict) and pick(inner, *_TODO_KEYS) is not None:
                outer = {k: v for k, v in value.items() if k != key}
                return {**outer, **inner}
    for item in found:
        value = item.value
        if (
            isinstance(value, list)
            and value
            and all(isinstance(v, dict) and "description" in v for v in value)
        ):
            return {"todoList": value}
    return None


def plan_from_object(obj: Mapping[str, Any]) -> ParsedPlan:
    """A decoded plan object as a ``ParsedPlan``; bad items are dropped one by one with a warning."""
    todo = maybe_json(pick(obj, *_TODO_KEYS))
    if not isinstance(todo, list):
        raise ParseError(
            f"plan JSON has no `todoList` list (got {type(todo).__name__}); expected "
            '`"todoList": [{"id", "description", "stepType", ...}]`'
        )
    warnings: _Warnings = []
    items = [item for pos, raw in enumerate(todo, 1) if (item := _todo_item(raw, pos, warnings))]
    items = _dedupe_ids(items, warnings)
    items = _known_dependencies(items, warnings)
    return ParsedPlan(
        title=as_text(obj.get("title")),
        intent=as_text(obj.get("intent")),
        plan=as_text(obj.get("plan")),
        items=tuple(items),
        warnings=tuple(warnings),
    )


def _todo_item(raw: Any, pos: int, warnings: _Warnings) -> PlannedItem | None:
    def bad(why: str) -> PlannedItem | None:
        _warn(warnings, "bad_todo_item", f"todo item {pos}: {why}; dropped")
        return None

    if not isinstance(raw, dict):
        return bad(f"is a {type(raw).__name__}, not an object")
    description = pick(raw, "description", "task")
    if not isinstance(description, str) or not description.strip():
        return bad("has no `description` text")
    tools = _names(pick(raw, "requiredTools", "required_tools", "tools"))
    ident = as_id(pick(raw, "id", "stepId", "step_id")) or f"step_{pos}"
    return PlannedItem(
        id=ident,
        description=description.strip(),
        step_type=_step_type(pick(raw, "stepType", "step_type", "type"), tools, ident, warnings),
        required_tools=tools,
        expected_outcome=as_text(pick(raw, "expectedOutcome", "expected_outcome")),
        dependencies=_ids(pick(raw, "dependencies", "dependsOn", "depends_on")),
    )


def _step_type(
    value: Any, tools: tuple[str, ...], ident: str, warnings: _Warnings
) -> Literal["tool", "reasoning"]:
    """Any required tool makes a tool step (as the executor treats it); otherwise the stated type."""
    word = value.strip().lower() if isinstance(value, str) else None
    if word is not None and word not in _TOOL_WORDS | _REASONING_WORDS:
        kind = "tool" if tools else "reasoning"
        _warn(warnings, "unknown_step_type", f"todo item {ident!r}: stepType {value!r} read as {kind}")
    return "tool" if tools or word in _TOOL_WORDS else "reasoning"


def _names(value: Any) -> tuple[str, ...]:
    """Tool names from a list (or one string); objects with a name are accepted, other entries dropped."""
    value = [value] if isinstance(value, str) else value
    if not isinstance(value, list):
        return ()
    names = [pick(v, *CALL_NAME_KEYS) if isinstance(v, dict) else v for v in value]
    return tuple(dict.fromkeys(n.strip() for n in names if isinstance(n, str) and n.strip()))


def _ids(value: Any) -> tuple[str, ...]:
    values = value if isinstance(value, list) else [value]
    return tuple(dict.fromkeys(i for v in values if (i := as_id(v))))


def _dedupe_ids(items: list[PlannedItem], warnings: _Warnings) -> list[PlannedItem]:
    """An exact repeat of an item is dropped; a different item reusing an id is renamed ``<id>_2``.

    Renaming keeps the work the model asked for; dependencies on the id keep meaning the first item.
    """
    kept: dict[str, PlannedItem] = {}
    for item in items:
        first = kept.get(item.id)
        if first is None:
            kept[item.id] = item
        elif first == item:
            _warn(warnings, "duplicate_todo_item", f"todo item {item.id!r} repeats an earlier one; dropped")
        else:
            new_id = next(f"{item.id}_{n}" for n in range(2, len(items) + 3) if f"{item.id}_{n}" not in kept)
            _warn(
                warnings, "duplicate_todo_id", f"a second todo item uses id {item.id!r}; renamed {new_id!r}"
            )
            kept[new_id] = replace(item, id=new_id)
    return list(kept.values())


def _known_dependencies(items: list[PlannedItem], warnings: _Warnings) -> list[PlannedItem]:
    ids = {item.id for item in items}
    out = []
    for item in items:
        unknown = [d for d in item.dependencies if d not in ids or d == item.id]
        if unknown:
            _warn(
                warnings,
                "unknown_dependency",
                f"todo item {item.id!r}: dependencies {unknown} name no other item; dropped",
            )
            item = replace(item, dependencies=tuple(d for d in item.dependencies if d not in unknown))
        out.append(item)
    return out
