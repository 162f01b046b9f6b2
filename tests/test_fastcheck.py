"""The compiled argument check may only ever say "certainly valid" when jsonschema agrees.

Random arguments, built from each schema and then mutated (wrong types, missing and extra keys,
out-of-range numbers, bools for ints, tuples for lists), go through both; any True from the compiled
check on arguments jsonschema rejects would let invalid arguments reach a tool.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from pes_agent.tools.decorators import tool
from pes_agent.tools.fastcheck import compile_check
from pes_agent.tools.validation import SchemaValidator

CATALOG = Path(__file__).parent / "fixtures" / "catalogs" / "catalog_N200.json"

HAND_WRITTEN: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 5}},
        "required": ["n"],
    },
    {"type": "object", "properties": {"x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}}},
    {
        "type": "object",
        "properties": {"s": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^a"}},
    },
    {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2}},
    },
    {"type": "object", "properties": {"mode": {"enum": ["a", 1, None, True]}}, "additionalProperties": False},
    {"type": "object", "properties": {"c": {"const": 3}}, "additionalProperties": {"type": "string"}},
    {"type": "object", "properties": {"o": {"anyOf": [{"type": "string"}, {"type": "null"}]}}},
    {"type": "object", "properties": {"a": {"allOf": [{"type": "integer"}, {"minimum": 2}]}}},
    {
        "type": ["object", "null"],
        "properties": {
            "nested": {"type": "object", "properties": {"k": {"type": "boolean"}}, "required": ["k"]}
        },
    },
]


def _derived_schema() -> dict[str, Any]:
    @tool
    def f(a: int, b: str | None = None, c: list[str] = [], d: float = 1.0) -> str:  # noqa: B006
        """A derived schema: anyOf with null, defaults, arrays."""
        return ""

    return dict(f.input_schema)


def _schemas() -> list[dict[str, Any]]:
    catalog = [t["inputSchema"] for t in json.loads(CATALOG.read_text(encoding="utf-8"))["tools"]]
    return [*HAND_WRITTEN, _derived_schema(), *catalog]


def _value_for(schema: Any, rng: random.Random, depth: int = 0) -> Any:
    """Mostly plausible values for ``schema``, often wrong on purpose."""
    if not isinstance(schema, dict) or depth > 4:
        return rng.choice([None, 1, "x"])
    if rng.random() < 0.15:
        return rng.choice(
            [None, True, False, 0, 1, -1, 1.5, 2.0, "", "a", "ab", "abcde", [], ["a"], ("a",), {}, {"k": 1}]
        )
    if "enum" in schema:
        return rng.choice(list(schema["enum"]) + [1.0, "other"])
    if "const" in schema:
        return rng.choice(
            [schema["const"], float(schema["const"]) if isinstance(schema["const"], int) else 0]
        )
    for key in ("anyOf", "allOf"):
        if key in schema:
            return _value_for(rng.choice(schema[key]), rng, depth + 1)
    kind = schema.get("type", "object")
    kind = rng.choice(kind) if isinstance(kind, list) else kind
    if kind == "object":
        props = schema.get("properties", {})
        out = {k: _value_for(v, rng, depth + 1) for k, v in props.items() if rng.random() < 0.8}
        if rng.random() < 0.2:
            out["unexpected"] = rng.choice(["x", 1])
        return out
    if kind == "array":
        return [_value_for(schema.get("items"), rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if kind in ("integer", "number"):
        low, high = schema.get("minimum", -10), schema.get("maximum", 10)
        picks = [low, high, low - 1, high + 1, (low + high) / 2, int(low), True]
        return rng.choice(picks)
    if kind == "string":
        return rng.choice(["", "a", "abc", "abcdef", "b" * 50, "ąę"])
    if kind == "boolean":
        return rng.choice([True, False, 0, 1])
    return None


def _valid_example(schema: Any) -> Any:
    """One value that satisfies ``schema`` (for the schemas of this file)."""
    if not isinstance(schema, dict):
        return None
    if "allOf" in schema:
        merged: dict[str, Any] = {}
        for branch in schema["allOf"]:
            merged.update(branch)
        return _valid_example(merged)
    if "anyOf" in schema:
        return _valid_example(schema["anyOf"][0])
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type", "object")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        return {k: _valid_example(v) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [_valid_example(schema.get("items"))] * max(1, schema.get("minItems", 1))
    if kind in ("integer", "number"):
        if "minimum" in schema:
            return schema["minimum"]
        if "exclusiveMinimum" in schema:
            return (
                schema["exclusiveMinimum"] + schema.get("exclusiveMaximum", schema["exclusiveMinimum"] + 2)
            ) / 2
        return schema.get("maximum", 0)
    if kind == "string":
        return "a" * max(1, schema.get("minLength", 1))
    if kind == "boolean":
        return True
    return None


@pytest.mark.parametrize("index", range(len(_schemas())))
def test_the_compiled_check_never_passes_what_jsonschema_rejects(index: int) -> None:
    schema = _schemas()[index]
    check = compile_check(schema)
    assert check is not None, f"schema {index} should be in the compiled subset: {schema}"
    judge = Draft202012Validator(schema)
    rng = random.Random(index)
    for _ in range(300):
        value = _value_for(schema, rng)
        if check(value):
            assert judge.is_valid(value), f"compiled check passed {value!r} against {schema}"
    example = _valid_example(schema)
    assert judge.is_valid(example), example
    assert check(example), f"the compiled check refused valid {example!r}: the fast path would never be taken"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "string"}}},
        {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
        {"type": "array", "uniqueItems": True},
        {"not": {"type": "string"}},
    ],
)
def test_schemas_outside_the_subset_are_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert compile_check(schema) is None


def test_validation_gives_the_same_problems_with_or_without_the_compiled_check() -> None:
    schema = HAND_WRITTEN[0]
    validator = SchemaValidator(schema, tool_name="t")
    assert validator.validate({"n": 3}) == ()
    assert validator.is_valid({"n": 3})
    problems = validator.validate({"n": 9})
    assert [p.message for p in problems] == ["`n` must be at most 5"]
    assert not validator.is_valid({"n": True})
