"""JSON Schemas of the replies each phase expects, for providers that constrain decoding.

The text protocol stays the default; these are sent only when a provider sets `structured_output`.
The tool-step schema is narrowed to the step's allowed tools and their argument schemas, so a small
model cannot produce an unknown tool name or invent an argument.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pes_agent.llm.plans import FIND_TOOLS_PHRASES

_TEXT = {"type": "string"}


REF_DEPTH = 3
"""Levels a recursive ``$ref`` is unrolled to when a tool schema is embedded in a reply schema."""


def inline_refs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with its local ``$ref``s replaced by what they point at, and no ``$defs``.

    A tool's input schema (a pydantic model argument gives ``{"$ref": "#/$defs/Address"}``) is
    embedded inside a reply schema, where ``#/...`` would point into the wrong document. A recursive
    definition is unrolled ``REF_DEPTH`` levels; below that the reference admits no object (an
    empty list or null where the schema allows one), never "anything".
    """
    inlined: dict[str, Any] = _inline(schema, schema, ())
    return inlined


def _inline(node: Any, root: Mapping[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(n, root, seen) for n in node]
    if not isinstance(node, Mapping):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        if seen.count(ref) >= REF_DEPTH:
            return {"type": "null"}
        target = _pointer(root, ref)
        if target is None:  # dangling: left as it is, for the grammar to refuse with the reason
            return dict(node)
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return _inline({**target, **rest} if isinstance(target, Mapping) else target, root, (*seen, ref))
    return {k: _inline(v, root, seen) for k, v in node.items() if k not in ("$defs", "definitions")}


def _pointer(root: Mapping[str, Any], ref: str) -> Any:
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def plan_reply_schema(tool_names: Sequence[str], *, find_tools: bool = False) -> dict[str, Any]:
    """A plan whose steps name only ``tool_names``; with ``find_tools``, the planner may fill
    ``findTools`` (what the tools it misses must do) to be shown more tools before it plans."""
    tools: dict[str, Any] = {"type": "array", "items": {"type": "string", "enum": list(tool_names)}}
    if not tool_names:
        tools = {"type": "array", "maxItems": 0}
    item = {
        "type": "object",
        "properties": {
            "id": _TEXT,
            "description": _TEXT,
            "stepType": {"type": "string", "enum": ["tool", "reasoning"]},
            "requiredTools": tools,
            "expectedOutcome": _TEXT,
            "dependencies": {"type": "array", "items": _TEXT},
        },
        "required": ["id", "description", "stepType", "requiredTools", "dependencies"],
        "additionalProperties": False,
    }
    properties: dict[str, Any] = {
        "title": _TEXT,
        "intent": _TEXT,
        "plan": _TEXT,
        "todoList": {"type": "array", "items": item},
    }
    if find_tools:
        properties["findTools"] = {"type": "array", "items": _TEXT, "maxItems": FIND_TOOLS_PHRASES}
    return {
        "type": "object",
        "properties": properties,
        "required": ["title", "intent", "plan", "todoList"],
        "additionalProperties": False,
    }


def content_reply_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"content": _TEXT, "nextStepDecision": {"type": "string", "enum": ["complete_item"]}},
        "required": ["content"],
        "additionalProperties": False,
    }


def step_reply_schema(tools: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Either calls of exactly these tools with their own argument schemas, or the step's content."""
    calls = [
        {
            "type": "object",
            "properties": {"toolName": {"const": name}, "arguments": inline_refs(schema)},
            "required": ["toolName", "arguments"],
            "additionalProperties": False,
        }
        for name, schema in tools.items()
    ]
    if not calls:
        return content_reply_schema()
    with_calls = {
        "type": "object",
        "properties": {"toolCalls": {"type": "array", "minItems": 1, "items": {"anyOf": calls}}},
        "required": ["toolCalls"],
        "additionalProperties": False,
    }
    return {"anyOf": [with_calls, content_reply_schema()]}
