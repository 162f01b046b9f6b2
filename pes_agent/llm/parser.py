"""Model replies in the text protocol, turned into typed results: one function per phase.

Replies come from any chat model, so every function expects prose around the JSON, ``<think>``
blocks, code fences with or without markers, snake_case keys, and ``<`` anywhere. Two rules hold
throughout: a reply cut off by the token limit never yields a tool call (a repaired fragment looks
complete but is not), and anything tolerated is reported as a ``ParseWarning`` rather than hidden.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pes_agent.errors import ParseError
from pes_agent.llm.jsonfind import (
    Scan,
    as_id,
    as_text,
    excerpt,
    maybe_json,
    pick,
    prose_outside,
    scan,
    trailing_fence,
    unwrap_string,
)
from pes_agent.llm.markers import (
    MAIN_END_RE,
    MAIN_START_RE,
    THINK_CLOSE_RE,
    UI_END_RE,
    UI_START_RE,
    cut_block,
    split_thinking,
    strip_markers,
)
from pes_agent.llm.plans import CALL_NAME_KEYS, LENGTH_REASONS, parse_plan, plan_from_object
from pes_agent.llm.replies import ParsedAnswer, ParsedPlan, ParsedStep, ParseWarning
from pes_agent.tools.spec import ToolCall

__all__ = ["parse_answer", "parse_fill", "parse_plan", "parse_step", "split_thinking"]

COMPLETE_REASONS = frozenset({"stop", "end_turn", "eos", "stop_sequence", "tool_calls", "function_call"})
"""Finish reasons that say the model ended its reply itself."""

_CALL_LIST_KEYS = ("toolCalls", "tool_calls")
_CALL_NAME_KEYS = CALL_NAME_KEYS
_ARG_KEYS = ("arguments", "parameters", "args", "input")
_ENVELOPE_KEYS = (
    *_CALL_LIST_KEYS,
    "content",
    "updatedPlan",
    "updated_plan",
    "nextStepDecision",
    "next_step_decision",
)
_Warnings = list[ParseWarning]


def _warn(warnings: _Warnings, code: str, detail: str) -> None:
    warnings.append(ParseWarning(code=code, detail=detail))


def _answer_or_thinking(text: str) -> str:
    """The answer, or the thinking when there is no answer: some models put their whole reply there."""
    answer, thinking = split_thinking(text)
    return answer or thinking or ""


# --- planning ------------------------------------------------------------------------------------


# --- execution -----------------------------------------------------------------------------------


def parse_step(text: str, *, finish_reason: str | None = "stop") -> ParsedStep:
    """An execution reply: tool calls, or the step's content, maybe with a plan update."""
    answer, thinking = split_thinking(text)
    # With no answer, JSON in a *finished* thinking block is used (some models answer there); an
    # unclosed block is a model that never finished thinking, and nothing in it runs.
    in_thinking = not answer and thinking is not None and THINK_CLOSE_RE.search(text) is not None
    answer = unwrap_string(thinking if in_thinking and thinking else answer)
    reason = finish_reason or ""
    result = scan(answer, repair=reason not in LENGTH_REASONS)
    cut = _truncation(reason, answer, result)
    if cut is not None:
        warning = ParseWarning(code="truncation_detected", detail=cut)
        content = None if in_thinking else prose_outside(answer, result) or None
        return ParsedStep(content=content, thinking=thinking, truncated=True, warnings=(warning,))
    warnings: _Warnings = [
        ParseWarning(code="malformed_json", detail=f"JSON at character {at} does not decode; ignored")
        for at, _ in result.malformed
    ]
    chosen = next((f for f in result.found if _is_envelope(f.value)), None)
    if chosen is None:
        content = None if in_thinking else _fallback_content(answer, result)
        return ParsedStep(content=content, thinking=thinking, warnings=tuple(warnings))
    if in_thinking:
        _warn(warnings, "answer_in_thinking", "no text outside `<think>`; used the JSON in the thinking")
    ignored = [f for f in result.found if f is not chosen and _is_structured(f.value)]
    if ignored:
        _warn(
            warnings,
            "multiple_objects_ignored",
            f"used the JSON at character {chosen.start}; ignored {len(ignored)} other value(s)",
        )
    if chosen.repaired:
        _warn(warnings, "json_repaired", "fixed quotes, trailing commas or Python literals in the JSON")
    step = _step_from(chosen.value, warnings)
    content = step.content
    if not step.tool_calls and content is None and not in_thinking:
        content = prose_outside(answer, result) or None
    return replace(step, content=content, thinking=thinking, warnings=tuple(warnings))


def _truncation(reason: str, answer: str, result: Scan) -> str | None:
    """Why the reply counts as cut off, or None."""
    if reason in LENGTH_REASONS:
        return f"finish reason {reason!r}: the reply hit the token limit; nothing in it runs"
    if result.unclosed_at is not None:
        return f"the JSON opened at character {result.unclosed_at} never closes; nothing in it runs"
    if reason not in COMPLETE_REASONS and answer.count("```") % 2 == 1:
        return f"finish reason {reason!r} and a ``` fence that never closes; nothing in it runs"
    return None


def _is_call(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    if "toolName" in value or "tool_name" in value:
        return True
    named = "name" in value or isinstance(value.get("function"), dict)
    return named and any(k in value for k in (*_ARG_KEYS, "function"))


def _is_envelope(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_is_call(v) for v in value)
    return isinstance(value, dict) and (_is_call(value) or any(k in value for k in _ENVELOPE_KEYS))


def _is_structured(value: Any) -> bool:
    return isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, dict) for v in value))


def _fallback_content(answer: str, result: Scan) -> str | None:
    """The step's content when no envelope was found: the prose, or a lone JSON value without fence.

    Malformed JSON is left out: broken envelope syntax must not become the item's result.
    """
    if result.malformed:
        return prose_outside(answer, result) or None
    if len(result.found) == 1 and not prose_outside(answer, result):
        found = result.found[0]
        return answer[found.start : found.end].strip()
    return answer.strip() or None


def _step_from(value: Any, warnings: _Warnings) -> ParsedStep:
    if isinstance(value, list) or _is_call(value):
        return ParsedStep(tool_calls=_calls(value if isinstance(value, list) else [value], warnings))
    raw_calls = maybe_json(pick(value, *_CALL_LIST_KEYS))
    decision = pick(value, "nextStepDecision", "next_step_decision")
    return ParsedStep(
        tool_calls=_calls(raw_calls, warnings) if raw_calls is not None else (),
        content=as_text(value.get("content")),
        next_step_decision=decision.strip() if isinstance(decision, str) else None,
        updated_plan=_updated_plan(pick(value, "updatedPlan", "updated_plan"), warnings),
    )


def _calls(raw: Any, warnings: _Warnings) -> tuple[ToolCall, ...]:
    if not isinstance(raw, list):
        _warn(warnings, "bad_tool_call", f"`toolCalls` is a {type(raw).__name__}, not a list; ignored")
        return ()
    return tuple(call for pos, item in enumerate(raw, 1) if (call := _call(item, pos, warnings)))


def _call(raw: Any, pos: int, warnings: _Warnings) -> ToolCall | None:
    """One call; OpenAI's ``{"id", "function": {"name", "arguments"}}`` shape is accepted too."""

    def bad(why: str) -> ToolCall | None:
        _warn(warnings, "bad_tool_call", f"tool call {pos}: {why}; dropped")
        return None

    if not isinstance(raw, dict):
        return bad(f"is a {type(raw).__name__}, not an object")
    source = raw["function"] if isinstance(raw.get("function"), dict) else raw
    name = pick(source, *_CALL_NAME_KEYS)
    if not isinstance(name, str) or not name.strip():
        return bad("has no `toolName`")
    arguments = maybe_json(maybe_json(pick(source, *_ARG_KEYS)))
    if arguments is None or arguments == "":
        arguments = {}
    call_id = as_id(pick(raw, "callId", "call_id", "id")) or ""
    if not isinstance(arguments, dict):  # kept: the gate tells the model to send an object
        what = f"arguments of {name.strip()!r} are not a JSON object: {excerpt(str(arguments))}"
        _warn(warnings, "non_object_arguments", f"tool call {pos}: {what}")
        return ToolCall(call_id=call_id, tool_name=name.strip(), arguments={}, non_object_arguments=arguments)
    return ToolCall(call_id=call_id, tool_name=name.strip(), arguments=arguments)


def _updated_plan(raw: Any, warnings: _Warnings) -> ParsedPlan | None:
    """A plan update, read like a plan; a malformed one is ignored (the content still counts).

    Its item warnings join the step's warnings (prefixed ``updatedPlan:``), so each is reported once.
    """
    raw = maybe_json(raw)
    if raw is None:
        return None
    if isinstance(raw, list):
        raw = {"todoList": raw}
    try:
        if not isinstance(raw, dict):
            raise ParseError(f"expected an object, got {type(raw).__name__}")
        plan = plan_from_object(raw)
    except ParseError as exc:
        _warn(warnings, "bad_updated_plan", f"updatedPlan ignored: {exc}")
        return None
    warnings.extend(replace(w, detail=f"updatedPlan: {w.detail}") for w in plan.warnings)
    return replace(plan, warnings=())


# --- synthesis -----------------------------------------------------------------------------------


def parse_answer(text: str) -> ParsedAnswer:
    """A synthesis reply: the answer text, clean of markers, and its UI metadata if any.

    With ``<mainContent>`` the answer is inside it and metadata in ``<uiMetadata>`` (or a JSON value
    after ``</mainContent>``). Without it, a trailing ```json object fence after some prose is the
    metadata. Metadata that is not a JSON object is dropped, never left in the answer.
    """
    answer, thinking = split_thinking(text)
    ui_block, before, after = cut_block(answer, UI_START_RE, UI_END_RE)
    answer = answer if ui_block is None else before + after
    main, _, after_main = cut_block(answer, MAIN_START_RE, MAIN_END_RE)
    ui: dict[str, Any] | None = None
    if ui_block is not None:
        ui = _first_object(ui_block)
    elif main is not None:
        ui = _first_object(after_main)
    if main is not None:
        answer = main
    elif ui_block is None and (fenced := trailing_fence(answer)) is not None:
        prose, value = fenced
        if isinstance(value, dict) and prose.strip():
            answer, ui = prose, value
    return ParsedAnswer(response=strip_markers(answer).strip(), ui_metadata=ui, thinking=thinking)


def _first_object(text: str) -> dict[str, Any] | None:
    return next((f.value for f in scan(text, repair=True).found if isinstance(f.value, dict)), None)


# --- arg-fill ------------------------------------------------------------------------------------


def parse_fill(
    text: str, fields: Sequence[str], tool_name: str, *, finish_reason: str | None = "stop"
) -> dict[str, Any]:
    """The asked ``fields`` from an arg-fill reply, trying in order (docs/recovery.md, "Rules made exact"
    2): a JSON object of them; a ``toolCalls`` envelope (or a bare call) for ``tool_name``; tagged
    fields, ``<field>value</field>``, anywhere in the reply, the prose around them ignored.

    Only asked fields with a non-null value are returned (a null fills nothing). Keys and tag names
    match exactly, else case- and separator-insensitively when that is unambiguous. A tagged value is
    the text between the tags, stripped (and unquoted when it is one JSON string): the gate coerces it
    like any other value (a tagged ``5`` for an integer field becomes 5, with its repair event).
    """
    answer = _answer_or_thinking(text)
    reason = finish_reason or ""
    result = scan(unwrap_string(answer), repair=reason not in LENGTH_REASONS)
    if reason in LENGTH_REASONS or result.unclosed_at is not None:
        raise ParseError(f"arg-fill reply for tool {tool_name!r} was cut off; its values cannot be trusted")
    for found in result.found:
        source = _fill_source(found.value, fields, tool_name)
        values = _asked(source, fields) if source is not None else {}
        if values:
            return values
    values = _asked(_tagged(answer), fields)
    if values:
        return values
    raise ParseError(
        f"arg-fill reply for tool {tool_name!r} holds no JSON object and no tag with any of the fields "
        f"{list(fields)}; expected {{{', '.join(f'{f!r}: value' for f in fields)}}}. "
        f"Reply began: {excerpt(answer)}"
    )


_OPEN_TAG = re.compile(r"<\s*([A-Za-z_][\w.-]*)\s*>")


def _tagged(text: str) -> dict[str, str]:
    """``<name>value</name>`` pairs anywhere in ``text``, the first of each name; tags may nest
    (``<arguments><city>Lima</city></arguments>`` gives both ``arguments`` and ``city``)."""
    values: dict[str, str] = {}
    for opening in _OPEN_TAG.finditer(text):
        name = opening.group(1)
        if name in values:
            continue
        closing = re.compile(rf"<\s*/\s*{re.escape(name)}\s*>", re.IGNORECASE).search(text, opening.end())
        if closing is not None:
            values[name] = _tag_value(text[opening.end() : closing.start()])
    return values


def _tag_value(raw: str) -> str:
    """The text between two tags, stripped; ``"high"`` (one JSON string) is read as ``high``."""
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        if isinstance(decoded, str):
            return decoded
    return value


def _fill_source(value: Any, fields: Sequence[str], tool_name: str) -> Mapping[str, Any] | None:
    """Where the values are: the object itself, its ``arguments``, or the matching call's arguments."""
    if isinstance(value, dict) and any(f in value for f in fields):
        return value
    if _is_envelope(value) and (isinstance(value, list) or pick(value, *_CALL_LIST_KEYS) or _is_call(value)):
        calls = _step_from(value, []).tool_calls
        return next((c.arguments for c in calls if _norm(c.tool_name) == _norm(tool_name)), None)
    if isinstance(value, dict):
        nested = maybe_json(pick(value, *_ARG_KEYS))
        return nested if isinstance(nested, dict) else value
    return None


def _norm(key: str) -> str:
    return re.sub(r"[\s_-]", "", key).lower()


def _asked(source: Mapping[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    by_norm: dict[str, list[str]] = {}
    for key in source:
        by_norm.setdefault(_norm(str(key)), []).append(key)
    values: dict[str, Any] = {}
    for field in fields:
        keys = [field] if field in source else by_norm.get(_norm(field), [])
        if len(keys) == 1 and source[keys[0]] is not None:
            values[field] = source[keys[0]]
    return values
