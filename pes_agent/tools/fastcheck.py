"""A quick yes for the arguments most calls send: schemas of the common keyword subset compiled to
plain Python checks.

jsonschema walks a schema through its general machinery on every call; for the flat object schemas
tool catalogues are made of, that walk is most of the gate's time. A compiled check answers only
"certainly valid" (True) or "not sure" (False): on False the caller asks jsonschema, which stays the
one judge of invalid arguments and the one source of problem messages. So a check may be
conservative (a tuple instead of a list, ``1`` against ``enum: [1.0]``) but must never say True for
arguments jsonschema rejects; tests/test_fastcheck.py holds it to that on random arguments.

A schema using any keyword outside the subset compiles to None and is always checked by jsonschema.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset(
    {
        "$comment",
        "$schema",
        "contentEncoding",
        "contentMediaType",
        "default",
        "deprecated",
        "description",
        "examples",
        "format",
        "readOnly",
        "title",
        "writeOnly",
    }
)
"""Keywords that never fail a value (``format`` is an annotation here, as in `validation`)."""

_JSON_TYPES: dict[str, Check] = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: type(v) is str,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "number": lambda v: type(v) is int or type(v) is float,
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
}


class _Unsupported(Exception):
    pass


def compile_check(schema: Any) -> Check | None:
    """The compiled check of ``schema``, or None when it uses keywords outside the subset."""
    try:
        return _compile(schema)
    except _Unsupported:
        return None


def _compile(schema: Any) -> Check:
    if schema is True:
        return lambda v: True
    if schema is False or not isinstance(schema, Mapping):
        raise _Unsupported
    checks: list[Check] = []
    if "type" in schema:
        checks.append(_type(schema["type"]))
    checks.extend(_object(schema))
    checks.extend(_array(schema))
    checks.extend(_string(schema))
    checks.extend(_number(schema))
    checks.extend(_choices(schema))
    checks.extend(_combinators(schema))
    unknown = [
        k for k in schema if k not in _HANDLED and k not in _ANNOTATIONS and not str(k).startswith("x-")
    ]
    if unknown:
        raise _Unsupported
    return _all(checks)


def _all(checks: list[Check]) -> Check:
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]

    def every(v: Any) -> bool:
        for check in checks:
            if not check(v):
                return False
        return True

    return every


def _any(checks: list[Check]) -> Check:
    def some(v: Any) -> bool:
        for check in checks:
            if check(v):
                return True
        return False

    return some


def _type(value: Any) -> Check:
    names = value if isinstance(value, list) else [value]
    if not names or any(not isinstance(n, str) or n not in _JSON_TYPES for n in names):
        raise _Unsupported
    tests = [_JSON_TYPES[n] for n in names]
    return tests[0] if len(tests) == 1 else _any(tests)


def _object(schema: Mapping[str, Any]) -> list[Check]:
    """``properties``, ``required`` and ``additionalProperties`` as one pass over the keys."""
    properties = schema.get("properties")
    required = schema.get("required")
    if properties is None and required is None and "additionalProperties" not in schema:
        return []
    if properties is not None and not isinstance(properties, Mapping):
        raise _Unsupported
    if required is not None and (
        not isinstance(required, list) or not all(isinstance(n, str) for n in required)
    ):
        raise _Unsupported
    compiled = {name: _compile(sub) for name, sub in (properties or {}).items()}
    needed = tuple(required or ())
    closed = schema.get("additionalProperties") is False
    extra = (
        None if closed or "additionalProperties" not in schema else _compile(schema["additionalProperties"])
    )

    def check(v: Any) -> bool:
        if type(v) is not dict:
            return True  # these keywords apply to objects only
        for name in needed:
            if name not in v:
                return False
        for key, value in v.items():
            sub = compiled.get(key)
            if sub is not None:
                if not sub(value):
                    return False
            elif closed or (extra is not None and not extra(value)):
                return False
        return True

    return [check]


def _array(schema: Mapping[str, Any]) -> list[Check]:
    item = _compile(schema["items"]) if "items" in schema else None
    low, high = _count(schema, "minItems"), _count(schema, "maxItems")
    if item is None and low is None and high is None:
        return []

    def check(v: Any) -> bool:
        if type(v) is not list:
            return True
        if not _within(len(v), low, high):
            return False
        if item is not None:
            for x in v:
                if not item(x):
                    return False
        return True

    return [check]


def _string(schema: Mapping[str, Any]) -> list[Check]:
    out: list[Check] = []
    low, high = _count(schema, "minLength"), _count(schema, "maxLength")
    if low is not None or high is not None:
        out.append(lambda v: type(v) is not str or _within(len(v), low, high))
    if "pattern" in schema:
        try:
            search = re.compile(schema["pattern"]).search
        except (re.error, TypeError) as exc:
            raise _Unsupported from exc
        out.append(lambda v: type(v) is not str or search(v) is not None)
    return out


_BOUNDS: dict[str, Callable[[float, float], bool]] = {
    "minimum": lambda v, b: v >= b,
    "maximum": lambda v, b: v <= b,
    "exclusiveMinimum": lambda v, b: v > b,
    "exclusiveMaximum": lambda v, b: v < b,
}


def _number(schema: Mapping[str, Any]) -> list[Check]:
    bounds: list[tuple[Callable[[float, float], bool], float]] = []
    for key, holds in _BOUNDS.items():
        if key in schema:
            bound = schema[key]
            if type(bound) not in (int, float):
                raise _Unsupported
            bounds.append((holds, bound))
    if not bounds:
        return []
    return [lambda v: type(v) not in (int, float) or all(holds(v, b) for holds, b in bounds)]


def _choices(schema: Mapping[str, Any]) -> list[Check]:
    """``enum``/``const`` of scalars, matched with their JSON type (``True`` is not ``1``)."""
    out: list[Check] = []
    if "enum" in schema:
        options = schema["enum"]
        if not isinstance(options, list) or not all(_scalar(o) for o in options):
            raise _Unsupported
        allowed = {(type(o), o) for o in options}
        out.append(lambda v: _scalar(v) and (type(v), v) in allowed)
    if "const" in schema:
        const = schema["const"]
        if not _scalar(const):
            raise _Unsupported
        out.append(lambda v: type(v) is type(const) and v == const)
    return out


def _combinators(schema: Mapping[str, Any]) -> list[Check]:
    """``anyOf`` (one branch certainly valid is enough) and ``allOf``; ``oneOf`` and ``not`` need
    a certain "invalid" as well, which these checks never give, so they stay with jsonschema."""
    out: list[Check] = []
    for key in ("anyOf", "allOf"):
        if key in schema:
            branches = schema[key]
            if not isinstance(branches, list) or not branches:
                raise _Unsupported
            compiled = [_compile(b) for b in branches]
            out.append(_any(compiled) if key == "anyOf" else _all(compiled))
    return out


_HANDLED = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "enum",
        "const",
        "anyOf",
        "allOf",
    }
)


def _scalar(value: Any) -> bool:
    return value is None or type(value) in (str, int, float, bool)


def _count(schema: Mapping[str, Any], key: str) -> int | None:
    value = schema.get(key)
    if value is None:
        return None
    if type(value) is not int or value < 0:
        raise _Unsupported
    return value


def _within(n: int, low: int | None, high: int | None) -> bool:
    return (low is None or n >= low) and (high is None or n <= high)
