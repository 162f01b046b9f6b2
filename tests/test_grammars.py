"""No reply schema the agent can send may crash or hang the process that decodes under its grammar.

Every schema pes-agent sends to a constrained model is collected here: the plan and refinement reply
for the demo tools and for each benchmark catalogue, guided plans, every tool-step reply (plain and
guided, per tool and per catalogue), arg-fill replies, and hand-made tool schemas that reach into
the corners of JSON Schema (long and short strings, patterns, formats, numeric ranges, nesting,
composition, ``$ref`` and recursion, any value, type lists).

- The pure part (always runs, no model): each schema compiles with ``grammar_for`` (or is refused
  with ``ProviderError`` when nothing can match it) into a grammar without deep nesting. Nesting is
  what killed the process before: one optional group per character of a ``maxLength`` string,
  hundreds deep, and llama.cpp's grammar code died with SIGSEGV.
- The real-model part (``local_model``): each distinct grammar is decoded once by SmolLM2-135M in a
  child process (``tests/grammar_child.py``), so a crash fails one case instead of killing pytest.
  A child that dies is replaced by a new one for the remaining cases, and the case it died on is
  named. A reply that ends with ``stop`` must be JSON valid against the schema the agent sent (not
  the tightened one the grammar was made from); a reply cut at the token cap may be incomplete.

Known gaps of the product are marked ``xfail(strict=True)`` case by case, with the reason, so a fix
shows up as an unexpected pass.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from pes_agent.errors import ProviderError
from pes_agent.guided.arguments import EarlierResult, guided_arguments_schema
from pes_agent.guided.parts import query_parts
from pes_agent.guided.prompts import guided_plan_schema
from pes_agent.llm.llamacpp import grammar_for
from pes_agent.prompts.recovery import NeededField, fill_schema
from pes_agent.prompts.schemas import content_reply_schema, plan_reply_schema, step_reply_schema
from pes_agent.tools.decorators import tool
from tests.local_model_check import local_model_missing

REPO = Path(__file__).resolve().parents[1]
SHARED_CATALOGS = Path(__file__).resolve().parents[2] / "shared" / "bench" / "catalogs"
FIXTURE_CATALOGS = REPO / "tests" / "fixtures" / "catalogs"
CHILD = REPO / "tests" / "grammar_child.py"

MAX_NESTING = 12
"""Deepest parenthesised group a grammar may hold; the grammars that crashed nested hundreds deep."""
REPLY_TOKENS = 512
"""The reply cap the grammars are compiled for (config/local.yaml's ``max_tokens``)."""
MODEL_REPLY_TOKENS = 48
"""Tokens the real model generates per case: enough to enter every grammar, short enough to be quick."""
CASE_TIMEOUT_S = 60.0
"""One generation taking longer than this is a hang (they take about a second)."""
LOAD_TIMEOUT_S = 60.0
"""Loading the model taking longer than this fails the child."""

MAIN_QUERY = "Compute 12 * 7, then count the words in 'the answer is 84'."
CATALOGUE_QUERY = "Find 'quarterly report' for Acme Corp from 2024-05-01 to 2024-06-30, limit 20 results."


@dataclass(frozen=True, kw_only=True)
class Case:
    """One schema the agent can send, the phase it is sent in, and how the model is asked for it."""

    id: str
    phase: str
    schema: Any
    prompt: str
    on_model: bool = True
    """Decoded by the real model too (every other case is compiled only: the catalogues' 200 tools
    share their 50 property shapes with the ones that are decoded)."""
    compile_gap: str | None = None
    """Why this schema does not compile today (a product gap): the pure test is a strict xfail."""
    model_gap: str | None = None
    """Why the model's reply under this grammar is not valid today: the model test is a strict xfail."""
    messages: tuple[Mapping[str, str], ...] | None = None
    """The messages the agent itself sends with this schema (else a system line and ``prompt``)."""


# --- the schemas ----------------------------------------------------------------------------------


def _catalogue_dir() -> Path:
    return SHARED_CATALOGS if SHARED_CATALOGS.is_dir() else FIXTURE_CATALOGS


def _catalogues() -> dict[str, list[dict[str, Any]]]:
    """Catalogue name (``N10``) → its tools, from ``../shared/bench/catalogs`` when it is there, else
    from the copies in ``tests/fixtures/catalogs`` (``catalog_N10.json`` at least)."""
    out = {}
    for path in sorted(_catalogue_dir().glob("catalog_N*.json"), key=lambda p: int(p.stem.split("_N")[1])):
        out[path.stem.split("_")[1]] = json.loads(path.read_text(encoding="utf-8"))["tools"]
    return out


def _demo_toolsets() -> dict[str, dict[str, tuple[str, Mapping[str, Any]]]]:
    """Name → {tool: (summary, input schema)} for the tool lists the package ships."""
    from pes_agent.demo import text_tools, tools

    sets = {"local": text_tools.LOCAL_TOOLS, "demo": [*tools.DEMO_TOOLS, tools.calculator]}
    return {name: {t.name: (t.summary, t.input_schema) for t in specs} for name, specs in sets.items()}


def _value(schema: Any, *, required: bool = True) -> dict[str, Any]:
    """A tool input schema with one argument, ``value``."""
    out: dict[str, Any] = {"type": "object", "properties": {"value": schema}}
    if required:
        out["required"] = ["value"]
    return out


class _Address(BaseModel):
    street: str
    city: str


@tool  # type: ignore[untyped-decorator]  # `tool` is typed in pes_agent; tests are checked without it
def _ship(to: _Address, count: int) -> str:
    """Ship ``count`` parcels to an address."""
    return f"{count} to {to.city}"


_TREE = {
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/node"}},
    "required": ["root"],
    "$defs": {
        "node": {
            "type": "object",
            "properties": {
                "label": {"type": "string", "maxLength": 20},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 3},
            },
            "required": ["label"],
            "additionalProperties": False,
        }
    },
}

_LOOKAHEAD = "a look-ahead is outside the regex subset, so gbnf.py falls back to a bounded free string"
_EXCLUSIVE = (  # a gap the model does not hit with this prompt (it writes 12): reported, not marked
    "gbnf.py reads exclusiveMinimum 0 as 'no minus sign', so 0 and 0.0 fit the grammar though the "
    "schema excludes them"
)
_NUMBER_RANGE = (
    "gbnf.py bounds a number only by its sign (number_body): minimum -1.5 / maximum 1.5 leave any "
    "number in the grammar, and the model writes 12"
)
_ONE_OF = (
    "gbnf.py compiles oneOf as anyOf: an integer fits both branches ({integer} and {number}), which "
    "oneOf forbids"
)

HAND_MADE: dict[str, tuple[dict[str, Any], str | None]] = {
    # name: (tool input schema, model gap)
    "string-maxLength-1": (_value({"type": "string", "maxLength": 1}), None),
    "string-maxLength-50": (_value({"type": "string", "maxLength": 50}), None),
    "string-maxLength-400": (_value({"type": "string", "maxLength": 400}), None),
    "string-maxLength-2000": (_value({"type": "string", "maxLength": 2000}), None),
    "string-maxLength-10000": (_value({"type": "string", "maxLength": 10_000}), None),
    "string-minLength-3": (_value({"type": "string", "minLength": 3}), None),
    "string-minLength-10-maxLength-20": (_value({"type": "string", "minLength": 10, "maxLength": 20}), None),
    "enum-strings": (_value({"type": "string", "enum": ["upper", "lower", "title"]}), None),
    "enum-mixed": (_value({"enum": [1, "one", None, True, 2.5]}), None),
    "enum-escapes": (
        _value({"enum": ['say "hi"', "back\\slash", "line\nbreak", "tab\there", "ünï €"]}),
        None,
    ),
    "enum-200": (_value({"type": "string", "enum": [f"option_{i:03d}" for i in range(200)]}), None),
    "const-string": (_value({"const": "fixed"}), None),
    "const-object": (_value({"const": {"a": [1, 2], "b": None}}), None),
    "pattern-code": (_value({"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"}), None),
    "pattern-identifier": (_value({"type": "string", "pattern": "^[a-z_][a-z0-9_-]*$"}), None),
    "pattern-unanchored": (_value({"type": "string", "pattern": "[0-9]{3}"}), None),
    "pattern-lookahead": (_value({"type": "string", "pattern": "^(?=.*[0-9])[a-z0-9]{6,12}$"}), _LOOKAHEAD),
    "format-date": (_value({"type": "string", "format": "date"}), None),
    "format-date-time": (_value({"type": "string", "format": "date-time"}), None),
    "format-time": (_value({"type": "string", "format": "time"}), None),
    "format-uuid": (_value({"type": "string", "format": "uuid"}), None),
    "format-email": (_value({"type": "string", "format": "email"}), None),
    "integer-small-range": (_value({"type": "integer", "minimum": 1, "maximum": 10}), None),
    "integer-negative-range": (_value({"type": "integer", "minimum": -20, "maximum": -5}), None),
    "integer-large-range": (_value({"type": "integer", "minimum": 1000, "maximum": 1_000_000}), None),
    "integer-unbounded": (_value({"type": "integer"}), None),
    "number-exclusiveMinimum": (_value({"type": "number", "exclusiveMinimum": 0}), None),  # see _EXCLUSIVE
    "number-range": (_value({"type": "number", "minimum": -1.5, "maximum": 1.5}), _NUMBER_RANGE),
    "boolean": (_value({"type": "boolean"}), None),
    "nested-4-deep": (
        _value(
            {
                "type": "object",
                "properties": {
                    "b": {
                        "type": "object",
                        "properties": {
                            "c": {
                                "type": "object",
                                "properties": {"d": {"type": "string", "maxLength": 10}},
                                "required": ["d"],
                            }
                        },
                        "required": ["c"],
                    }
                },
                "required": ["b"],
            }
        ),
        None,
    ),
    "array-of-objects": (
        _value(
            {
                "type": "array",
                "minItems": 1,
                "maxItems": 3,
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "maxLength": 12},
                        "qty": {"type": "integer", "minimum": 0},
                    },
                    "required": ["name", "qty"],
                    "additionalProperties": False,
                },
            }
        ),
        None,
    ),
    "array-minItems-above-cap": (
        _value({"type": "array", "items": {"type": "integer"}, "minItems": 10}),
        None,
    ),
    "array-tuple": (
        _value({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}),
        None,
    ),
    "anyOf-string-integer": (
        _value({"anyOf": [{"type": "string", "maxLength": 8}, {"type": "integer"}]}),
        None,
    ),
    "oneOf-disjoint": (_value({"oneOf": [{"type": "string", "enum": ["auto"]}, {"type": "integer"}]}), None),
    "oneOf-overlapping": (_value({"oneOf": [{"type": "integer"}, {"type": "number"}]}), _ONE_OF),
    "allOf-merged": (
        {
            "allOf": [
                {
                    "type": "object",
                    "properties": {"a": {"type": "string", "maxLength": 5}},
                    "required": ["a"],
                },
                {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
            ]
        },
        None,
    ),
    "ref-defs": (
        {
            "type": "object",
            "properties": {"where": {"$ref": "#/$defs/place"}},
            "required": ["where"],
            "$defs": {
                "place": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "maxLength": 20}},
                    "required": ["city"],
                }
            },
        },
        None,
    ),
    "ref-recursive-tree": (_TREE, None),
    "pydantic-model-argument": (dict(_ship.input_schema), None),
    "any-value": (_value({}), None),
    "type-string-or-null": (_value({"type": ["string", "null"]}), None),
    "type-integer-or-null": (_value({"type": ["integer", "null"], "minimum": 0, "maximum": 5}), None),
    "optional-only": (
        {
            "type": "object",
            "properties": {"a": {"type": "boolean"}, "b": {"type": "integer"}},
            "additionalProperties": False,
        },
        None,
    ),
    "odd-property-names": (
        {
            "type": "object",
            "properties": {
                'a "quoted" name': {"type": "boolean"},
                "ünï €": {"type": "boolean"},
                "with space": {"type": "boolean"},
            },
            "required": ['a "quoted" name'],
        },
        None,
    ),
}

IMPOSSIBLE: dict[str, tuple[Any, str | None]] = {
    # name: (a schema nothing can match, why it is not refused today: None when it is)
    "empty-enum": ({"enum": []}, None),
    "nested-empty-enum": (_value({"enum": []}), None),
    "remote-ref": ({"$ref": "https://example.com/schema.json"}, None),
    "dangling-ref": ({"$ref": "#/$defs/missing"}, None),
    "false-schema": (False, None),
    "false-property": (_value(False), None),
    "unknown-type": ({"type": "frob"}, None),
    "empty-type-list": ({"type": []}, None),
    "minLength-above-maxLength": ({"type": "string", "minLength": 5, "maxLength": 2}, None),
    "minimum-above-maximum": ({"type": "integer", "minimum": 10, "maximum": 1}, None),
    "minItems-above-maxItems": (
        {"type": "array", "items": {"type": "integer"}, "minItems": 3, "maxItems": 1},
        None,
    ),
    "allOf-contradictory": ({"allOf": [{"type": "string"}, {"type": "integer"}]}, None),
    "not-anything": ({"not": {}}, None),
}


def _plan_prompt(query: str) -> str:
    return f"Plan the task: {query}"


SCRIPT_QUERIES = {
    "latin-accents": "Calcule 12 * 7 pour Éloïse Müller, puis compte les mots de 'ça a déjà été fait'.",
    "chinese": "我想在肯德基买10个麦辣鸡腿堡，然后计算 12 * 7。",
    "arabic": "احسب 12 * 7، ثم عد الكلمات في 'مرحبا بالعالم الجميل'.",
    "cyrillic": "Вычисли 12 * 7, затем посчитай слова в 'привет большой мир'.",
    "emoji": "Compute 12 * 7 🎉🔥, then count the words in '🍔 and 🍟 👍🏽'.",
}
"""Requests in five scripts (issue 25: a Chinese request once named a grammar rule, llama.cpp could not
parse the grammar and the process died): each goes through every guided prompt that is decoded under
a grammar, with the messages the agent sends."""


def _script_cases() -> list[Case]:
    from pes_agent.demo.text_tools import LOCAL_TOOLS
    from pes_agent.guided.prompts import build_guided_planning, build_guided_step
    from pes_agent.prompts.templates import DEFAULTS
    from pes_agent.prompts.views import PromptSettings

    settings = PromptSettings(persona="Zoi", templates=DEFAULTS)
    summaries = {t.name: t.summary for t in LOCAL_TOOLS}
    cases = []
    for script, query in SCRIPT_QUERIES.items():
        parts = query_parts(query)
        requests = [
            build_guided_planning(
                query,
                parts,
                [f"{n}: {s}" for n, s in summaries.items()],
                summaries,
                settings,
                schemas={t.name: t.input_schema for t in LOCAL_TOOLS},
            )
        ]
        for i, part in enumerate(parts):
            earlier = (
                [EarlierResult(step_id="step_1", description=parts[0], output=84.0, text="84")] if i else []
            )
            requests += [
                build_guided_step(
                    query,
                    part,
                    step_id=f"step_{i + 1}",
                    tool=t.name,
                    description=t.summary,
                    input_schema=t.input_schema,
                    earlier=earlier,
                    settings=settings,
                )
                for t in LOCAL_TOOLS
            ]
        for n, request in enumerate(requests):
            assert request.response_schema is not None
            cases.append(
                Case(
                    id=f"scripts/{script}/{request.phase}{n}",
                    phase=request.phase,
                    schema=request.response_schema,
                    prompt="",
                    messages=tuple({"role": m.role, "content": m.content} for m in request.messages),
                )
            )
    return cases


def collect_cases() -> list[Case]:
    cases: list[Case] = []
    toolsets = _demo_toolsets()
    for name, catalogue in _catalogues().items():
        toolsets[name] = {t["name"]: (t["description"], t["inputSchema"]) for t in catalogue}
    seen_tools: set[str] = set()
    for set_name, tools in toolsets.items():
        decoded = set_name in ("local", "demo", "N10")  # larger catalogues extend N10: compiled only
        for phase in ("planning", "refinement"):
            cases.append(
                Case(
                    id=f"{phase}/{set_name}",
                    phase=phase,
                    schema=plan_reply_schema(list(tools)),
                    prompt=_plan_prompt(MAIN_QUERY),
                )
            )
        query = MAIN_QUERY if set_name in ("local", "demo") else CATALOGUE_QUERY
        # the whole main query makes the model answer in `content`; its first part makes it call a tool
        call = "Call a tool for: " + ("compute 12 * 7." if query == MAIN_QUERY else query)
        cases.append(
            Case(
                id=f"step/{set_name}/all-tools",
                phase="execution",
                schema=step_reply_schema({n: s for n, (_, s) in tools.items()}),
                prompt=call,
            )
        )
        summaries = {n: about for n, (about, _) in tools.items()}
        cases.append(
            Case(
                id=f"guided-plan/{set_name}",
                phase="planning",
                schema=guided_plan_schema(query_parts(query), summaries),
                prompt=_plan_prompt(query),
                on_model=decoded,
            )
        )
        for name, (_, schema) in tools.items():
            key = json.dumps([name, schema], sort_keys=True)
            if key in seen_tools:  # a catalogue repeats the smaller one's tools
                continue
            seen_tools.add(key)
            cases.append(
                Case(
                    id=f"step/{set_name}/{name}",
                    phase="execution",
                    schema=step_reply_schema({name: schema}),
                    prompt=call,
                    on_model=decoded,
                )
            )
            for i, part in enumerate(query_parts(query)):
                cases.append(
                    Case(
                        id=f"guided-args/{set_name}/{name}/part{i + 1}",
                        phase="execution",
                        schema=guided_arguments_schema(schema, part, query, []),
                        prompt=f"Arguments of {name} for: {part}",
                        on_model=decoded,
                    )
                )
    earlier = [EarlierResult(step_id="step_1", description="Compute 12 * 7", output=84.0, text="84")]
    calculator = _demo_toolsets()["local"]["calculator"][1]
    cases.append(
        Case(
            id="guided-args/local/calculator/with-earlier-result",
            phase="execution",
            schema=guided_arguments_schema(
                calculator, "add 10 to it", "Compute 12 * 7, then add 10 to it.", earlier
            ),
            prompt="Arguments of calculator for: add 10 to it",
        )
    )
    for name, phrase in (
        ("guided-plan/local/no-tool-matches", "What is the capital of France?"),
        (
            "guided-plan/local/three-parts",
            "Make 'hello world' upper case, then count its words, then compute 3 + 4.",
        ),
    ):
        summaries = {n: about for n, (about, _) in toolsets["local"].items()}
        cases.append(
            Case(
                id=name,
                phase="planning",
                schema=guided_plan_schema(query_parts(phrase), summaries),
                prompt=_plan_prompt(phrase),
            )
        )
    cases += _script_cases()
    cases.append(
        Case(
            id="content",
            phase="execution",
            schema=content_reply_schema(),
            prompt=f"Say what you found for: {MAIN_QUERY}",
        )
    )
    cases.append(
        Case(
            id="arg-fill/free-values",
            phase="arg_fill",
            schema=fill_schema(
                [NeededField(name="expression", type="string"), NeededField(name="count", type="integer")]
            ),
            prompt=f"Fill expression and count for: {MAIN_QUERY}",
        )
    )
    cases.append(
        Case(
            id="arg-fill/allowed-values",
            phase="arg_fill",
            schema=fill_schema(
                [
                    NeededField(name="mode", allowed=("upper", "lower", "title")),
                    NeededField(name="text", description="The text."),
                ]
            ),
            prompt="Fill mode and text for: make 'hello' upper case",
        )
    )
    for name, (schema, model_gap) in HAND_MADE.items():
        cases.append(
            Case(
                id=f"tool/{name}",
                phase="execution",
                schema=schema,
                prompt="Give the value for: compute 12 * 7",
                model_gap=model_gap,
            )
        )
        cases.append(
            Case(
                id=f"step/hand-made/{name}",
                phase="execution",
                schema=step_reply_schema({"probe": schema}),
                prompt="Call probe for: compute 12 * 7",
                on_model=False,
                compile_gap=None,
            )
        )
    return cases


def _guided_hand_made() -> Iterator[Any]:
    """Guided argument schemas of the hand-made tools: built lazily, since building one may raise."""
    for name, (schema, _) in HAND_MADE.items():
        marks: list[Any] = []
        yield pytest.param(name, schema, id=name, marks=marks)


CASES = collect_cases()


def _params(cases: list[Case], gap: str) -> list[Any]:
    out = []
    for case in cases:
        reason = getattr(case, gap)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(case, id=case.id, marks=marks))
    return out


# --- the pure part ----------------------------------------------------------------------------------


def nesting_depth(grammar: str) -> int:
    """The deepest parenthesised group in a GBNF text (string literals and character classes skipped)."""
    depth = deepest = 0
    closing = None  # the character that ends the literal or class being read
    escaped = False
    for ch in grammar:
        if closing is not None:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == closing:
                closing = None
        elif ch == '"':
            closing = '"'
        elif ch == "[":
            closing = "]"
        elif ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")":
            depth -= 1
            assert depth >= 0, f"unbalanced ')' in grammar:\n{grammar[:2000]}"
    assert depth == 0 and closing is None, f"unbalanced grammar:\n{grammar[:2000]}"
    return deepest


def test_the_nesting_measure_catches_the_grammar_that_crashed() -> None:
    """What llama-cpp-python's own converter made of a 400-character string (one optional group per
    character), and what gbnf.py makes of it."""
    nested = 'char ::= [^"\\\\]\nroot ::= "\\"" ' + "(char " * 400 + ")? " * 400 + '"\\""\n'
    assert nesting_depth(nested) == 400
    assert nesting_depth('root ::= "(((" [(] ("a" ("b")?)?\n') == 2
    assert nesting_depth(grammar_for(HAND_MADE["string-maxLength-400"][0], "execution", REPLY_TOKENS)) <= 2


@pytest.mark.parametrize("case", _params(CASES, "compile_gap"))
def test_every_schema_compiles_to_a_flat_grammar(case: Case) -> None:
    grammar = grammar_for(case.schema, case.phase, REPLY_TOKENS)
    assert grammar.startswith("root ::= ") and grammar.endswith("\n")
    assert nesting_depth(grammar) <= MAX_NESTING, f"{case.id}: nesting too deep:\n{grammar[:2000]}"


@pytest.mark.parametrize(("name", "schema"), list(_guided_hand_made()))
def test_guided_arguments_of_every_hand_made_tool_compile(name: str, schema: Mapping[str, Any]) -> None:
    for part in query_parts(MAIN_QUERY):
        guided = guided_arguments_schema(schema, part, MAIN_QUERY, [])
        assert nesting_depth(grammar_for(guided, "execution", REPLY_TOKENS)) <= MAX_NESTING


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param(schema, id=name, marks=[pytest.mark.xfail(strict=True, reason=gap)] if gap else [])
        for name, (schema, gap) in IMPOSSIBLE.items()
    ],
)
def test_a_schema_nothing_can_match_is_refused(schema: Any) -> None:
    with pytest.raises(ProviderError) as refused:
        grammar_for(schema, "execution", REPLY_TOKENS)
    assert refused.value.retryable is False
    assert "cannot be turned into a grammar" in str(refused.value)


def test_the_catalogues_come_from_shared_when_it_is_there() -> None:
    assert (FIXTURE_CATALOGS / "catalog_N10.json").is_file(), "the suite's own copy of the 10-tool catalogue"
    if not SHARED_CATALOGS.is_dir():
        pytest.skip(f"{SHARED_CATALOGS} is absent: only the copies in tests/fixtures/catalogs were used")
    shared = sorted(p.name for p in SHARED_CATALOGS.glob("catalog_N*.json"))
    assert shared, f"no catalog_N*.json in {SHARED_CATALOGS}"
    covered = {c.id.split("/")[1] for c in CASES if c.id.startswith("planning/")}
    assert {name.removeprefix("catalog_").removesuffix(".json") for name in shared} <= covered


# --- the real model, in child processes ---------------------------------------------------------------


@dataclass(kw_only=True)
class Outcome:
    """What became of one generation."""

    status: str
    """``done``, ``error`` (llama.cpp refused the grammar), ``crashed``, ``hung`` or ``not run``."""
    text: str = ""
    finish_reason: str | None = None
    tokens: int | None = None
    seconds: float | None = None
    detail: str = ""
    problems: list[str] = field(default_factory=list)
    """Why a ``stop`` reply is not valid (empty when it is, or when it was cut)."""


@dataclass(kw_only=True)
class ModelRun:
    outcomes: dict[str, Outcome]
    """Keyed by ``_decode_key``."""
    children: list[str]
    seconds: float


def _messages(case: Case) -> list[dict[str, str]]:
    if case.messages is not None:
        return [dict(m) for m in case.messages]
    return [{"role": "system", "content": "Reply in JSON."}, {"role": "user", "content": case.prompt}]


def _decode_key(case: Case) -> str:
    """Cases with the same prompt and grammar are decoded once."""
    return json.dumps([_messages(case), grammar_for(case.schema, case.phase, REPLY_TOKENS)])


def _signal_name(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def run_in_children(
    jobs: Mapping[str, Mapping[str, Any]],
    workdir: Path,
    *,
    child: Path = CHILD,
    case_timeout: float = CASE_TIMEOUT_S,
    load_timeout: float = LOAD_TIMEOUT_S,
) -> tuple[dict[str, Outcome], list[str]]:
    """Decode each job (key → {"messages", "grammar"}) in child processes; a new child takes over the
    remaining jobs whenever one dies or hangs. Returns the outcomes and one line per child."""
    outcomes: dict[str, Outcome] = {}
    log: list[str] = []
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    pending = list(jobs)
    for n in range(1, len(jobs) + 2):
        if not pending:
            break
        ids = {f"c{i}": key for i, key in enumerate(pending)}
        job = {
            "n_ctx": 512,
            "n_threads": 1,
            "max_tokens": MODEL_REPLY_TOKENS,
            "cases": [{"id": cid, **jobs[key]} for cid, key in ids.items()],
        }
        job_path, progress_path, err_path = (workdir / f"child{n}.{ext}" for ext in ("json", "jsonl", "err"))
        job_path.write_text(json.dumps(job), encoding="utf-8")
        progress_path.write_text("", encoding="utf-8")
        started = time.monotonic()
        with open(err_path, "w", encoding="utf-8") as err:
            proc = subprocess.Popen(
                [sys.executable, str(child), str(job_path), str(progress_path)],
                env=env,
                cwd=REPO,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        current: str | None = None
        since = started
        read = 0
        hung = False
        while True:
            returncode = proc.poll()
            lines = progress_path.read_text(encoding="utf-8").split("\n")[:-1]  # complete lines only
            for line in lines[read:]:
                record = json.loads(line)
                since = time.monotonic()
                if record["event"] == "start":
                    current = record["id"]
                elif record["event"] in ("done", "error"):
                    key = ids[record["id"]]
                    outcomes[key] = Outcome(
                        status=record["event"],
                        text=record.get("text", ""),
                        finish_reason=record.get("finish_reason"),
                        tokens=record.get("tokens"),
                        seconds=record.get("seconds"),
                        detail=record.get("error", ""),
                    )
                    current = None
            read = len(lines)
            if returncode is not None:
                break
            if time.monotonic() - since > (case_timeout if current else load_timeout):
                proc.kill()
                proc.wait()
                hung = True
                break
            time.sleep(0.05)
        done = sum(1 for key in ids.values() if key in outcomes)
        log.append(
            f"child {n}: {done} of {len(ids)} cases in {time.monotonic() - started:.1f} s, "
            f"{'killed after hanging' if hung else _signal_name(proc.returncode)}"
        )
        if current is not None:
            key = ids[current]
            if hung:
                outcomes[key] = Outcome(
                    status="hung", detail=f"no reply within {case_timeout:g} s; child killed"
                )
            else:
                stderr = err_path.read_text(encoding="utf-8", errors="replace")[-1500:]
                outcomes[key] = Outcome(
                    status="crashed", detail=f"{_signal_name(proc.returncode)}; stderr: {stderr}"
                )
        elif proc.returncode != 0 or hung:
            stderr = err_path.read_text(encoding="utf-8", errors="replace")[-1500:]
            if done == 0:  # the model never loaded: every remaining job would fail the same way
                for key in pending:
                    outcomes[key] = Outcome(
                        status="not run", detail=f"child {n} failed before any case: {stderr}"
                    )
        pending = [key for key in pending if key not in outcomes]
    return outcomes, log


def _judge(case: Case, outcome: Outcome) -> list[str]:
    """Why a reply that ended on its own is not valid against the schema the agent sent."""
    if outcome.status != "done" or outcome.finish_reason != "stop":
        return []
    try:
        value = json.loads(outcome.text)
    except ValueError as exc:
        return [f"not JSON ({exc})"]
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
        for e in Draft202012Validator(case.schema).iter_errors(value)
    ]


_FAKE_CHILD = """
import json, os, signal, sys, time
job = json.load(open(sys.argv[1]))
with open(sys.argv[2], "a") as progress:
    def note(record):
        progress.write(json.dumps(record) + "\\n")
        progress.flush()
    note({"event": "loaded"})
    for case in job["cases"]:
        note({"event": "start", "id": case["id"]})
        if case["grammar"] == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if case["grammar"] == "hang":
            time.sleep(600)
        if case["grammar"] == "refused":
            note({"event": "error", "id": case["id"], "error": "ValueError: bad grammar"})
            continue
        note({"event": "done", "id": case["id"], "text": "{}", "finish_reason": "stop", "seconds": 0.0})
"""


def test_a_child_that_dies_or_hangs_fails_its_case_and_the_rest_run_in_a_new_child(tmp_path: Path) -> None:
    """The harness itself, with a stand-in child: no model needed."""
    child = tmp_path / "fake_child.py"
    child.write_text(_FAKE_CHILD, encoding="utf-8")
    jobs: dict[str, dict[str, Any]] = {
        key: {"messages": [], "grammar": key} for key in ("ok1", "crash", "ok2", "hang", "refused", "ok3")
    }
    outcomes, log = run_in_children(jobs, tmp_path, child=child, case_timeout=1.0)
    assert {key: o.status for key, o in outcomes.items()} == {
        "ok1": "done",
        "crash": "crashed",
        "ok2": "done",
        "hang": "hung",
        "refused": "error",
        "ok3": "done",
    }
    assert "SIGSEGV" in outcomes["crash"].detail
    assert outcomes["refused"].detail == "ValueError: bad grammar"
    assert (
        len(log) == 3 and "killed by SIGSEGV" in log[0] and "hanging" in log[1] and "exit status 0" in log[2]
    )


MODEL_CASES = [c for c in CASES if c.on_model and c.compile_gap is None]


@pytest.fixture(scope="module")
def model_run(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> ModelRun:
    missing = local_model_missing()
    if missing:
        pytest.skip(missing)
    jobs: dict[str, dict[str, Any]] = {}
    for case in MODEL_CASES:
        key = _decode_key(case)
        jobs.setdefault(key, {"messages": _messages(case), "grammar": json.loads(key)[1]})
    started = time.monotonic()
    outcomes, log = run_in_children(jobs, tmp_path_factory.mktemp("grammars"))
    run = ModelRun(outcomes=outcomes, children=log, seconds=time.monotonic() - started)
    _print_summary(run, pytestconfig)
    return run


def _print_summary(run: ModelRun, config: pytest.Config) -> None:
    head = (
        f"grammar cases on the real model: {len(MODEL_CASES)} cases, {len(run.outcomes)} distinct "
        f"generations, {run.seconds:.1f} s"
    )
    lines = [head]
    lines += [f"  {line}" for line in run.children]
    for case in MODEL_CASES:
        outcome = run.outcomes.get(_decode_key(case), Outcome(status="missing"))
        problems = _judge(case, outcome)
        verdict = (
            ("INVALID: " + "; ".join(problems))
            if problems
            else (
                "valid"
                if outcome.finish_reason == "stop"
                else "cut at cap"
                if outcome.status == "done"
                else outcome.detail
            )
        )
        timing = f"{outcome.seconds:5.2f}s" if outcome.seconds is not None else "   -  "
        lines.append(
            f"  {outcome.status:7} {outcome.finish_reason or '-':6} {timing} {case.id:60} {verdict[:100]}"
            f"  {outcome.text[:70]!r}"
        )
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
        if reporter is not None:
            reporter.write_line("")
        for line in lines:
            if reporter is not None:
                reporter.write_line(line)
            else:
                print(line, file=sys.stderr)


@pytest.mark.local_model
@pytest.mark.parametrize("case", _params(MODEL_CASES, "model_gap"))
def test_the_model_decodes_under_every_grammar(case: Case, model_run: ModelRun) -> None:
    grammar = grammar_for(case.schema, case.phase, REPLY_TOKENS)
    outcome = model_run.outcomes.get(
        _decode_key(case), Outcome(status="not run", detail="no child reached it")
    )
    excerpt = grammar[:1500]
    assert outcome.status == "done", f"{case.id}: {outcome.status}: {outcome.detail}\ngrammar:\n{excerpt}"
    assert outcome.finish_reason in ("stop", "length"), f"{case.id}: finish_reason {outcome.finish_reason!r}"
    problems = _judge(case, outcome)
    assert not problems, (
        f"{case.id}: a reply that ended on its own is not valid against the schema sent: {problems}\n"
        f"reply: {outcome.text!r}\nschema: {json.dumps(case.schema)[:800]}\ngrammar:\n{excerpt}"
    )


def test_request_text_never_names_a_grammar_rule() -> None:
    """Rule names are ASCII whatever the request's script; its text appears only in literals."""
    for case in _script_cases():
        grammar = grammar_for(case.schema, case.phase, REPLY_TOKENS)
        names = [line.split(" ::= ", 1)[0] for line in grammar.splitlines()]
        assert all(name.isascii() and name.replace("-", "").isalnum() for name in names), (case.id, names)


def test_a_grammar_llama_cpp_could_not_parse_is_refused_before_it_reaches_the_model() -> None:
    from pes_agent.llm.llamacpp import check_rule_names

    check_rule_names('root ::= "a" root-x\nroot-x ::= "我"')
    with pytest.raises(ValueError, match="cannot parse"):
        check_rule_names('root ::= root-我\nroot-我 ::= "a"')
