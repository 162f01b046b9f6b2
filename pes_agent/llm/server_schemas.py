"""A reply's JSON Schema as a server's own converter can take it, for the dialects that send a schema.

A server that receives a schema (``json_schema``, ``json_object``, ``ollama``) turns it into a
grammar itself, and each converter reads less of JSON Schema than pes-agent writes:

- llama-cpp-python's (``json_object``) mangles ``pattern`` (``\\d`` becomes a literal, and the
  server answers "failed to parse grammar"), bounds ``maxLength`` by nesting one optional rule per
  character (hundreds deep: llama.cpp has died of it), and reads ``{}`` as "an object";
- llama.cpp's C++ converter (behind ``llama-server``'s and Ollama's ``json_schema`` and ``format``)
  takes only a ``pattern`` anchored with ``^...$`` and passes escapes such as ``\\d`` on as they are,
  which its grammar parser then refuses; OpenAI and vLLM take more, but the dialect does not say
  which server answers, so the schema is cut to what all of them take;
- none knows pes-agent's own ``x-composed-*`` keywords (an arithmetic expression of grounded
  numbers, ``composition``), which would leave the field a free string: they are spelled out as an
  ``enum`` of the expressions they allow, so a guided run gets the same choices as under its grammar.

What is dropped only loosens the schema, never tightens it: the argument gate validates each reply
against the full schema afterwards, as always. The ``grammar`` dialect sends pes-agent's own GBNF
(``reply_grammar``) and needs none of this.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pes_agent.llm.composition import COMPOSED_OF, OPERATORS, Composition

__all__ = ["ServerSchema", "for_server"]

_ANY_VALUE = {"type": ["string", "number", "boolean", "array", "object", "null"]}
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SUBSCHEMAS = ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems", "not")

_DROPPED = {
    "pattern": "no `pattern` (its converter mangles regular expressions and fails the request)",
    "maxLength": "no `maxLength` (its converter nests one rule per character, which can crash the server)",
    "unanchored": "no `pattern` that is not anchored `^...$` or holds a `\\` escape (llama.cpp's converter "
    "refuses it)",
    "composed": "arithmetic choices spelled out as an `enum` (no converter reads `x-composed-of`)",
}


@dataclass(frozen=True, kw_only=True)
class ServerSchema:
    schema: dict[str, Any]
    """What is sent."""
    changes: tuple[str, ...]
    """What was dropped or spelled out, in words, for the one-time log line; empty: sent as it is."""


def for_server(dialect: str, schema: Mapping[str, Any]) -> ServerSchema:
    """``schema`` as the server behind ``dialect`` can take it."""
    seen: set[str] = set()
    out = _reduce(dict(schema), dialect, seen)
    return ServerSchema(schema=out, changes=tuple(_DROPPED[k] for k in _DROPPED if k in seen))


def _reduce(schema: Any, dialect: str, seen: set[str]) -> Any:
    if isinstance(schema, list):
        return [_reduce(s, dialect, seen) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if not schema and dialect == "json_object":
        return dict(_ANY_VALUE)
    composition = Composition.of(schema)
    if composition is not None:
        seen.add("composed")
        return _spelled_out(schema, composition)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _reduce(sub, dialect, seen) for name, sub in value.items()}
        elif key in _SUBSCHEMAS:
            out[key] = _reduce(value, dialect, seen)
        elif key == "pattern" and isinstance(value, str) and _refused_pattern(dialect, value):
            seen.add("pattern" if dialect == "json_object" else "unanchored")
        elif key == "maxLength" and dialect == "json_object":
            seen.add("maxLength")
        else:
            out[key] = value
    return out


def _refused_pattern(dialect: str, pattern: str) -> bool:
    if dialect == "json_object":
        return True
    return not (pattern.startswith("^") and pattern.endswith("$")) or "\\" in pattern


def _spelled_out(schema: Mapping[str, Any], composition: Composition) -> dict[str, Any]:
    """The expressions a composed value allows, spaced as its grammar writes them by default."""
    operators = composition.operators or tuple(OPERATORS)
    values = [f"{a} {op} {b}" for a, b in composition.pairs() for op in operators]
    kept = {k: v for k, v in schema.items() if not k.startswith("x-composed") and k != COMPOSED_OF}
    kept.pop("pattern", None)
    return {**kept, "enum": values or [composition.pieces[0]]}
