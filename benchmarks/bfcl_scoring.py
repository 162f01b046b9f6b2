"""BFCL's data, its functions as JSON Schema, its fixed sample, and its AST rules: the model-free half
of `benchmarks/bfcl.py`.

The Berkeley Function Calling Leaderboard (v4) gives each request a user question, the functions on
offer (BFCL's own schema dialect) and, separately, its possible answers: for the one right call, each
parameter's list of accepted values (``""`` among them marks a parameter that may be left out). This
module reads the three Python-language categories the benchmark runs, turns the functions into
pes-agent input schemas, draws the fixed sample, and scores a call by BFCL's AST rules, written here
from the rules as the leaderboard documents them (no BFCL code is imported or copied):

1. the call names the expected function;
2. every parameter the function requires is given;
3. no parameter the function does not declare, or that the possible answers do not list, is given;
4. each value has the declared type (``integer`` an int and never a bool, ``float`` a float where an
   int is accepted and read as a float, ``array``/``tuple`` a list whose items have the item type,
   ``dict`` an object, ``any`` a string); a value of the possible answers' own type is accepted too
   (BFCL's "variable" case, compared as it is);
5. each value is one of the parameter's possible answers: strings after BFCL's standardisation
   (lower-cased, spaces and the punctuation ``,./-_*^`` removed, ``'`` read as ``"``), lists element by
   element (string items standardised), objects key by key (a key the answer does not list is wrong,
   one it lists without ``""`` must be there), lists of objects object by object, other values by
   equality (``5 == 5.0``);
6. a parameter the possible answers list without ``""`` must be given (an optional one whose possible
   answers include ``""`` may be omitted).

In these categories BFCL also requires exactly one call: a run is right when it executed exactly one
call and that call passes. The first executed call's verdict is kept apart, so a run that made the
right call and then more is visible.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks._common import evenly_spaced

CATEGORIES: dict[str, str] = {
    "simple": "BFCL_v4_simple_python.json",
    "multiple": "BFCL_v4_multiple.json",
    "live_simple": "BFCL_v4_live_simple.json",
}
"""Category → question file; the possible answers are the same name under ``possible_answer/``."""
SAMPLE: dict[str, int] = {"simple": 60, "multiple": 50, "live_simple": 50}
"""The fixed sample: this many requests per category, evenly spaced through its file (160 in all)."""
DATA_HINT = (
    "git clone https://github.com/ShishirPatil/gorilla and pass --data "
    "gorilla/berkeley-function-call-leaderboard/bfcl_eval/data (or set BFCL_DATA)"
)


# --- the data -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    id: str
    category: str
    query: str
    """The user's message; a system message, where the request has one, is put before it."""
    functions: tuple[Mapping[str, Any], ...]
    expected: str
    """The name of the one right call."""
    answers: Mapping[str, list[Any]]
    """Its parameters' possible answers."""

    def function(self, name: str) -> Mapping[str, Any] | None:
        return next((f for f in self.functions if f["name"] == name), None)


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise SystemExit(f"bfcl: {path} is missing. Get BFCL's data: {DATA_HINT}.")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def query_of(turns: Sequence[Sequence[Mapping[str, str]]]) -> str:
    """The request's one turn as one text: its system message (if any), then the user's."""
    messages = [m for turn in turns for m in turn]
    system = [m["content"].strip() for m in messages if m["role"] == "system"]
    user = [m["content"].strip() for m in messages if m["role"] == "user"]
    return "\n\n".join([*system, *user])


def load_category(data: Path, category: str) -> list[Request]:
    name = CATEGORIES[category]
    answers = {row["id"]: row["ground_truth"] for row in _lines(data / "possible_answer" / name)}
    requests = []
    for row in _lines(data / name):
        truth = answers[row["id"]]
        if len(truth) != 1 or len(truth[0]) != 1:
            raise SystemExit(f"bfcl: {row['id']} expects {len(truth)} calls; these categories have one")
        [(expected, params)] = truth[0].items()
        requests.append(
            Request(
                id=row["id"],
                category=category,
                query=query_of(row["question"]),
                functions=tuple(row["function"]),
                expected=expected,
                answers=params,
            )
        )
    return requests


def load_requests(data: Path, categories: Sequence[str] = tuple(CATEGORIES)) -> list[Request]:
    return [r for c in categories for r in load_category(data, c)]


def fixed_sample(requests: Sequence[Request], sizes: Mapping[str, int] = SAMPLE) -> list[Request]:
    """``sizes[category]`` requests of each category, evenly spaced through its file: no randomness."""
    chosen: list[Request] = []
    for category, k in sizes.items():
        chosen += evenly_spaced([r for r in requests if r.category == category], k)
    return chosen


# --- BFCL's functions as JSON Schema ------------------------------------------------------------------

_JSON_TYPES: dict[str, str | None] = {
    "string": "string",
    "integer": "integer",
    "float": "number",
    "number": "number",
    "boolean": "boolean",
    "array": "array",
    "tuple": "array",
    "dict": "object",
    "object": "object",
    "any": None,
}


def _fits(value: Any, kind: str | None) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def json_schema(node: Mapping[str, Any]) -> dict[str, Any]:
    """One BFCL parameter (or the whole ``parameters`` object) as JSON Schema: ``dict`` is an object,
    ``float`` a number, ``tuple`` an array, ``any`` no type; descriptions, enums, defaults (those of
    the declared type), items, properties and required lists kept."""
    kind = _JSON_TYPES.get(str(node.get("type", "any")), None)
    schema: dict[str, Any] = {} if kind is None else {"type": kind}
    if node.get("description"):
        schema["description"] = str(node["description"])
    enum = node.get("enum")
    if isinstance(enum, list) and enum and all(_fits(v, kind) for v in enum):
        schema["enum"] = [v for i, v in enumerate(enum) if v not in enum[:i]]
    if "default" in node and node["default"] is not None and _fits(node["default"], kind):
        schema["default"] = node["default"]
    if kind == "array" and isinstance(node.get("items"), Mapping):
        schema["items"] = json_schema(node["items"])
    properties = node.get("properties")
    if kind == "object" and isinstance(properties, Mapping):
        schema["properties"] = {k: json_schema(v) for k, v in properties.items() if isinstance(v, Mapping)}
        required = [r for r in node.get("required") or () if r in schema["properties"]]
        if required:
            schema["required"] = required
    return schema


def input_schema(function: Mapping[str, Any]) -> dict[str, Any]:
    """A BFCL function's parameters as a tool's input schema: an object, no undeclared properties."""
    schema = json_schema({**function.get("parameters", {}), "type": "dict"})
    schema.setdefault("properties", {})
    schema["additionalProperties"] = False
    return schema


# --- BFCL's AST rules ---------------------------------------------------------------------------------

_PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}

KINDS = (
    "right",
    "no call",
    "more than one call",
    "wrong function",
    "missing required",
    "unexpected parameter",
    "wrong type",
    "wrong value",
    "missing optional",
)
"""A call's verdicts, in the order the rules are checked (the first broken rule names the verdict)."""


@dataclass(frozen=True)
class Verdict:
    kind: str
    detail: str = ""

    @property
    def right(self) -> bool:
        return self.kind == "right"


def standardize(text: str) -> str:
    """BFCL's string form: no spaces or ``,./-_*^``, lower case, ``'`` as ``"``."""
    return re.sub(r"[ ,./\-_*^]", "", text).lower().replace("'", '"')


def _std(value: Any) -> Any:
    return standardize(value) if isinstance(value, str) else value


def _answer_type(possible: Sequence[Any]) -> type | None:
    """The type of the possible answers (their first one that is not ``""``)."""
    return next((type(p) for p in possible if p != ""), None)


def _typed(value: Any, declared: str) -> bool:
    expected = _PYTHON_TYPES.get(declared, str)
    return type(value) is expected


def _item_types_ok(value: list[Any], item: str | None) -> bool:
    if item is None or item not in _PYTHON_TYPES:
        return True
    return all(_typed(float(v) if item == "float" and type(v) is int else v, item) for v in value)


def _dict_ok(value: Mapping[str, Any], answer: Any) -> bool:
    if not isinstance(answer, Mapping):
        return False
    for key, given in value.items():
        if key not in answer or _std(given) not in [_std(a) for a in answer[key]]:
            return False
    return all(key in value or "" in accepted for key, accepted in answer.items())


def _value_ok(value: Any, declared: str, item: str | None, possible: Sequence[Any]) -> bool:
    if declared == "dict":
        return any(_dict_ok(value, answer) for answer in possible if answer != "")
    if declared in ("array", "tuple") and item == "dict":
        return any(
            isinstance(answer, list)
            and len(answer) == len(value)
            and all(_dict_ok(v, a) for v, a in zip(value, answer, strict=True))
            for answer in possible
        )
    if declared in ("string", "any"):
        return standardize(value) in [standardize(p) for p in possible if isinstance(p, str)]
    if declared in ("array", "tuple"):
        return [_std(v) for v in value] in [[_std(a) for a in p] for p in possible if isinstance(p, list)]
    return value in possible


def check_call(
    function: Mapping[str, Any], answers: Mapping[str, Sequence[Any]], name: str, arguments: Mapping[str, Any]
) -> Verdict:
    """One call against the expected function's declaration and possible answers, by BFCL's AST rules."""
    if name != function["name"]:
        return Verdict("wrong function", f"{name} instead of {function['name']}")
    declared = function.get("parameters", {}).get("properties", {})
    for param in function.get("parameters", {}).get("required", ()):
        if param not in arguments:
            return Verdict("missing required", param)
    for param, value in arguments.items():
        if param not in declared or param not in answers:
            return Verdict("unexpected parameter", param)
        kind = str(declared[param].get("type", "any"))
        item = (declared[param].get("items") or {}).get("type")
        possible = answers[param]
        if kind == "float" and type(value) is int:
            value = float(value)
        answer_type = _answer_type(possible)
        variable = answer_type not in (None, _PYTHON_TYPES.get(kind, str))
        if not _typed(value, kind) or (isinstance(value, list) and not _item_types_ok(value, item)):
            if not variable or type(value) is not answer_type:
                return Verdict("wrong type", f"{param}: {type(value).__name__} for {kind}")
        ok = value in possible if variable else _value_ok(value, kind, item, possible)
        if not ok:
            shown = json.dumps(value, ensure_ascii=False)
            return Verdict(
                "wrong value", f"{param}: {shown} not in {json.dumps(possible, ensure_ascii=False)}"
            )
    for param, possible in answers.items():
        if param not in arguments and "" not in possible:
            return Verdict("missing optional", param)
    return Verdict("right")


@dataclass(frozen=True)
class Scored:
    verdict: Verdict
    """BFCL's verdict on the run: exactly one call, and it passes."""
    first: Verdict
    """The first executed call's verdict, whatever followed it."""


def score_run(request: Request, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> Scored:
    """The run's executed calls (name, arguments), in order, against the request's possible answers."""
    if not calls:
        none = Verdict("no call")
        return Scored(none, none)
    expected = request.function(request.expected)
    if expected is None:
        raise ValueError(f"{request.id}: the expected function {request.expected} is not on offer")
    first = check_call(expected, request.answers, calls[0][0], calls[0][1])
    if len(calls) > 1:
        names = ", ".join(name for name, _ in calls)
        return Scored(Verdict("more than one call", f"{len(calls)} calls: {names}"), first)
    return Scored(first, first)


def ideal_call(request: Request) -> dict[str, Any]:
    """The arguments of a flawless call: each listed parameter's first possible answer (an object's
    keys likewise), those that may be left out left out."""
    return _ideal_object(request.answers)


def _ideal_object(answers: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
    return {k: _ideal(v[0]) for k, v in answers.items() if v and v[0] != ""}


def _ideal(answer: Any) -> Any:
    """An object's possible answer lists its keys' possible answers; a list of objects, each one's."""
    if isinstance(answer, Mapping):
        return _ideal_object(answer)
    if isinstance(answer, list) and answer and all(isinstance(a, Mapping) for a in answer):
        return [_ideal_object(a) for a in answer]
    return answer


def unreachable(request: Request) -> list[str]:
    """Why the flawless call would not pass the tool's own input schema (empty: it would), so a reader
    knows when a miss could not have been a hit: the gate refuses calls off their schema."""
    from jsonschema import Draft202012Validator

    expected = request.function(request.expected)
    if expected is None:
        return [f"{request.expected} is not on offer"]
    errors = Draft202012Validator(input_schema(expected)).iter_errors(ideal_call(request))
    return sorted(e.message[:160] for e in errors)
