"""JSON Schemas of the replies each phase expects, for providers that constrain decoding.

The text protocol stays the default; these are sent only when a provider sets `structured_output`.
The tool-step schema is narrowed to the step's allowed tools and their argument schemas, so a small
model cannot produce an unknown tool name or invent an argument.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

_TEXT = {"type": "string"}


def plan_reply_schema(tool_names: Sequence[str]) -> dict[str, Any]:
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
    return {
        "type": "object",
        "properties": {
            "title": _TEXT,
            "intent": _TEXT,
            "plan": _TEXT,
            "todoList": {"type": "array", "items": item},
        },
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
            "properties": {"toolName": {"const": name}, "arguments": dict(schema)},
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
