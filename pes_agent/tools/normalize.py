"""The gate's certain repairs: tool names, argument names and values a model got almost right.

Everything here is lossless or declared by the tool's author: a case or separator change, a declared
alias, a unique close match, ``"10"`` → ``10``. Anything that would guess (``"ten"`` → ``10``,
``True`` → ``1``, a first enum value for a missing one) is left for the model or the user.

Schemas are read once per tool into a ``ToolPlan`` (the gate caches it). Value repairs reach the
top-level properties and the items of top-level arrays; deeper structure is left to the validator's
messages, which is where small models send simple values anyway.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any, Literal

from pes_agent.tools.spec import ToolSpec

_FOLD = re.compile(r"[\W_]+")
_EPS = 1e-9
_INT = re.compile(r"[+-]?\d+")
_INTEGRAL = re.compile(r"([+-]?\d+)\.0*")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_TYPE_ORDER = ("string", "integer", "number", "boolean", "array", "object")
NO_DEFAULT: Any = object()
MISSING: Any = object()


@dataclass(frozen=True, kw_only=True)
class Repair:
    """One change the gate made, reported as one ``ARG_REPAIR`` event.

    ``field`` is the argument concerned (``tags[0]`` for an array item, ``""`` for the tool name and
    for the whole arguments object). Rules, by step:

    - tool name: ``tool_name_markup``, ``tool_name_case`` (safe), ``tool_name_fuzzy`` (semantic);
    - keys: ``unwrap_arguments`` (an envelope sent as the arguments), ``alias`` and ``key_case``
      (from the key as sent to the argument's name), ``canonical_wins`` (from the alias's value to
      the canonical value kept), ``strip_unknown_key`` (from the value to ``None``);
    - values: ``reference``, ``value_alias``, ``enum_case``, ``enum_fuzzy`` (semantic on an
      ``x-semantic`` property), ``coerce_int``, ``coerce_number``, ``coerce_bool``, ``wrap_list``,
      ``parse_json``;
    - optional values taken out as "not given" (from the value to ``None``): ``drop_null``,
      ``drop_placeholder``, ``drop_empty``; ``default`` (from ``None`` to the schema default);
    - ``grounded_enum`` (semantic): a missing required enum the query or results name exactly once.
    """

    field: str
    from_: Any
    to: Any
    rule: str
    kind: Literal["safe", "semantic"]

    def event_data(self) -> dict[str, Any]:
        return {"field": self.field, "from": self.from_, "to": self.to, "rule": self.rule, "kind": self.kind}


def fold(text: str) -> str:
    """Case and separators away: ``dueDays``, ``due_days``, ``Due-Days`` → ``duedays``."""
    return _FOLD.sub("", text).lower()


def similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, a.lower(), b.lower()).ratio()


def best_match(value: str, candidates: Sequence[str], threshold: float, margin: float) -> str | None:
    """The unique candidate at least ``threshold`` similar and ``margin`` ahead of the runner-up."""
    scored = sorted(((similarity(value, c), c) for c in dict.fromkeys(candidates)), reverse=True)
    if not scored or scored[0][0] + _EPS < threshold:
        return None
    if len(scored) > 1:
        lead = scored[0][0] - scored[1][0]
        if lead <= _EPS or lead + _EPS < margin:
            return None
    return scored[0][1]


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


def same_value(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


@dataclass(frozen=True, kw_only=True)
class ValueOutcome:
    value: Any
    repairs: tuple[Repair, ...]
    unmapped: bool
    """An enum value (or array item) that no rule maps to an allowed value."""


def normalize_value(info: FieldInfo, value: Any, path: str, threshold: float, margin: float) -> ValueOutcome:
    """Value aliases → unique case-insensitive enum match → fuzzy enum match → lossless coercion."""
    repairs: list[Repair] = []
    v = value
    if v is None:
        return ValueOutcome(value=v, repairs=(), unmapped=False)
    if isinstance(v, str) and info.value_aliases and not (info.enum and in_enum(v, info.enum)):
        hit = info.value_aliases.get(v.strip().lower(), MISSING)
        if hit is not MISSING:
            repairs.append(Repair(field=path, from_=v, to=hit, rule="value_alias", kind="safe"))
            v = hit
    if isinstance(v, str) and info.enum and not in_enum(v, info.enum):
        mapped = _enum_match(info, v, threshold, margin)
        if mapped is not None:
            repairs.append(Repair(field=path, from_=v, to=mapped[0], rule=mapped[1], kind=mapped[2]))
            v = mapped[0]
    if not info.fits_type(v):
        if "array" in info.types and not isinstance(v, (list, str)) or _wrappable_text(info, v):
            wrapped = _wrap(info, v, path, threshold, margin)
            if wrapped is not None:
                return wrapped
        fixed = coerce(v, info.types)
        if fixed is not None:
            repairs.append(Repair(field=path, from_=v, to=fixed[0], rule=fixed[1], kind="safe"))
            v = fixed[0]
    unmapped = info.enum is not None and not in_enum(v, info.enum) and info.fits_type(v)
    if type(v) is list and info.item is not None:
        items = []
        for i, item in enumerate(v):
            outcome = normalize_value(info.item, item, f"{path}[{i}]", threshold, margin)
            items.append(outcome.value)
            repairs.extend(outcome.repairs)
            unmapped = unmapped or outcome.unmapped
        v = items
    return ValueOutcome(value=v, repairs=tuple(repairs), unmapped=unmapped)


def _enum_match(info: FieldInfo, value: str, threshold: float, margin: float) -> tuple[Any, str, Any] | None:
    options = [e for e in info.enum or () if isinstance(e, str)]
    key = fold(value)
    same = [e for e in options if fold(e) == key] if key else []
    if len(same) == 1:
        return same[0], "enum_case", "safe"
    found = best_match(value.strip(), options, threshold, margin) if not same else None
    if found is not None:
        return found, "enum_fuzzy", "semantic" if info.semantic else "safe"
    return None


def _wrappable_text(info: FieldInfo, value: Any) -> bool:
    """A string for an array is wrapped, unless it is (broken) JSON text of a list."""
    return isinstance(value, str) and "array" in info.types and not value.lstrip().startswith("[")


def _wrap(info: FieldInfo, value: Any, path: str, threshold: float, margin: float) -> ValueOutcome | None:
    """scalar → [scalar], when the scalar (repaired as an item would be) fits the item schema."""
    if info.item is None:
        return ValueOutcome(
            value=[value],
            repairs=(Repair(field=path, from_=value, to=[value], rule="wrap_list", kind="safe"),),
            unmapped=False,
        )
    inner = normalize_value(info.item, value, f"{path}[0]", threshold, margin)
    if not info.item.fits_type(inner.value):
        return None
    wrap = Repair(field=path, from_=value, to=[inner.value], rule="wrap_list", kind="safe")
    return ValueOutcome(value=[inner.value], repairs=(wrap, *inner.repairs), unmapped=inner.unmapped)


def coerce(value: Any, types: Collection[str]) -> tuple[Any, str] | None:
    """Lossless type fixes only. ``True`` is never a number and ``"ten"`` is never 10."""
    kind = type(value)
    if kind is str:
        text = value.strip()
        if "integer" in types:
            whole = _INTEGRAL.fullmatch(text)
            if _INT.fullmatch(text) or whole:
                return int(whole.group(1) if whole else text), "coerce_int"
        if "number" in types and _NUMBER.fullmatch(text):
            number = float(text)
            if math.isfinite(number):
                return (int(text) if _INT.fullmatch(text) else number), "coerce_number"
        if "boolean" in types and text.lower() in ("true", "false"):
            return text.lower() == "true", "coerce_bool"
        if ("array" in types and text.startswith("[")) or ("object" in types and text.startswith("{")):
            try:
                parsed = json.loads(text)
            except ValueError:
                return None
            if json_type(parsed) in types:
                return parsed, "parse_json"
        return None
    if kind is float and "integer" in types and "number" not in types and value.is_integer():
        return int(value), "coerce_int"
    return None


@dataclass(frozen=True, kw_only=True)
class KeyOutcome:
    arguments: dict[str, Any]
    repairs: tuple[Repair, ...]
    ambiguous: tuple[tuple[str, tuple[str, ...]], ...]
    """(field, the keys that name it with different values)."""
    rejected: tuple[str, ...]
    """Undeclared keys, when the config says to reject rather than strip them."""


def map_keys(plan: ToolPlan, arguments: Mapping[str, Any], *, reject_unknown: bool) -> KeyOutcome:
    """Declared aliases, then case/camel/snake/kebab variants; the canonical key always wins."""
    out: dict[str, Any] = {}
    others: dict[str, list[tuple[str, Any, str]]] = {}
    repairs: list[Repair] = []
    rejected: list[str] = []
    for key, value in arguments.items():
        if key in plan.fields:
            out[key] = value
        elif key in plan.aliases:
            others.setdefault(plan.aliases[key], []).append((key, value, "alias"))
        elif fold(key) in plan.variants:
            others.setdefault(plan.variants[fold(key)], []).append((key, value, "key_case"))
        elif fold(key) in plan.alias_variants:
            others.setdefault(plan.alias_variants[fold(key)], []).append((key, value, "alias"))
        elif plan.accepts_extra(key):
            out[key] = value
        elif reject_unknown:
            rejected.append(key)
        else:
            repairs.append(Repair(field=key, from_=value, to=None, rule="strip_unknown_key", kind="safe"))
    ambiguous: list[tuple[str, tuple[str, ...]]] = []
    for name, sources in others.items():
        if name in out:
            for _key, value, _rule in sources:
                repairs.append(
                    Repair(field=name, from_=value, to=out[name], rule="canonical_wins", kind="safe")
                )
        elif all(same_value(sources[0][1], value) for _k, value, _r in sources[1:]):
            out[name] = sources[0][1]
            for key, _value, rule in sources:
                repairs.append(Repair(field=name, from_=key, to=name, rule=rule, kind="safe"))
        else:
            ambiguous.append((name, tuple(key for key, _v, _r in sources)))
    return KeyOutcome(
        arguments=out, repairs=tuple(repairs), ambiguous=tuple(ambiguous), rejected=tuple(rejected)
    )


_ENVELOPE_BODY = ("arguments", "args", "parameters", "params", "input")
_ENVELOPE_NAME = ("name", "tool", "tool_name", "toolname", "function")


def unwrap_envelope(plan: ToolPlan, arguments: Mapping[str, Any]) -> dict[str, Any] | None:
    """``{"name": "webSearch", "arguments": {...}}`` sent as the arguments: the inner object.

    Only when no key is one the tool declares (or an alias or variant of one), so a tool whose
    own argument is called ``input`` keeps it.
    """
    known = [k for k in arguments if k in plan.fields or k in plan.aliases or fold(k) in plan.variants]
    body = [k for k in arguments if fold(k) in _ENVELOPE_BODY]
    rest = [k for k in arguments if k not in body and fold(k) not in _ENVELOPE_NAME]
    if known or rest or len(body) != 1:
        return None
    inner = arguments[body[0]]
    if isinstance(inner, str):
        try:
            inner = json.loads(inner)
        except ValueError:
            return None
    return {str(k): v for k, v in inner.items()} if isinstance(inner, Mapping) else None


@dataclass(frozen=True, kw_only=True)
class NameMatch:
    name: str | None
    """The allowed tool meant, or None: refuse."""
    repair: Repair | None = None
    elsewhere: bool = False
    """The name is a registered tool this step may not use."""


_WRAPPED_TAG = re.compile(r"<(?P<tag>[\w-]+)>(?P<inner>.*)</(?P=tag)>", re.DOTALL)


def clean_tool_name(raw: str) -> str:
    """Quotes, backticks, markdown emphasis, tags and a trailing ``()`` around a name."""
    text = raw.strip()
    for _ in range(4):
        before = text
        tagged = _WRAPPED_TAG.fullmatch(text)
        if tagged:
            text = tagged.group("inner").strip()
        if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'`*":
            text = text.strip(text[0]).strip()
        if text.startswith("<") and text.endswith(">"):
            text = text[1:-1].strip(" /")
        if text.endswith("()"):
            text = text[:-2].rstrip()
        for prefix in ("functions.", "tools."):
            text = text.removeprefix(prefix)
        if text == before:
            break
    return text


def match_tool_name(
    raw: Any, allowed: Sequence[str], registered: Collection[str], threshold: float, margin: float
) -> NameMatch:
    """Exact → without markup → case/separator-insensitive → unique close match, among ``allowed``.

    A name that is (or folds to) a registered tool outside ``allowed`` is refused rather than bent
    into an allowed one: the model chose a different real tool, and substituting would change what
    the call does.
    """
    if not isinstance(raw, str):
        return NameMatch(name=None)
    usable = [n for n in dict.fromkeys(allowed) if n in registered]
    if raw in usable:
        return NameMatch(name=raw)
    others = [n for n in registered if n not in usable]
    cleaned = clean_tool_name(raw)
    if raw in others or cleaned in others:
        return NameMatch(name=None, elsewhere=True)
    if cleaned in usable:
        return NameMatch(name=cleaned, repair=_name_repair(raw, cleaned, "tool_name_markup", "safe"))
    key = fold(cleaned)
    hits = [n for n in usable if fold(n) == key] if key else []
    if any(fold(n) == key for n in others) and key:
        return NameMatch(name=None, elsewhere=True)
    if len(hits) == 1:
        return NameMatch(name=hits[0], repair=_name_repair(raw, hits[0], "tool_name_case", "safe"))
    if hits or not cleaned:
        return NameMatch(name=None)
    found = best_match(cleaned, usable, threshold, margin)
    if found is None:
        return NameMatch(name=None)
    score = similarity(cleaned, found)
    if any(similarity(cleaned, n) >= score - _EPS for n in others):
        return NameMatch(name=None)
    return NameMatch(name=found, repair=_name_repair(raw, found, "tool_name_fuzzy", "semantic"))


def _name_repair(raw: str, name: str, rule: str, kind: Literal["safe", "semantic"]) -> Repair:
    return Repair(field="", from_=raw, to=name, rule=rule, kind=kind)
