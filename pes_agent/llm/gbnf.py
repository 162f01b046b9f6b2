"""JSON Schema to a llama.cpp grammar (GBNF), flat enough that no schema can crash the engine.

Why our own converter rather than llama-cpp-python's: that one bounds a string's ``maxLength`` by
nesting one optional group per character (``(c (c (c ...)?)?)?``, hundreds deep), and llama.cpp's
grammar code recursed on it until the process died with SIGSEGV; it also falls back to "any JSON"
without a word when it meets a schema it cannot read. Here every bound is a GBNF repetition
(``c{0,N}``), which llama.cpp expands into a chain of tail rules whose depth never grows, and every
keyword is either honoured or made *stricter* (never looser): a reply that fits the grammar always
validates against the schema, except for the bounds a grammar cannot state (numeric ranges beyond a
small enumeration, ``uniqueItems``), which the argument gate still checks.

Output is compact JSON (no whitespace): fewer tokens for a small model to generate, and fewer ways
for it to wander. Object properties come in the schema's order; unknown properties are never
generated. The subset covers what tool schemas use: type (or a list of types), properties,
required, items / prefixItems, min/maxItems, enum, const, anyOf / oneOf, allOf (merged), local
``$ref``, string minLength / maxLength / format (date, time, date-time, uuid) / pattern (a regex
subset, see ``regex_gbnf``), integer minimum / maximum.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pes_agent.llm.composition import COMPOSED_OF, OPERATORS, Composition
from pes_agent.llm.regex_gbnf import RegexUnsupported, regex_to_gbnf

__all__ = ["COMPOSED_OF", "GrammarBounds", "literal", "schema_to_gbnf"]


@dataclass(frozen=True, kw_only=True)
class GrammarBounds:
    """Caps where a schema sets none (or a larger one): a reply must end within its token cap."""

    max_string: int = 400
    """Characters of a free string; a larger ``maxLength`` is lowered to this (shorter stays valid)."""
    max_items: int = 8
    """Items of a list without a smaller ``maxItems``."""
    max_digits: int = 15
    """Digits of an integer part or a fraction."""
    max_enumerated_range: int = 64
    """An integer range this small (``minimum``..``maximum``) is spelled out value by value."""


_PRIMITIVES = {
    "char": r'[^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    "boolean": '"true" | "false"',
    "null": '"null"',
}
_FORMATS = {
    "date": r'[0-9]{4} "-" [0-9]{2} "-" [0-9]{2}',
    "time": r'[0-9]{2} ":" [0-9]{2} ":" [0-9]{2} ("." [0-9]{1,6})? ("Z" | [+-] [0-9]{2} ":" [0-9]{2})?',
    "date-time": r'[0-9]{4} "-" [0-9]{2} "-" [0-9]{2} "T" [0-9]{2} ":" [0-9]{2} ":" [0-9]{2} '
    r'("." [0-9]{1,6})? ("Z" | [+-] [0-9]{2} ":" [0-9]{2})',
    "uuid": r'[0-9a-f]{8} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{12}',
}
_ANY_TYPES = ("object", "array", "string", "number", "boolean", "null")
"""Every JSON type: a schema listing them all accepts anything (``llamacpp_schema`` spells ``{}`` so)."""


def literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def json_literal(value: Any) -> str:
    """A JSON value (an enum member, a const) as the exact text the model must produce."""
    return literal(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def schema_to_gbnf(schema: Any, bounds: GrammarBounds = GrammarBounds()) -> str:
    """The grammar of every compact JSON text that ``schema`` accepts, within ``bounds``."""
    return _Compiler(schema, bounds).compile()


class _Compiler:
    def __init__(self, root: Any, bounds: GrammarBounds) -> None:
        self.root = root
        self.bounds = bounds
        self.rules: dict[str, str] = {}
        self._refs: dict[str, str] = {}

    def compile(self) -> str:
        body = self.visit(self.root, "root")
        if body != "root":
            self.rules["root"] = body
        ordered = {"root": self.rules.pop("root"), **self.rules}
        return "\n".join(f"{name} ::= {body}" for name, body in ordered.items()) + "\n"

    # -- rule bookkeeping ------------------------------------------------------------------------

    def rule(self, hint: str, body: str) -> str:
        """A named rule for ``body`` (reused when the same body was named before)."""
        for name, existing in self.rules.items():
            if existing == body and name != "root":
                return name
        name = _safe(hint)
        base, n = name, 1
        while name in self.rules:
            n += 1
            name = f"{base}{n}"
        self.rules[name] = body
        return name

    def primitive(self, name: str) -> str:
        self.rules.setdefault(name, _PRIMITIVES[name])
        return name

    # -- schemas ---------------------------------------------------------------------------------

    def visit(self, schema: Any, hint: str) -> str:
        """A GBNF expression (usually a rule name) for ``schema``."""
        if schema is True or schema is None or schema == {}:
            return self.any_value(hint)
        if schema is False or not isinstance(schema, Mapping):
            raise ValueError(f"schema at {hint!r} accepts nothing; a grammar for it cannot be built")
        _check_satisfiable(schema, hint)
        if "$ref" in schema:
            return self.ref(str(schema["$ref"]))
        if "allOf" in schema:
            return self.visit(_merge_all_of(schema), hint)
        if "const" in schema:
            return self.rule(hint, json_literal(schema["const"]))
        if "enum" in schema:
            values = list(schema["enum"])
            if not values:
                raise ValueError(f"schema at {hint!r} has an empty enum; nothing can match it")
            return self.rule(hint, " | ".join(json_literal(v) for v in values))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                base = {k: v for k, v in schema.items() if k != key}
                alts = [
                    self.visit({**base, **dict(s)} if base and isinstance(s, Mapping) else s, f"{hint}-{i}")
                    for i, s in enumerate(schema[key])
                ]
                return self.rule(hint, " | ".join(alts))
        types = schema.get("type")
        if isinstance(types, list) and not types:
            raise ValueError(f"schema at {hint!r} allows no type (`type: []`); nothing can match it")
        if isinstance(types, list):
            alts = [self.visit({**schema, "type": t}, f"{hint}-{t}") for t in types]
            return self.rule(hint, " | ".join(alts))
        if types is None:
            types = _implied_type(schema)
            if types is None:
                return self.any_value(hint)
        return self.typed(str(types), schema, hint)

    def typed(self, type_: str, schema: Mapping[str, Any], hint: str) -> str:
        if type_ == "object":
            return self.object(schema, hint)
        if type_ == "array":
            return self.array(schema, hint)
        if type_ == "string":
            return self.string(schema, hint)
        if type_ == "integer":
            return self.integer(schema, hint)
        if type_ == "number":
            return self.rule(hint, self.number_body(schema))
        if type_ in ("boolean", "null"):
            return self.primitive(type_)
        raise ValueError(f"schema at {hint!r} has unknown type {type_!r}")

    def ref(self, ref: str) -> str:
        if ref in self._refs:
            return self._refs[ref]
        if not ref.startswith("#/"):
            raise ValueError(f"only local $ref ('#/...') can become a grammar, not {ref!r}")
        target: Any = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or part not in target:
                raise ValueError(f"$ref {ref!r} points at nothing in the schema")
            target = target[part]
        name = _safe("ref-" + ref[2:])
        self._refs[ref] = name
        self.rules[name] = ""  # reserve: a recursive schema refers to itself by this name
        self.rules[name] = self.visit(target, name + "-body")
        return name

    def object(self, schema: Mapping[str, Any], hint: str) -> str:
        props: Mapping[str, Any] = schema.get("properties") or {}
        required = [p for p in props if p in set(schema.get("required") or ())]
        missing = [r for r in schema.get("required") or () if r not in props]
        pairs = {p: f'{json_literal(p)} ":" {self.visit(s, f"{hint}-{p}")}' for p, s in props.items()}
        for name in missing:  # required but undescribed: any value
            pairs[name] = f'{json_literal(name)} ":" {self.any_value(f"{hint}-{name}")}'
            required.append(name)
        optional = [p for p in pairs if p not in required]
        if not pairs:
            return self.rule(hint, '"{" "}"')
        if required:
            head = ' "," '.join(pairs[p] for p in required)
            tail = " ".join(f'("," {pairs[p]})?' for p in optional)
            return self.rule(hint, f'"{{" {head} {tail} "}}"'.replace("  ", " "))
        alts = ['"{" "}"']
        for i, first in enumerate(optional):
            tail = " ".join(f'("," {pairs[p]})?' for p in optional[i + 1 :])
            alts.append(f'"{{" {pairs[first]} {tail} "}}"'.replace("  ", " "))
        return self.rule(hint, " | ".join(alts))

    def array(self, schema: Mapping[str, Any], hint: str) -> str:
        prefix: Sequence[Any] = schema.get("prefixItems") or ()
        if prefix:
            parts = [self.visit(s, f"{hint}-{i}") for i, s in enumerate(prefix)]
            need = min(int(schema.get("minItems", len(parts))), len(parts))
            body = ' "," '.join(parts[:need]) if need else ""
            for part in parts[need:]:
                body += f' ("," {part})?' if body else f" ({part})?"
            if need == 0 and parts:  # no leading comma when the first item is optional
                body = f"({parts[0]} " + " ".join(f'("," {p})?' for p in parts[1:]) + ")?"
            return self.rule(hint, f'"[" {body} "]"')
        item = self.visit(schema.get("items", {}), f"{hint}-item")
        low = int(schema.get("minItems", 0))
        high = min(int(schema.get("maxItems", self.bounds.max_items)), max(self.bounds.max_items, low))
        if high <= 0:
            return self.rule(hint, '"[" "]"')
        more = f'("," {item}){{{max(low - 1, 0)},{high - 1}}}'
        body = f"{item} {more}" if high > 1 else item
        return self.rule(hint, f'"[" {body} "]"' if low >= 1 else f'"[" ({body})? "]"')

    def string(self, schema: Mapping[str, Any], hint: str) -> str:
        composition = Composition.of(schema)
        if composition is not None:
            return self.composed(composition, hint)
        fmt = schema.get("format")
        if fmt in _FORMATS:
            return self.rule(hint, f'"\\"" {_FORMATS[fmt]} "\\""')
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            try:
                return self.rule(hint, f'"\\"" {regex_to_gbnf(pattern, self.bounds.max_string)} "\\""')
            except RegexUnsupported:
                pass  # a bounded free string; the gate's validation judges the pattern
        low = int(schema.get("minLength", 0))
        high = max(min(int(schema.get("maxLength", self.bounds.max_string)), self.bounds.max_string), low)
        return self.rule(hint, f'"\\"" {self.primitive("char")}{{{low},{high}}} "\\""')

    def composed(self, composition: Composition, hint: str) -> str:
        """Two grounded pieces joined by an operator: ``"42 * 3"`` from 42 and 3. Exactly two: a
        step is one operation; longer chains gave a small model room for noise (``25 + 32*77``),
        and a lone piece let it skip the operation (a value alone is offered as an option anyway)."""
        ops = composition.operators
        choice = f"({' | '.join(literal(o) for o in ops)})" if ops else f"[{OPERATORS}]"
        op = self.rule("operator", f'" "? {choice} " "?')
        alts = [f"{literal(a)} {op} {literal(b)}" for a, b in composition.pairs()]
        return self.rule(hint, f'"\\"" ({" | ".join(alts or [literal(composition.pieces[0])])}) "\\""')

    def integer(self, schema: Mapping[str, Any], hint: str) -> str:
        low, high = _int_range(schema)
        if low is not None and high is not None and 0 <= high - low < self.bounds.max_enumerated_range:
            return self.rule(hint, " | ".join(literal(str(v)) for v in range(low, high + 1)))
        if low is not None and low > 0 and high is not None:
            # as many digits as the bounds have: 1000..1000000 cannot be 12 (the gate checks the rest)
            few, many = len(str(low)), len(str(high))
            return self.rule(hint, f"[1-9] [0-9]{{{few - 1},{many - 1}}}")
        sign = "" if low is not None and low >= 0 else '"-"? '
        return self.rule(hint, f'{sign}("0" | [1-9] [0-9]{{0,{self.bounds.max_digits - 1}}})')

    def number_body(self, schema: Mapping[str, Any]) -> str:
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        sign = "" if isinstance(low, int | float) and low >= 0 else '"-"? '
        d = self.bounds.max_digits
        return f'{sign}("0" | [1-9] [0-9]{{0,{d - 1}}}) ("." [0-9]{{1,{d}}})?'

    def any_value(self, hint: str) -> str:
        """Any JSON value, bounded: the empty schema (an argument typed ``Any``)."""
        if "value" not in self.rules:
            self.rules["value"] = ""  # reserve: value refers to itself through arrays and objects
            string = self.string({}, "string")
            number = self.rule("number", self.number_body({}))
            pair = f'{string} ":" value'
            n = self.bounds.max_items - 1
            self.rules["value"] = " | ".join(
                [
                    f'"{{" ({pair} ("," {pair}){{0,{n}}})? "}}"',
                    f'"[" (value ("," value){{0,{n}}})? "]"',
                    string,
                    number,
                    self.primitive("boolean"),
                    self.primitive("null"),
                ]
            )
        return "value"


def _check_satisfiable(schema: Mapping[str, Any], hint: str) -> None:
    """Refuse a schema that no value can satisfy, naming why: a grammar for it would either accept
    nothing (llama.cpp then returns an empty reply) or, worse, something the schema rejects."""
    pairs = (
        ("minLength", "maxLength"),
        ("minimum", "maximum"),
        ("minItems", "maxItems"),
        ("minProperties", "maxProperties"),
    )
    for low_key, high_key in pairs:
        low, high = schema.get(low_key), schema.get(high_key)
        if isinstance(low, int | float) and isinstance(high, int | float) and low > high:
            raise ValueError(
                f"schema at {hint!r} has {low_key} {low} above {high_key} {high}; nothing can match it"
            )
    negated = schema.get("not")
    spelled_any = (
        isinstance(negated, Mapping) and set(negated) == {"type"} and set(_ANY_TYPES) <= set(negated["type"])
    )
    if negated in ({}, True) or spelled_any:
        raise ValueError(f"schema at {hint!r} is `not: {{}}`; nothing can match it")
    parts = schema.get("allOf")
    if isinstance(parts, list):
        types = {p["type"] for p in parts if isinstance(p, Mapping) and isinstance(p.get("type"), str)}
        if len({"number" if t == "integer" else t for t in types}) > 1:
            raise ValueError(f"schema at {hint!r} needs one value of types {sorted(types)} at once (allOf)")


def _implied_type(schema: Mapping[str, Any]) -> str | None:
    if "properties" in schema or "required" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    if any(k in schema for k in ("minLength", "maxLength", "pattern", "format")):
        return "string"
    if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
        return "number"
    return None


def _int_range(schema: Mapping[str, Any]) -> tuple[int | None, int | None]:
    low = schema.get("minimum")
    high = schema.get("maximum")
    if isinstance(schema.get("exclusiveMinimum"), int | float):
        low = int(schema["exclusiveMinimum"]) + 1
    if isinstance(schema.get("exclusiveMaximum"), int | float):
        high = int(schema["exclusiveMaximum"]) - 1
    return _as_int(low), _as_int(high)


def _as_int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _merge_all_of(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``allOf`` flattened into one schema: properties and required lists joined, the rest of the
    later parts winning. Stricter combinations are the gate's to check."""
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    for part in schema["allOf"]:
        if not isinstance(part, Mapping):
            continue
        part = _merge_all_of(part) if "allOf" in part else part
        for key, value in part.items():
            if key == "properties":
                merged["properties"] = {**merged.get("properties", {}), **value}
            elif key == "required":
                merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
            else:
                merged.setdefault(key, value)
    return merged


def _safe(hint: str) -> str:
    """A rule name from ``hint`` (a property name, a query part): ASCII letters, digits and dashes
    only. llama.cpp reads rule names as ``[a-zA-Z0-9-]+``; a Chinese part of a query named a rule
    (``root-我想…``), the grammar did not parse and llama.cpp crashed the process. Text only ever
    reaches a grammar inside escaped literals."""
    name = "".join(c if c.isascii() and c.isalnum() else "-" for c in hint).strip("-").lower() or "r"
    while "--" in name:
        name = name.replace("--", "-")
    return name[:60] if not name[0].isdigit() else "r" + name[:59]
