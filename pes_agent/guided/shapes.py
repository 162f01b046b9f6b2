"""A tool as planning by data flow reads it: its inputs, the output fields it declares with their
words and types, and whether a field can fill an argument. Worked out once per tool shape.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pes_agent.guided.words import stems
from pes_agent.prompts.schemas import inline_refs

__all__ = ["PreparedTool", "ToolShape", "compatible", "gives_number", "output_fields", "prepared", "types_of"]


@dataclass(frozen=True, kw_only=True)
class ToolShape:
    """What planning by data flow reads of a tool: its input schema, its declared output and its
    one-line description."""

    name: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None = None
    description: str = ""


@dataclass(frozen=True, kw_only=True)
class PreparedTool:
    """A tool as the search reads it, worked out once: its input schema with references inlined, its
    output fields with their words, the words of its name and of its description."""

    schema: Mapping[str, Any]
    fields: tuple[tuple[str, Mapping[str, Any], frozenset[str]], ...]
    """Output fields that carry something new: a field named as one of the tool's inputs echoes the
    value it was given (a weather tool's ``city``) and produces nothing."""
    called: frozenset[str]
    about: frozenset[str]
    text: str
    """Its name, description and output fields, as words of like meaning are looked up in."""


_PREPARED: dict[int, tuple[ToolShape, PreparedTool]] = {}
"""Prepared tools by the identity of their shape (a run plans with the same shapes for every part)."""


def prepared(shape: ToolShape) -> PreparedTool:
    """``shape`` as the search reads it, worked out once per shape."""
    kept = _PREPARED.get(id(shape))
    if kept is not None and kept[0] is shape:
        return kept[1]
    schema = inline_refs(shape.input_schema)
    inputs = set(schema.get("properties") or ())
    fields = tuple(
        (path, out, frozenset(stems(path.replace("[0]", " "))))
        for path, out in (output_fields(shape.output_schema) if shape.output_schema is not None else ())
        if path.removeprefix("[0].") not in inputs
    )
    called = frozenset(stems(shape.name))
    tool = PreparedTool(
        schema=schema,
        fields=fields,
        called=called,
        about=called | frozenset(stems(shape.description)),
        text=" ".join([shape.name, shape.description, *(path for path, _, _ in fields)]),
    )
    if len(_PREPARED) > 4096:  # shapes of tool sets no longer in use
        _PREPARED.clear()
    _PREPARED[id(shape)] = (shape, tool)
    return tool


def output_fields(
    output_schema: Mapping[str, Any], path: str = "", depth: int = 0
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(path, schema)`` for each scalar field an output declares, spelled as ``$step`` paths spell
    them (``capital``, ``[0].product_id``, ``address.city``); a list is read through its first item."""
    schema = inline_refs(output_schema)
    if depth > 3:
        return
    if schema.get("type") == "array" and isinstance(schema.get("items"), Mapping):
        yield from output_fields(schema["items"], f"{path}[0]", depth + 1)
        return
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        if path and _scalar(schema):
            yield path, schema
        return
    for name, prop in properties.items():
        if isinstance(prop, Mapping):
            yield from output_fields(prop, f"{path}.{name}" if path else str(name), depth + 1)


_NUMERIC = {"number", "integer"}


def gives_number(shape: ToolShape) -> bool | None:
    """Whether a tool's declared output holds a number it finds, or a list (whose items count): what
    "how much" and "how many" ask for. None when the tool declares no output: nothing is known."""
    if shape.output_schema is None:
        return None
    return any("[0]" in path or types_of(out) & _NUMERIC for path, out in output_fields(shape.output_schema))


def types_of(schema: Mapping[str, Any]) -> set[str]:
    """The JSON types a schema allows, through ``anyOf``/``oneOf`` (an ``Optional[float]``)."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    alternatives = schema.get("anyOf") or schema.get("oneOf") or ()
    return {t for a in alternatives if isinstance(a, Mapping) for t in types_of(a)}


def _scalar(schema: Mapping[str, Any]) -> bool:
    return bool(types_of(schema) & {"string", "number", "integer", "boolean"})


def compatible(out: Mapping[str, Any], argument: Mapping[str, Any]) -> bool:
    """Whether an output field can fill an argument: the same JSON type (any number for a number),
    and for a shaped string (``format``), the same shape when the output declares one."""
    have, want = types_of(out) - {"null"}, types_of(argument) - {"null"}
    if not have or not want:
        return False
    if want & _NUMERIC and have & _NUMERIC:
        return True
    if not have & want:
        return False
    fmt = argument.get("format")
    return fmt is None or out.get("format") in (None, fmt)
