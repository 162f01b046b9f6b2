"""The gate's certain repairs: tool names, argument names and values a model got almost right.

Everything here is lossless or declared by the tool's author: a case or separator change, a declared
alias, a unique close match, ``"10"`` → ``10``. Anything that would guess (``"ten"`` → ``10``,
``True`` → ``1``, a first enum value for a missing one) is left for the model or the user.

The repairs work on a tool's ``ToolPlan`` (``schema_plan``). Value repairs reach the top-level
properties and the items of top-level arrays; deeper structure is left to the validator's
messages, which is where small models send simple values anyway.
"""

from __future__ import annotations

import decimal
import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

from pes_agent.gate.schema_plan import (
    NO_DEFAULT,
    FieldInfo,
    ToolPlan,
    build_plan,
    field_info,
    fold,
    in_enum,
    json_type,
)

__all__ = [
    "MISSING",
    "NO_DEFAULT",
    "FieldInfo",
    "KeyOutcome",
    "NameMatch",
    "Repair",
    "ToolPlan",
    "ValueOutcome",
    "best_match",
    "build_plan",
    "clean_tool_name",
    "coerce",
    "field_info",
    "fold",
    "in_enum",
    "json_type",
    "map_keys",
    "match_tool_name",
    "normalize_value",
    "same_value",
    "similarity",
    "unwrap_envelope",
]

_EPS = 1e-9
_INT = re.compile(r"[+-]?\d+")
_INTEGRAL = re.compile(r"([+-]?\d+)\.0*")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
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
        fixed = coerce(v, info.types, options=info.enum is not None)
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


def coerce(value: Any, types: Collection[str], *, options: bool = False) -> tuple[Any, str] | None:
    """Lossless type fixes only. ``True`` is never a number and ``"ten"`` is never 10; a number is
    its text where a string is wanted (``24.5`` → ``"24.5"``, every digit kept), but never an
    option of an enum (``options``): no choice is made by turning a number into text."""
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
    if kind in (int, float) and "string" in types and not {"number", "integer"} & set(types) and not options:
        text = _number_text(value)  # a number found before, for a text ("encrypt the price")
        return (text, "number_text") if text is not None else None
    return None


def _number_text(value: float) -> str | None:
    """A number written out with every digit (no exponent); None for infinities and NaN, which no
    text states."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    text = format(decimal.Decimal(repr(value)), "f")
    return text


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
