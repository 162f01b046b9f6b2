"""The local-model benchmark's tasks and how a run of one is judged: pure data and functions, no model.

Each task is a query over the demo text tools (calculator, word_count, transform_text) or the
benchmark's own tools (`benchmarks/local_tools.py`: units, lookup tables, dates), with the calls a
capable agent makes and the values its answer must state. Every task but the README's main job has
two or three steps where a later call needs an earlier output (a converted value that is then
multiplied, a looked-up capital that is then upper-cased, a date that is then turned into a weekday).

A run is judged on what happened, not on what it says about itself:

- *calls right*: its successful tool calls are exactly the expected ones, in order. Arguments are
  compared as a reader would: arithmetic by value (``42*3`` and ``126`` are the same call), numbers
  within 0.2 % (a value shown rounded may be passed on rounded), texts after trimming blanks, quotes
  and end punctuation, enum values exactly, ``days_between``'s two dates in either order, a list's
  items in any order. Failed calls are not held against a run (a re-ask may fix them); extra
  successful calls are.
- *answer right*: the final answer states every expected value: a number as a number token (``84``
  is not found in ``184``), rounded to at least one decimal below 100; a text case-sensitively; a
  name case-insensitively as a word; a date as ISO or spelled out (``March 15, 2025``).
- *fully right*: both. *Dishonest*: the run's status is ``success`` while it is not fully right.
- *plan right*: the plan's required tools, step by step, are exactly the expected tool sequence.
- *invalid calls executed*: calls that reached a tool function with arguments failing the tool's
  input schema (jsonschema, Draft 2020-12; ``format`` is an annotation there, ``pattern`` is not).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from jsonschema import Draft202012Validator

from pes_agent.demo.arith import evaluate

Domain = Literal["text", "units", "lookup", "dates", "implied"]
SaysKind = Literal["number", "text", "name", "date"]
REL_TOLERANCE = 2e-3
"""Numbers in arguments match within 0.2 %: ``3.11 * 2`` passes for ``6.2137``, ``125 * 2`` fails for 249."""


# --- tasks ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """An expected tool call, with the arguments a capable agent passes."""

    tool: str
    args: Mapping[str, Any]

    @property
    def shows(self) -> str:
        return f"{self.tool}({', '.join(str(v) for v in self.args.values())})"


@dataclass(frozen=True)
class Says:
    """A value the final answer must state."""

    value: str | float
    kind: SaysKind = "number"


@dataclass(frozen=True)
class Task:
    id: str
    domain: Domain
    query: str
    """Written as ``A, then B[, then C].``: one clause per expected call (see `given_plan`)."""
    calls: tuple[Call, ...]
    answer: tuple[Says, ...]
    chained: bool = True
    """A later call needs an earlier output (only the README's main job is two independent calls)."""


def _calc(expression: str) -> Call:
    return Call("calculator", {"expression": expression})


def _words(text: str) -> Call:
    return Call("word_count", {"text": text})


def _change(text: str, mode: str) -> Call:
    return Call("transform_text", {"text": text, "mode": mode})


def _convert(value: float, from_unit: str, to_unit: str) -> Call:
    return Call("convert_units", {"value": value, "from_unit": from_unit, "to_unit": to_unit})


def _country(name: str) -> Call:
    return Call("country_facts", {"country": name})


def _price(product: str) -> Call:
    return Call("product_price", {"product": product})


def _num(value: float) -> Says:
    return Says(value, "number")


FOX = "the quick brown fox jumps over the lazy dog"
MAIN_JOB = "Compute 12 * 7, then count the words in 'the answer is 84'."
"""The README's main job (`pes-agent run --config config/local.yaml ...`)."""

_TEXT = (
    Task("t01", "text", MAIN_JOB, (_calc("12 * 7"), _words("the answer is 84")), (_num(84), _num(4)), False),
    Task(
        "t02",
        "text",
        "Add 15 and 27, then multiply the result by 3.",
        (_calc("15 + 27"), _calc("42 * 3")),
        (_num(126),),
    ),
    Task(
        "t03",
        "text",
        f"Count the words in '{FOX}', then multiply the word count by 4.",
        (_words(FOX), _calc("9 * 4")),
        (_num(36),),
    ),
    Task(
        "t04",
        "text",
        "Reverse the text 'stressed', then convert the reversed text to upper case.",
        (_change("stressed", "reverse"), _change("desserts", "upper")),
        (Says("DESSERTS", "text"),),
    ),
    Task(
        "t05",
        "text",
        "Convert 'hello big world' to upper case, then count the words in the converted text.",
        (_change("hello big world", "upper"), _words("HELLO BIG WORLD")),
        (_num(3),),
    ),
    Task(
        "t06",
        "text",
        "Add 8 and 5, then multiply the result by 2, then subtract 6 from that.",
        (_calc("8 + 5"), _calc("13 * 2"), _calc("26 - 6")),
        (_num(20),),
    ),
)
_UNITS = (
    Task(
        "u01",
        "units",
        "Convert 5 kilometers to miles, then multiply the result by 2.",
        (_convert(5, "kilometers", "miles"), _calc("3.11 * 2")),
        (_num(6.22),),
    ),
    Task(
        "u02",
        "units",
        "Convert 100 fahrenheit to celsius, then add 10 to the result.",
        (_convert(100, "fahrenheit", "celsius"), _calc("37.78 + 10")),
        (_num(47.78),),
    ),
    Task(
        "u03",
        "units",
        "Convert 3 miles to kilometers, then convert that distance to meters.",
        (_convert(3, "miles", "kilometers"), _convert(4.83, "kilometers", "meters")),
        (_num(4830),),
    ),
    Task(
        "u04",
        "units",
        "Multiply 12 by 5, then convert the result from pounds to kilograms.",
        (_calc("12 * 5"), _convert(60, "pounds", "kilograms")),
        (_num(27.22),),
    ),
    Task(
        "u05",
        "units",
        "Convert 1500 meters to feet, then divide the result by 3.",
        (_convert(1500, "meters", "feet"), _calc("4921.26 / 3")),
        (_num(1640.42),),
    ),
    Task(
        "u06",
        "units",
        "Add 20 and 5, then convert the result from celsius to fahrenheit, then subtract 32 from that.",
        (_calc("20 + 5"), _convert(25, "celsius", "fahrenheit"), _calc("77 - 32")),
        (_num(45),),
    ),
)
_LOOKUP = (
    Task(
        "l01",
        "lookup",
        "Look up the population of Japan in millions, then multiply it by 2.",
        (_country("Japan"), _calc("124.5 * 2")),
        (_num(249),),
    ),
    Task(
        "l02",
        "lookup",
        "Look up the capital of Kenya, then convert the capital's name to upper case.",
        (_country("Kenya"), _change("Nairobi", "upper")),
        (Says("NAIROBI", "text"),),
    ),
    Task(
        "l03",
        "lookup",
        "Look up the price of a notebook, then multiply the price by 4.",
        (_price("notebook"), _calc("3.5 * 4")),
        (_num(14),),
    ),
    Task(
        "l04",
        "lookup",
        "Look up the price of a lamp, then look up the price of a chair, then add the two prices.",
        (_price("lamp"), _price("chair"), _calc("32.5 + 85")),
        (_num(117.5),),
    ),
    Task(
        "l05",
        "lookup",
        "Look up the population of Canada in millions, then look up the population of Peru in millions, "
        "then add the two populations.",
        (_country("Canada"), _country("Peru"), _calc("40.1 + 34.4")),
        (_num(74.5),),
    ),
    Task(
        "l06",
        "lookup",
        "Look up the capital of Egypt, then reverse the capital's name.",
        (_country("Egypt"), _change("Cairo", "reverse")),
        (Says("oriaC", "text"),),
    ),
)
_DATES = (
    Task(
        "d01",
        "dates",
        "Add 30 days to 2025-01-15, then find the weekday of the new date.",
        (Call("add_days", {"date": "2025-01-15", "days": 30}), Call("weekday", {"date": "2025-02-14"})),
        (Says("Friday", "name"),),
    ),
    Task(
        "d02",
        "dates",
        "Count the days between 2025-03-01 and 2025-04-15, then multiply the number of days by 24.",
        (Call("days_between", {"start": "2025-03-01", "end": "2025-04-15"}), _calc("45 * 24")),
        (_num(1080),),
    ),
    Task(
        "d03",
        "dates",
        "Find the weekday of 2025-12-25, then convert the weekday to upper case.",
        (Call("weekday", {"date": "2025-12-25"}), _change("Thursday", "upper")),
        (Says("THURSDAY", "text"),),
    ),
    Task(
        "d04",
        "dates",
        "Count the days between 2024-01-01 and 2024-12-31, then add that many days to 2025-01-01.",
        (
            Call("days_between", {"start": "2024-01-01", "end": "2024-12-31"}),
            Call("add_days", {"date": "2025-01-01", "days": 365}),
        ),
        (Says("2026-01-01", "date"),),
    ),
    Task(
        "d05",
        "dates",
        "Add 10 days to 2025-06-20, then find the weekday of that date, "
        "then convert the weekday to upper case.",
        (
            Call("add_days", {"date": "2025-06-20", "days": 10}),
            Call("weekday", {"date": "2025-06-30"}),
            _change("Monday", "upper"),
        ),
        (Says("MONDAY", "text"),),
    ),
    Task(
        "d06",
        "dates",
        "Multiply 6 by 7, then add that many days to 2025-02-01.",
        (_calc("6 * 7"), Call("add_days", {"date": "2025-02-01", "days": 42})),
        (Says("2025-03-15", "date"),),
    ),
)
TASKS: tuple[Task, ...] = tuple(
    t for group in zip(_TEXT, _UNITS, _LOOKUP, _DATES, strict=False) for t in group
)
"""Interleaved by domain, so ``--tasks N`` with a small N still covers every domain."""
TASKS_BY_ID = {t.id: t for t in TASKS}


# --- the plan a capable model would give --------------------------------------------------------------


def query_clauses(query: str) -> list[str]:
    """``"Add 1 and 2, then double it."`` → ``["Add 1 and 2", "Double it"]``."""
    parts = [p.strip().rstrip(".").strip() for p in query.split(", then ")]
    return [p[:1].upper() + p[1:] for p in parts]


def given_plan(task: Task) -> str:
    """The planning reply for the ``given`` setting: one tool step per expected call, each depending
    on the one before, in the standard plan JSON. If the product changes its planning reply format
    (as guided mode may), this is the one function to adapt."""
    steps = [
        {
            "id": f"step_{i}",
            "description": clause,
            "stepType": "tool",
            "requiredTools": [call.tool],
            "dependencies": [f"step_{i - 1}"] if i > 1 else [],
        }
        for i, (clause, call) in enumerate(zip(query_clauses(task.query), task.calls, strict=False), start=1)
    ]
    plan = {"title": task.id, "intent": task.query, "plan": f"{len(steps)} tool steps", "todoList": steps}
    return json.dumps(plan)


# --- judging arguments -------------------------------------------------------------------------------


def close(got: Any, want: float) -> bool:
    if isinstance(got, bool) or not isinstance(got, (int, float)) or not math.isfinite(got):
        return False
    return abs(got - want) <= max(1e-6, REL_TOLERANCE * abs(want))


def clean_text(text: Any) -> str:
    """Blanks, surrounding quotes and end punctuation trimmed: ``"'hello.' "`` → ``hello``."""
    return str(text).strip().strip("'\"`").rstrip(".!?").strip()


def _value(expression: Any) -> float | None:
    try:
        return evaluate(str(expression))
    except Exception:  # whatever a model wrote, judging it must not stop the benchmark
        return None


def _same(got: Any, want: Any) -> bool:
    if isinstance(want, bool):  # a flag is the flag, not its text ("True" is no True)
        return got is want
    if isinstance(want, (int, float)):
        return close(got, float(want))
    if isinstance(want, (list, tuple)):  # a list the request writes out: the same items, in any order
        return isinstance(got, list) and sorted(map(clean_text, got)) == sorted(map(clean_text, want))
    return isinstance(got, str) and clean_text(got) == clean_text(want)


def call_matches(expected: Call, tool: str, args: Mapping[str, Any]) -> bool:
    """Whether a call made (``tool``, ``args``) is the expected one, judged as a reader would."""
    if tool != expected.tool:
        return False
    want = expected.args
    if tool == "calculator":
        got, target = _value(args.get("expression", "")), _value(want["expression"])
        return got is not None and target is not None and close(got, target)
    if tool == "days_between":
        made = sorted(clean_text(args.get(k, "")) for k in ("start", "end"))
        return made == sorted(clean_text(want[k]) for k in ("start", "end"))
    return all(key in args and _same(args[key], value) for key, value in want.items())


def calls_right(task: Task, done: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[bool, int]:
    """(exactly the expected calls in order, how many expected calls were found in order among them)."""
    matched = 0
    for tool, args in done:
        if matched < len(task.calls) and call_matches(task.calls[matched], tool, args):
            matched += 1
    return len(done) == len(task.calls) and matched == len(task.calls), matched


# --- judging the answer ------------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])(-?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\d])")
_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty"
).split()


def _numbers(text: str) -> list[tuple[float, int]]:
    """Number tokens with their count of decimals: ``"1,080 and 6.2"`` → ``[(1080, 0), (6.2, 1)]``;
    the parts of ``2025-03-15`` are read as 2025, 3 and 15 (the hyphens are not minus signs)."""
    found = []
    for match in _NUMBER.finditer(text):
        sign, whole, decimals = match.groups()
        number = float(whole.replace(",", "") + (f".{decimals}" if decimals else ""))
        found.append((-number if sign else number, len(decimals or "")))
    return found


def _states_number(answer: str, value: float) -> bool:
    for shown, decimals in _numbers(answer):
        if decimals == 0 and not value.is_integer() and abs(value) < 100:
            continue  # 37.78 shown as 38 is not the value
        if abs(shown - value) <= 0.5 * 10.0**-decimals + 1e-9:
            return True
    if value.is_integer() and 0 <= value < len(_NUMBER_WORDS):
        return re.search(rf"\b{_NUMBER_WORDS[int(value)]}\b", answer, re.IGNORECASE) is not None
    return False


def _date_spellings(iso: str) -> list[str]:
    day = dt.date.fromisoformat(iso)
    month, short = day.strftime("%B"), day.strftime("%b")
    return [
        iso,
        f"{month} {day.day}, {day.year}",
        f"{month} {day.day} {day.year}",
        f"{day.day} {month} {day.year}",
        f"{short} {day.day}, {day.year}",
        f"{day.day} {short} {day.year}",
    ]


def mentions(answer: str, says: Says) -> bool:
    """Whether the answer states the value (see the module docstring for what counts)."""
    if says.kind == "number":
        return _states_number(answer, float(says.value))
    text = str(says.value)
    if says.kind == "text":
        return text in answer
    if says.kind == "name":
        return re.search(rf"\b{re.escape(text)}\b", answer, re.IGNORECASE) is not None
    folded = answer.casefold()
    return any(spelling.casefold() in folded for spelling in _date_spellings(text))


def answer_right(task: Task, answer: str) -> bool:
    return all(mentions(answer, says) for says in task.answer)


# --- judging plans and executed calls --------------------------------------------------------------


def plan_tools(todo_list: Sequence[Mapping[str, Any]]) -> list[str]:
    """The plan's required tools, step by step, as one sequence."""
    tools: list[str] = []
    for item in todo_list:
        named = item.get("required_tools", item.get("requiredTools")) or []
        tools.extend(str(name) for name in named)
    return tools


def invalid_calls(
    executed: Sequence[tuple[str, Mapping[str, Any]]], schemas: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """Executed calls whose arguments fail their tool's input schema, each with the first reason."""
    invalid = []
    for tool, args in executed:
        schema = schemas.get(tool)
        if schema is None:
            invalid.append(f"{tool}: not a known tool")
            continue
        errors = sorted(Draft202012Validator(schema).iter_errors(dict(args)), key=lambda e: list(e.path))
        if errors:
            invalid.append(f"{tool}({json.dumps(args, ensure_ascii=False)}): {errors[0].message}")
    return invalid


# --- a run and its outcome ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MadeCall:
    """A TOOL_EXECUTION event: the call as it reached the executor and how it ended."""

    tool: str
    args: Mapping[str, Any]
    status: str


@dataclass(frozen=True)
class RunRecord:
    """What one run of one task produced, as observed by the harness."""

    setting: str
    todo_list: Sequence[Mapping[str, Any]] | None
    """The PLAN event's todo list; None when no plan was parsed."""
    calls: Sequence[MadeCall]
    executed: Sequence[tuple[str, Mapping[str, Any]]]
    """Every call that entered a tool function, with the arguments it got."""
    status: str
    """The response status, with the error code when it ended in error (``error:unparseable_plan``)."""
    answer: str
    seconds: float
    model_calls: int
    cpu_seconds: float = 0.0
    """CPU time of the process (all threads) during the run: steadier than wall time on a busy machine."""


@dataclass(frozen=True)
class Outcome:
    task: str
    setting: str
    plan: list[str] | None
    """The plan's tool sequence (None: no plan parsed, or the run crashed)."""
    plan_right: bool
    calls_right: bool
    calls_matched: int
    """Expected calls found, in order, among the successful ones."""
    answer_right: bool
    right: bool
    """Calls right and answer right."""
    made: list[str]
    """The successful calls, in order."""
    failed_calls: int
    invalid_executed: list[str]
    status: str
    dishonest: bool
    seconds: float
    model_calls: int
    answer: str
    crash: str | None = None
    """Why the run never reported: ``killed by SIGSEGV``, ``exited with status 1``, ``no result
    within 300 s``, or the exception that escaped ``process``."""
    cpu_seconds: float = 0.0
    failed: list[str] = field(default_factory=list)
    """The calls that did not succeed, with their arguments and status: what the gate refused."""


ANSWER_CHARS = 400


def score(task: Task, record: RunRecord, schemas: Mapping[str, Mapping[str, Any]]) -> Outcome:
    done = [(c.tool, c.args) for c in record.calls if c.status == "success"]
    exact, matched = calls_right(task, done)
    answered = answer_right(task, record.answer)
    plan = None if record.todo_list is None else plan_tools(record.todo_list)
    right = exact and answered
    return Outcome(
        task=task.id,
        setting=record.setting,
        plan=plan,
        plan_right=plan == [c.tool for c in task.calls],
        calls_right=exact,
        calls_matched=matched,
        answer_right=answered,
        right=right,
        made=[f"{tool}({json.dumps(args, ensure_ascii=False)})" for tool, args in done],
        failed_calls=len(record.calls) - len(done),
        failed=[
            f"{c.tool}({json.dumps(c.args, ensure_ascii=False)}): {c.status}"
            for c in record.calls
            if c.status != "success"
        ],
        invalid_executed=invalid_calls(record.executed, schemas),
        status=record.status,
        dishonest=record.status == "success" and not right,
        seconds=record.seconds,
        model_calls=record.model_calls,
        answer=record.answer[:ANSWER_CHARS],
        cpu_seconds=record.cpu_seconds,
    )


def crashed(task_id: str, setting: str, reason: str, seconds: float) -> Outcome:
    """The outcome of a run whose process died (or hung, or raised) before reporting."""
    return Outcome(
        task=task_id,
        setting=setting,
        plan=None,
        plan_right=False,
        calls_right=False,
        calls_matched=0,
        answer_right=False,
        right=False,
        made=[],
        failed_calls=0,
        invalid_executed=[],
        status="crash",
        dishonest=False,
        seconds=seconds,
        model_calls=0,
        answer="",
        crash=reason,
    )
