"""A tool's input schema read once into a ``ToolPlan``: what the gate needs to know per property.

The gate caches one plan per tool. Only what its repairs use is read: each property's JSON types,
nullability, enum, array item, default and the ``x-semantic`` / ``x-target`` marks, with local
``$ref``s followed and a single non-null ``anyOf``/``oneOf`` branch merged in. The JSON typing
helpers live here too, because a ``FieldInfo`` judges values with them.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pes_agent.tools.spec import ToolSpec

_FOLD = re.compile(r"[\W_]+")
_TYPE_ORDER = ("string", "integer", "number", "boolean", "array", "object")
NO_DEFAULT: Any = object()


def fold(text: str) -> str:
    """Case and separators away: ``dueDays``, ``due_days``, ``Due-Days`` → ``duedays``."""
    return _FOLD.sub("", text).lower()


@dataclass(frozen=True, kw_only=True)
class FieldInfo:
    """What the gate needs to know about one property, read from its (sub)schema."""

    name: str
    types: frozenset[str] = frozenset()
    """JSON types accepted besides null; empty means any."""
    nullable: bool = False
    enum: tuple[Any, ...] | None = None
    item: FieldInfo | None = None
    required: bool = False
    default: Any = NO_DEFAULT
    semantic: bool = False
    target: bool = False
    description: str | None = None
    format: str | None = None
    pattern: str | None = None
    value_aliases: Mapping[str, Any] = field(default_factory=dict)
    """Declared value synonyms, keyed by the lower-cased synonym."""

    def fits_type(self, value: Any) -> bool:
        if value is None:
            return self.nullable or not self.types
        return (
            not self.types
            or json_type(value) in self.types
            or (type(value) is int and "number" in self.types)
        )

    def fits(self, value: Any) -> bool:
        """Strict: the type (``7.0`` is not an integer, ``True`` is not a number) and the enum."""
        if not self.fits_type(value):
            return False
        if self.enum is not None and not (value is None and self.nullable) and not in_enum(value, self.enum):
            return False
        if self.item is not None and type(value) is list:
            return all(self.item.fits(v) for v in value)
        return True

    def allowed(self) -> tuple[Any, ...] | None:
        return self.enum if self.enum is not None else self.item.enum if self.item is not None else None

    def type_words(self) -> str | None:
        words = []
        for name in _TYPE_ORDER:
            if name in self.types:
                inner = self.item.type_words() if name == "array" and self.item is not None else None
                words.append(f"array of {inner}" if inner else name)
        return " or ".join(words) or None


@dataclass(frozen=True, kw_only=True)
class ToolPlan:
    """A tool's schema read once for the gate."""

    spec: ToolSpec
    fields: Mapping[str, FieldInfo]
    required: frozenset[str]
    extras: bool
    """Whether the schema explicitly accepts undeclared keys (``additionalProperties`` true or a schema)."""
    extra_patterns: tuple[re.Pattern[str], ...]
    variants: Mapping[str, str]
    """Folded property name → property (names that fold alike are left out: ambiguous)."""
    aliases: Mapping[str, str]
    alias_variants: Mapping[str, str]
    targets: frozenset[str]
    """``x-target`` properties of a side-effecting tool."""
    conditional: bool
    """Whether requirements depend on values (``if``, ``dependentRequired``, combinators)."""
    defaults: tuple[str, ...] = ()
    """Optional properties with a schema ``default``, in schema order (every call gets them)."""

    def accepts_extra(self, key: str) -> bool:
        return self.extras or any(p.search(key) for p in self.extra_patterns)


_CONDITIONAL_KEYWORDS = ("if", "dependentRequired", "dependentSchemas", "allOf", "anyOf", "oneOf", "not")


def build_plan(spec: ToolSpec) -> ToolPlan:
    schema = spec.input_schema
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    required = frozenset(n for n in schema.get("required") or () if isinstance(n, str))
    fields = {
        name: field_info(
            name, sub, schema, required=name in required, value_aliases=spec.value_aliases.get(name)
        )
        for name, sub in props.items()
    }
    extra = schema.get("additionalProperties")
    patterns = schema.get("patternProperties")
    aliases = {a: f for a, f in spec.aliases.items() if a not in fields}
    variants = _unique_folds(fields)
    alias_variants = {k: v for k, v in _unique_folds(aliases).items() if k not in variants}
    return ToolPlan(
        spec=spec,
        fields=fields,
        required=required,
        extras=extra is True or isinstance(extra, Mapping),
        extra_patterns=tuple(re.compile(p) for p in patterns) if isinstance(patterns, Mapping) else (),
        variants=variants,
        aliases=aliases,
        alias_variants={k: aliases[v] for k, v in alias_variants.items()},
        targets=frozenset(n for n, f in fields.items() if f.target) if spec.side_effects else frozenset(),
        conditional=any(k in schema for k in _CONDITIONAL_KEYWORDS),
        defaults=tuple(n for n, f in fields.items() if not f.required and f.default is not NO_DEFAULT),
    )


def _unique_folds(names: Collection[str]) -> dict[str, str]:
    seen: dict[str, str | None] = {}
    for name in names:
        key = fold(name)
        seen[key] = None if key in seen and seen[key] != name else name
    return {k: v for k, v in seen.items() if v is not None and k}


def field_info(
    name: str, raw: Any, root: Mapping[str, Any], *, required: bool, value_aliases: Mapping[str, Any] | None
) -> FieldInfo:
    node = _deref(raw, root)
    nullable = False
    types: set[str] = set()
    branches = node.get("anyOf", node.get("oneOf"))
    if isinstance(branches, list) and branches:
        real = []
        for branch in (_deref(b, root) for b in branches):
            if branch.get("type") == "null":
                nullable = True
            else:
                real.append(branch)
        if len(real) == 1:
            node = {**{k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}, **real[0]}
        else:
            for branch in real:
                types |= _types(branch)
    types |= _types(node)
    enum: tuple[Any, ...] | None = None
    if isinstance(node.get("enum"), list):
        enum = tuple(node["enum"])
    elif "const" in node:
        enum = (node["const"],)
    if not types and enum:
        types = {json_type(v) for v in enum}
    nullable = nullable or "null" in types or (enum is not None and None in enum)
    types.discard("null")
    items = node.get("items")
    item = None
    if "array" in types and isinstance(items, Mapping):
        item = field_info(name, items, root, required=False, value_aliases=value_aliases)
    description = node.get("description")
    return FieldInfo(
        name=name,
        types=frozenset(types),
        nullable=nullable,
        enum=enum,
        item=item,
        required=required,
        default=node.get("default", NO_DEFAULT),
        semantic=node.get("x-semantic") is True,
        target=node.get("x-target") is True,
        description=description if isinstance(description, str) else None,
        format=node.get("format") if isinstance(node.get("format"), str) else None,
        pattern=node.get("pattern") if isinstance(node.get("pattern"), str) else None,
        value_aliases={str(k).strip().lower(): v for k, v in (value_aliases or {}).items()},
    )


def _deref(node: Any, root: Mapping[str, Any]) -> Mapping[str, Any]:
    """Follow local ``$ref``s (``#/$defs/X``); the referring node's own keys win."""
    for _ in range(10):
        if not isinstance(node, Mapping):
            return {}
        ref = node.get("$ref")
        if not (isinstance(ref, str) and ref.startswith("#/")):
            return node
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        if not isinstance(target, Mapping):
            return node
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node if isinstance(node, Mapping) else {}


def _types(node: Mapping[str, Any]) -> set[str]:
    declared = node.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    if "properties" in node:
        return {"object"}
    if "items" in node:
        return {"array"}
    return set()


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    kind = type(value)
    if kind is bool:
        return "boolean"
    if kind is int:
        return "integer"
    if kind is float:
        return "number"
    if kind is str:
        return "string"
    if kind is list or kind is tuple:
        return "array"
    return "object" if isinstance(value, Mapping) else kind.__name__


def in_enum(value: Any, allowed: Sequence[Any]) -> bool:
    """Membership without Python's ``True == 1`` and ``1 == 1.0`` blurring the JSON types."""
    kind = json_type(value)
    for option in allowed:
        other = json_type(option)
        same_kind = kind == other or {kind, other} == {"integer", "number"}
        if same_kind and option == value:
            return True
    return False
