"""Checking tool arguments against a tool's JSON Schema, with problems a model can act on.

The schema is compiled once (at registration) because the same tools are checked on every turn.
``format`` is an annotation only: the TypeScript original rejected schemas that used it, and real
catalogues use it freely (``"format": "uri"``), so it must neither raise nor fail a value. Unknown
keywords such as ``x-semantic`` / ``x-target`` are markers for the gate and are ignored here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError

from pes_agent.errors import ToolDefinitionError
from pes_agent.tools.fastcheck import compile_check

_MAX_VALUE_CHARS = 80

_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean (true or false)",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


@dataclass(frozen=True, kw_only=True)
class ArgumentProblem:
    """One thing wrong with a call's arguments.

    ``field`` is the top-level argument the problem sits under (what the gate repairs or asks the
    model to fill); ``path`` points inside it; ``rule`` is the JSON Schema keyword that failed.
    """

    field: str | None
    path: str
    rule: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class SchemaValidator:
    """A tool's input schema, checked for validity once and compiled for repeated use."""

    def __init__(self, schema: Mapping[str, Any], *, tool_name: str) -> None:
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            where = format_path(exc.path) or "the schema root"
            raise ToolDefinitionError(
                f"tool {tool_name!r}: its input schema is not a valid JSON Schema at {where}: "
                f"{short(exc.message, 200)}. Fix the schema given to `@tool` or the catalogue entry."
            ) from exc
        self.tool_name = tool_name
        self.schema = schema
        # No format_checker: `format` stays an annotation, as JSON Schema 2020-12 intends by default.
        self._validator = Draft202012Validator(schema)
        self._certainly_valid = compile_check(schema) or _unsure

    def validate(self, arguments: Mapping[str, Any]) -> tuple[ArgumentProblem, ...]:
        if self._certainly_valid(arguments):
            return ()
        problems: list[ArgumentProblem] = []
        for error in self._validator.iter_errors(arguments):
            found = _forbidden_properties(error, arguments, self.schema) if error.validator is None else []
            for problem in found or describe(error):
                if problem not in problems:
                    problems.append(problem)
        return tuple(problems)

    def is_valid(self, arguments: Mapping[str, Any]) -> bool:
        return self._certainly_valid(arguments) or bool(self._validator.is_valid(arguments))


def _unsure(arguments: Any) -> bool:
    """The check of a schema outside the compiled subset: jsonschema decides every call."""
    return False


def _forbidden_properties(
    error: ValidationError, arguments: Any, schema: Mapping[str, Any]
) -> list[ArgumentProblem]:
    """A ``false`` property schema reports no path (jsonschema drops it): find the keys it hit."""
    schema_path = list(error.absolute_schema_path)
    if not schema_path or schema_path[-1] != "properties":
        return []
    node: Any = schema
    for part in schema_path:
        node = node[part] if isinstance(node, Mapping) else None
    container: Any = arguments
    for part in error.absolute_path:
        if isinstance(container, Mapping):  # noqa: SIM114 -- apart, so mypy narrows `part` to int below
            container = container[part]
        elif isinstance(container, list) and isinstance(part, int):
            container = container[part]
        else:
            return []
    if not isinstance(node, Mapping) or not isinstance(container, Mapping):
        return []
    prefix = list(error.absolute_path)
    return [_problem(prefix + [k], "false", "must not be given") for k in container if node.get(k) is False]


def describe(error: ValidationError) -> list[ArgumentProblem]:
    """Turn one jsonschema error into plain problems (a `required` error may name several)."""
    path = list(error.absolute_path)
    rule = "false" if error.validator is None else str(error.validator)  # a `false` subschema
    instance = error.instance
    if rule in ("anyOf", "oneOf"):
        inner = _single_branch_errors(error)
        if inner:
            return [p for e in inner for p in describe(e)]
    if rule == "required" and isinstance(instance, Mapping):
        names = [n for n in _as_list(error.validator_value) if n not in instance]
        return [_problem(path + [n], rule, "is required") for n in names]
    if rule == "additionalProperties" and isinstance(instance, Mapping):
        extras = _unexpected_keys(instance, error.schema)
        return [_problem(path + [k], rule, "is not an accepted argument") for k in extras]
    if rule == "dependentRequired" and isinstance(instance, Mapping):
        return _dependent_required(path, instance, error.validator_value)
    return [_problem(path, rule, _rule_text(rule, error.validator_value))]


def _rule_text(rule: str, value: Any) -> str:
    if rule == "type":
        return f"must be {_type_words(value)}"
    if rule == "enum":
        return "must be one of: " + ", ".join(show(v) for v in _as_list(value))
    if rule == "const":
        return f"must be {show(value)}"
    if rule in ("minItems", "maxItems"):
        bound = "at least" if rule == "minItems" else "at most"
        return f"must have {bound} {value} item{'' if value == 1 else 's'}"
    if rule in ("minLength", "maxLength"):
        bound = "at least" if rule == "minLength" else "at most"
        return f"must be {bound} {value} character{'' if value == 1 else 's'} long"
    if rule in ("minProperties", "maxProperties"):
        bound = "at least" if rule == "minProperties" else "at most"
        return f"must have {bound} {value} key{'' if value == 1 else 's'}"
    bounds = {
        "minimum": "at least",
        "maximum": "at most",
        "exclusiveMinimum": "greater than",
        "exclusiveMaximum": "less than",
        "multipleOf": "a multiple of",
    }
    if rule in bounds:
        return f"must be {bounds[rule]} {show(value)}"
    if rule == "pattern":
        return f"must match the pattern `{short(str(value), _MAX_VALUE_CHARS)}`"
    if rule == "uniqueItems":
        return "must not contain duplicate items"
    if rule in ("anyOf", "oneOf"):
        return _alternatives_text(rule, value)
    if rule == "not":
        return "must not match the excluded form"
    if rule == "contains":
        return "must contain at least one matching item"
    if rule == "false":
        return "must not be given"
    return f"must satisfy the schema's `{rule}` rule"


def _single_branch_errors(error: ValidationError) -> list[ValidationError]:
    """For ``X | None`` given a non-null value, the errors of the ``X`` branch are the useful ones."""
    branches = _as_list(error.validator_value)
    if error.instance is None:
        return []
    real = [i for i, b in enumerate(branches) if not (isinstance(b, Mapping) and b.get("type") == "null")]
    if len(real) != 1 or len(branches) > 2:
        return []
    inner = [
        e for e in error.context or () if e.relative_schema_path and e.relative_schema_path[0] == real[0]
    ]
    if len(inner) == 1 and str(inner[0].validator) == "type" and not list(inner[0].relative_path):
        return []  # a plain wrong type: "must be an array or null" says more
    return inner


def _alternatives_text(rule: str, options: Any) -> str:
    """Unions whose branches each name a type read as "must be an array or null"."""
    types: list[str] = []
    for option in _as_list(options):
        if not isinstance(option, Mapping) or "type" not in option:
            types = []
            break
        types.extend(_as_list(option["type"]))
    if types:
        return f"must be {_type_words(types)}"
    if rule == "oneOf":
        return "must match exactly one of the allowed forms"
    return "must match one of the allowed forms"


def _dependent_required(path: list[Any], instance: Mapping[str, Any], rules: Any) -> list[ArgumentProblem]:
    problems = []
    if isinstance(rules, Mapping):
        for trigger, needed in rules.items():
            if trigger in instance:
                for name in _as_list(needed):
                    if name not in instance:
                        problems.append(
                            _problem(
                                path + [name], "dependentRequired", f"is required when `{trigger}` is given"
                            )
                        )
    return problems


def _unexpected_keys(instance: Mapping[str, Any], schema: Any) -> list[str]:
    if not isinstance(schema, Mapping):
        return []
    known = schema.get("properties") or {}
    patterns = list((schema.get("patternProperties") or {}).keys())
    return [str(k) for k in instance if k not in known and not any(re.search(p, str(k)) for p in patterns)]


def _problem(path: Sequence[Any], rule: str, text: str) -> ArgumentProblem:
    rendered = format_path(path)
    subject = f"`{rendered}`" if rendered else "the arguments"
    first = path[0] if path else None
    return ArgumentProblem(
        field=first if isinstance(first, str) else None,
        path=rendered,
        rule=rule,
        message=f"{subject} {text}",
    )


def not_an_object(sent: Any, fields: Iterable[str]) -> ArgumentProblem:
    """Arguments that are no JSON object: the words a small model can act on, with the fields to send."""
    names = ", ".join(f"`{n}`" for n in fields)
    text = "the arguments must be a JSON object of named fields" + (f" ({names})" if names else "")
    return ArgumentProblem(field=None, path="", rule="type", message=f"{text}, not {_what(sent)}")


def _what(value: Any) -> str:
    if isinstance(value, str):
        return "text"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    return "null" if value is None else f"a {type(value).__name__}"


def format_path(path: Iterable[Any]) -> str:
    """``["items", 0, "name"]`` → ``items[0].name``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def show(value: Any) -> str:
    """A value as a model would write it, never longer than a short line."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return short(text, _MAX_VALUE_CHARS)


def short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _type_words(value: Any) -> str:
    words = [_TYPE_WORDS.get(str(t), str(t)) for t in _as_list(value)]
    return " or ".join(dict.fromkeys(words))


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return list(value)
    return [] if value is None else [value]
