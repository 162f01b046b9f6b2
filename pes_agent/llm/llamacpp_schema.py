"""Reply schemas tightened for grammar-constrained decoding by a small local model.

A JSON Schema turned into a llama.cpp grammar guarantees the *shape* of every token sequence the model
may produce, but not that the sequence ends: with greedy decoding a 135M-parameter model happily
repeats one tool name in ``requiredTools`` or one phrase inside a string until the token cap cuts the
JSON off unclosed. Bounding every list and free string makes each reply finish within the cap. A reply
that fits the tightened schema still validates against the original one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_BOUNDS", "Bounds", "bounds_for", "grammar_schema"]


@dataclass(frozen=True, kw_only=True)
class Bounds:
    """Caps applied where the schema sets none."""

    max_items: int
    """Items of a list (a list of enum values is capped at the enum's size: each at most once)."""
    max_length: int
    """Characters of a free string (no enum, const, pattern or format)."""


DEFAULT_BOUNDS = Bounds(max_items=8, max_length=400)
"""Tool arguments, step results, arg-fill values."""

PLAN_PHASES = frozenset({"planning", "refinement"})
PLAN_STRING_CAP = 80
"""Plan fields are labels and one-line descriptions."""
PLAN_STEP_TOKENS = 200
"""Tokens a bounded plan step may take (capped description and outcome, tool names, ids): 2 steps fit
in 512 reply tokens, 5 in 1024; raise `max_tokens` for longer plans."""


_ANY_VALUE = {"type": ["string", "number", "boolean", "array", "object", "null"]}
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions")
_SUBSCHEMAS = ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems", "not")


def bounds_for(phase: str, max_tokens: int) -> Bounds:
    """Bounds under which a reply of this phase fits in ``max_tokens``.

    A plan is the long reply: its lists (steps, tools, dependencies) get as many items as the cap
    leaves room for at ``PLAN_STEP_TOKENS`` each (2 to 8), so a plan always closes before the cap.
    """
    if phase in PLAN_PHASES:
        return Bounds(max_items=max(2, min(8, max_tokens // PLAN_STEP_TOKENS)), max_length=PLAN_STRING_CAP)
    return DEFAULT_BOUNDS


def grammar_schema(schema: Any, bounds: Bounds = DEFAULT_BOUNDS) -> Any:
    """A copy of ``schema`` with every list and free string bounded.

    An empty schema (``{}``, any value) is spelled out as a union of types: llama.cpp's converter
    reads ``{}`` as "an object", which would force a string or number argument into braces.
    """
    if isinstance(schema, list):
        return [grammar_schema(s, bounds) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if not schema:
        return dict(_ANY_VALUE)
    out = {key: _child(key, value, bounds) for key, value in schema.items()}
    _bound_tool_calls(schema, out)
    items = out.get("items")
    if isinstance(items, dict) and "maxItems" not in out:
        cap = len(items["enum"]) if isinstance(items.get("enum"), list) else bounds.max_items
        out["maxItems"] = max(cap, int(out.get("minItems", 0)))
    free = not any(k in out for k in ("enum", "const", "pattern", "format", "maxLength"))
    if out.get("type") == "string" and free:
        out["maxLength"] = max(bounds.max_length, int(out.get("minLength", 0)))
    return out


def _bound_tool_calls(original: Mapping[str, Any], out: dict[str, Any]) -> None:
    """At most one call per allowed tool in a step reply (a step that needs more makes them in its
    next turn): unbounded, greedy decoding repeats the same call until the list cap."""
    given = (original.get("properties") or {}).get("toolCalls")
    calls = (out.get("properties") or {}).get("toolCalls")
    if not isinstance(given, dict) or not isinstance(calls, dict) or "maxItems" in given:
        return
    items = given.get("items")
    tools = len(items.get("anyOf") or [items]) if isinstance(items, dict) else 1
    calls["maxItems"] = max(tools, int(given.get("minItems", 0)))


def _child(key: str, value: Any, bounds: Bounds) -> Any:
    if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
        return {name: grammar_schema(sub, bounds) for name, sub in value.items()}
    if key in _SUBSCHEMAS:
        return grammar_schema(value, bounds)
    return value
