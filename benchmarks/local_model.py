"""The local model on 24 multi-step tool tasks: right plans, right runs, invalid calls, crashes, honesty.

Usage, from the repo root, after ``pip install -e '.[local]'``::

    python benchmarks/local_model.py [--settings plans,given] [--tasks N] [--model-path FILE.gguf]
                                     [--free-text] [--json] [--label NAME] [--task-timeout S]
                                     [--base-url URL [--server-model NAME] [--server-log FILE]
                                      [--in-process-from RESULT.json]]

``--base-url`` also runs every setting through an OpenAI-compatible server serving the same model
(the ``openai`` adapter, guided) and prints the in-process figures beside it, judged against issue
28's targets (`benchmarks/local_server.py`).

The tasks (`benchmarks/local_tasks.py`) span four domains: the demo text tools (calculator,
word_count, transform_text, among them the README's main job) and the benchmark's own tools
(`benchmarks/local_tools.py`: unit conversion, a country table and a price table, date arithmetic).
All nine tools are offered on every task, registered through ``create_art_instance(tools=...)``; the
product knows nothing about them. Each task has two or three steps, and a later call needs an earlier
output.

Settings (``--settings``), each with ``config/local.yaml`` as it is (store in memory):

- ``plans``: the model plans; the whole job.
- ``given``: the planning reply is replaced by the expected plan (`local_tasks.given_plan`, the
  standard plan JSON), so the tool steps and the answer are measured on their own. When the product
  does not run the plan it was handed (a planning reply format of its own, as guided mode has), the
  report says so in a WARNING line: adapt `given_plan` then.

``--free-text`` turns ``structured_output`` off, to see the model without constrained decoding.

Each setting's tasks run in a child process (this script with ``--child``), which loads the model once
and prints one JSON line per finished task. When the child dies (llama.cpp has been killed by SIGSEGV
on some grammars) or reports nothing for ``--task-timeout`` seconds, the task it was on is recorded as
a crash and a fresh child takes over from the next task: the harness itself never goes down with it.

Per setting it reports, beside the targets (MISS where missed): plans naming the right tools, runs
fully right (right calls and an answer stating the expected values), invalid calls executed (calls
that reached a tool's function, recorded by a wrapper around each tool, with arguments failing its
input schema under jsonschema), crashes (the child died or hung, or ``process`` raised instead of
returning a response), dishonest status (``success`` on a run that is not fully right) and mean wall
time per finished task. Wall time depends on what else the machine runs, so the CPU time per task
and the load average before and after are reported beside it. How runs are judged is described in
`benchmarks/local_tasks.py`. The table and every outcome are saved to
``benchmarks/results/local_model-<UTC time>[-<label>].json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import platform
import queue
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import IO, Any

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from benchmarks._common import format_table, load_average, share
from benchmarks.implied_tools import IMPLIED_TOOLS, IMPLIED_TOOLS_2
from benchmarks.implied_tools_3 import IMPLIED_TOOLS_3
from benchmarks.implied_tools_4 import IMPLIED_TOOLS_4
from benchmarks.implied_tools_5 import IMPLIED_TOOLS_5
from benchmarks.implied_tools_6 import IMPLIED_TOOLS_6
from benchmarks.implied_tools_7 import IMPLIED_TOOLS_7
from benchmarks.implied_tools_8 import IMPLIED_TOOLS_8
from benchmarks.implied_tools_9 import IMPLIED_TOOLS_9
from benchmarks.implied_tools_10 import IMPLIED_TOOLS_10
from benchmarks.implied_tools_11 import IMPLIED_TOOLS_11
from benchmarks.local_holdout import (
    HOLDOUT,
    HOLDOUT_2,
    HOLDOUT_3,
    HOLDOUT_4,
    HOLDOUT_5,
    HOLDOUT_6,
    HOLDOUT_7,
    HOLDOUT_BY_ID,
)
from benchmarks.local_implied import IMPLIED, IMPLIED_2, IMPLIED_3, IMPLIED_4, IMPLIED_5, IMPLIED_BY_ID
from benchmarks.local_implied_6 import IMPLIED_6
from benchmarks.local_implied_7 import IMPLIED_7
from benchmarks.local_implied_8 import IMPLIED_8
from benchmarks.local_implied_9 import IMPLIED_9
from benchmarks.local_implied_10 import IMPLIED_10
from benchmarks.local_implied_11 import IMPLIED_11
from benchmarks.local_server import (
    SERVER_SUFFIX,
    LogFindings,
    read_server_log,
    saved_outcomes,
    server_provider,
    server_report,
)
from benchmarks.local_tasks import (
    TASKS,
    TASKS_BY_ID,
    MadeCall,
    Outcome,
    RunRecord,
    Task,
    crashed,
    given_plan,
    score,
)
from benchmarks.local_tools import BENCHMARK_TOOLS
from pes_agent.agent.response import AgentFinalResponse
from pes_agent.config import ProviderConfig, load_config
from pes_agent.demo.text_tools import LOCAL_TOOLS
from pes_agent.errors import PesAgentError
from pes_agent.events import Event, EventType
from pes_agent.factory import create_art_instance
from pes_agent.llm.llamacpp import LlamaCppProvider
from pes_agent.llm.llamacpp_load import locate_model
from pes_agent.llm.providers import build_provider
from pes_agent.llm.types import CallOptions, LLMReply, Message, PromptRequest, Provider
from pes_agent.tools.spec import ToolSpec

LOCAL_CONFIG = Path(_ROOT) / "config" / "local.yaml"
RESULTS_DIR = Path(_ROOT) / "benchmarks" / "results"
SETTINGS = ("plans", "given")
RESULT_PREFIX = "@@local_model "
"""Marks the child's result lines on stdout, so anything else a library prints there is ignored."""
DEFAULT_TASK_TIMEOUT_S = 300.0
TASK_SETS = {
    "dev": TASKS,
    "holdout": HOLDOUT,
    "holdout2": HOLDOUT_2,
    "holdout3": HOLDOUT_3,
    "holdout4": HOLDOUT_4,
    "holdout5": HOLDOUT_5,
    "holdout6": HOLDOUT_6,
    "holdout7": HOLDOUT_7,
    "implied": IMPLIED,
    "implied2": IMPLIED_2,
    "implied3": IMPLIED_3,
    "implied4": IMPLIED_4,
    "implied5": IMPLIED_5,
    "implied6": IMPLIED_6,
    "implied7": IMPLIED_7,
    "implied8": IMPLIED_8,
    "implied9": IMPLIED_9,
    "implied10": IMPLIED_10,
    "implied11": IMPLIED_11,
}
ALL_TASKS = {**TASKS_BY_ID, **HOLDOUT_BY_ID, **IMPLIED_BY_ID}
WATCHED = (EventType.PLAN, EventType.TOOL_EXECUTION)


@dataclass(frozen=True)
class Options:
    settings: tuple[str, ...]
    task_ids: tuple[str, ...]
    structured: bool
    model_path: str | None
    task_timeout_s: float
    tools: int = 0
    """Tools offered in all (``--tools``): the nine task tools, then catalogue tools up to this many."""
    retrieval: bool = True
    base_url: str | None = None
    """A child given one runs its tasks through that server (``--base-url``)."""
    server_model: str = "smollm2-135m"


# --- the child: runs tasks on the model --------------------------------------------------------------


def run_config(
    structured: bool,
    model_path: str | None,
    retrieval: bool = True,
    base_url: str | None = None,
    server_model: str = "smollm2-135m",
) -> dict[str, Any]:
    """`config/local.yaml` as it is, with the store in memory and the tools left to the harness
    (``retrieval`` off only when ``--retrieval off`` asks for the comparison); with ``base_url``,
    its provider becomes the server's (`local_server.server_provider`)."""
    data = load_config(LOCAL_CONFIG).model_dump(by_alias=True, exclude_none=True)
    data["storage"] = {"type": "memory"}
    data["tools"] = []
    if not retrieval:
        data["retrieval"] = {"enabled": False}
    provider = data["providers"]["local"]
    if not structured:
        provider["structuredOutput"] = False
    if model_path:
        provider["modelPath"] = model_path
        provider.pop("modelPackage", None)
    if base_url:
        data["providers"]["local"] = server_provider(provider, base_url, server_model)
        if not structured:
            data["providers"]["local"] |= {"structuredOutput": False, "guided": False}
    return data


def provider_config(config: Mapping[str, Any]) -> ProviderConfig:
    return ProviderConfig.model_validate(config["providers"]["local"])


def recorded(spec: ToolSpec, log: list[tuple[str, Mapping[str, Any]]]) -> ToolSpec:
    """The tool, noting every call that reaches its function (the executor refuses invalid ones first)."""
    inner = spec.fn

    def fn(**kwargs: Any) -> Any:
        log.append((spec.name, {k: v for k, v in kwargs.items() if k != spec.context_param}))
        return inner(**kwargs)

    return replace(spec, fn=fn)


def harness_tools(
    log: list[tuple[str, Mapping[str, Any]]], total: int = 0, implied: bool = False
) -> list[ToolSpec]:
    """The task tools, recorded (with ``implied``, the implied set's tools too); with ``total``,
    catalogue tools (`tool_catalogue`, which no task needs) fill the list up to that many: the
    planner has to find the task's tools among them."""
    implied_sets = [
        IMPLIED_TOOLS,
        IMPLIED_TOOLS_2,
        IMPLIED_TOOLS_3,
        IMPLIED_TOOLS_4,
        IMPLIED_TOOLS_5,
        IMPLIED_TOOLS_6,
        IMPLIED_TOOLS_7,
        IMPLIED_TOOLS_8,
        IMPLIED_TOOLS_9,
        IMPLIED_TOOLS_10,
        IMPLIED_TOOLS_11,
    ]
    extra = [spec for tools in implied_sets for spec in tools] if implied else []
    own = [recorded(spec, log) for spec in [*LOCAL_TOOLS, *BENCHMARK_TOOLS, *extra]]
    if total <= len(own):
        return own
    from benchmarks.tool_catalogue import SIZE, catalogue

    others = [s for s in catalogue(SIZE, keep=()) if not s.name.startswith(SAME_JOB_PREFIXES)]
    step = len(others) / (total - len(own))
    return own + [others[int(i * step)] for i in range(total - len(own))]


SAME_JOB_PREFIXES = ("math_", "text_", "time_", "finance_")
"""Catalogue domains whose tools do the tasks' jobs under other names (``math_calculate`` beside
``calculator``): left out, so that a plan naming the task tool is the one right plan."""


class GivenPlan:
    """Answers the planning call with a fixed plan; every other call goes to the local model.

    In guided mode the planning call asks for one tool per part of the query (its reply schema has
    one property per part, no ``todoList``): the expected tools are given part by part, in order.
    """

    def __init__(self, inner: Provider, plan: str, tools: Sequence[str]) -> None:
        self.name = inner.name
        self._inner = inner
        self._plan = plan
        self._tools = list(tools)

    async def complete(self, request: PromptRequest, options: CallOptions) -> LLMReply:
        if request.phase == "planning":
            return LLMReply(text=self._reply(request))
        return await self._inner.complete(request, options)

    def _reply(self, request: PromptRequest) -> str:
        properties = (request.response_schema or {}).get("properties") or {}
        if not properties or "todoList" in properties:
            return self._plan
        return json.dumps(dict(zip(properties, self._tools, strict=False)))

    async def aclose(self) -> None:  # the local model is closed by its owner, after every run
        return None


def _record(
    setting: str,
    events: Sequence[Event],
    executed: Sequence[tuple[str, Mapping[str, Any]]],
    response: AgentFinalResponse,
    seconds: float,
    cpu_seconds: float,
) -> RunRecord:
    plans = [e.data for e in events if e.type is EventType.PLAN]
    calls = [
        MadeCall(tool=e.data["tool_name"], args=dict(e.data["arguments"]), status=e.data["status"])
        for e in events
        if e.type is EventType.TOOL_EXECUTION
    ]
    error = response.error
    return RunRecord(
        setting=setting,
        todo_list=plans[0]["todo_list"] if plans else None,
        calls=calls,
        executed=list(executed),
        status=f"{response.status}:{error.code}" if error else str(response.status),
        answer=response.response,
        seconds=seconds,
        model_calls=response.usage.llm_calls,
        cpu_seconds=cpu_seconds,
    )


async def run_task(
    task: Task, setting: str, config: Mapping[str, Any], model: Provider, total: int = 0
) -> Outcome:
    executed: list[tuple[str, Mapping[str, Any]]] = []
    tools = harness_tools(executed, total, implied=task.domain == "implied")
    provider = (
        model if setting == "plans" else GivenPlan(model, given_plan(task), [c.tool for c in task.calls])
    )
    events: list[Event] = []
    start = time.perf_counter()
    try:
        async with await create_art_instance(config, tools=tools, providers={"local": provider}) as art:
            art.subscribe(events.append, types=WATCHED)  # no TOKEN listener: replies are not streamed
            start, cpu = time.perf_counter(), time.process_time()
            response = await art.process(task.query, thread_id=f"{task.id}-{setting}")
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    except Exception as exc:  # a run must end in a response; anything else is recorded, not fatal
        reason = f"raised {type(exc).__name__}: {exc}"[:300]
        return crashed(task.id, setting, reason, time.perf_counter() - start)
    record = _record(setting, events, executed, response, seconds, cpu)
    return score(task, record, {t.name: t.input_schema for t in tools})


async def warm_up(model: Provider, *, structured: bool = False) -> None:
    """Load the model with a one-token call, so the first task's clock does not include loading it;
    ``structured`` (a server): a constrained one, so the dialect probe is not in the first task."""
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}} if structured else None
    hello = PromptRequest(
        phase="synthesis",
        step_id=None,
        messages=(Message(role="user", content="Hi"),),
        response_schema=schema,
    )
    try:
        await model.complete(hello, CallOptions(max_tokens=1))
    except PesAgentError:  # the first task meets the same error and records it
        return


async def run_child(
    task_ids: Sequence[str], setting: str, config: Mapping[str, Any], out: IO[str], total: int = 0
) -> None:
    settings = provider_config(config)
    server = settings.adapter != "llamacpp"
    model = build_provider("local", settings) if server else LlamaCppProvider("local", settings)
    try:
        await warm_up(model, structured=server and settings.constrains_replies)
        for task_id in task_ids:
            outcome = await run_task(ALL_TASKS[task_id], setting, config, model, total)
            out.write(RESULT_PREFIX + json.dumps(asdict(outcome), ensure_ascii=False) + "\n")
            out.flush()
    finally:
        await model.aclose()


def child_main(args: argparse.Namespace) -> int:
    config = run_config(
        not args.free_text, args.model_path, args.retrieval == "on", args.base_url, args.server_model
    )
    asyncio.run(run_child(args.ids.split(","), args.child_setting, config, sys.stdout, args.tools))
    return 0


# --- the parent: one child per setting, a fresh one after each crash ---------------------------------


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with status {returncode}"


def _lines(stream: IO[str], into: queue.Queue[str | None]) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


def _stop(proc: subprocess.Popen[str], grace_s: float = 10.0) -> None:
    """Let a child that is done exit (it frees the model), then kill it if it does not."""
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def supervise(
    task_ids: Sequence[str], launch: Callable[[Sequence[str]], list[str]], *, timeout_s: float
) -> Iterator[tuple[str, dict[str, Any] | str, float]]:
    """Run ``launch(remaining ids)`` children until every task has a result; yields (task id, the
    child's result, or why it has none, seconds). A child that dies or goes quiet for ``timeout_s``
    costs the task it was on, and a fresh child starts from the next one."""
    pending = list(task_ids)
    while pending:
        proc = subprocess.Popen(launch(pending), stdout=subprocess.PIPE, text=True, encoding="utf-8")
        assert proc.stdout is not None
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_lines, args=(proc.stdout, lines), daemon=True).start()
        try:
            yield from _results(proc, lines, pending, timeout_s)
        finally:
            _stop(proc)
            proc.stdout.close()


def _results(
    proc: subprocess.Popen[str], lines: queue.Queue[str | None], pending: list[str], timeout_s: float
) -> Iterator[tuple[str, dict[str, Any] | str, float]]:
    """One child's results, taken off ``pending`` as they come; returns when it ends or hangs."""
    since = time.monotonic()
    while pending:
        try:
            line = lines.get(timeout=max(0.0, since + timeout_s - time.monotonic()))
        except queue.Empty:
            proc.kill()
            yield pending.pop(0), f"no result within {timeout_s:g} s", time.monotonic() - since
            return
        if line is None:
            returncode = proc.wait()
            yield pending.pop(0), describe_exit(returncode), time.monotonic() - since
            return
        if line.startswith(RESULT_PREFIX):
            yield pending.pop(0), json.loads(line[len(RESULT_PREFIX) :]), time.monotonic() - since
            since = time.monotonic()


def child_command(setting: str, options: Options) -> Callable[[Sequence[str]], list[str]]:
    def launch(task_ids: Sequence[str]) -> list[str]:
        script = str(Path(__file__).resolve())
        argv = [sys.executable, script, "--child", setting, "--ids", ",".join(task_ids)]
        if not options.structured:
            argv.append("--free-text")
        if options.model_path:
            argv += ["--model-path", options.model_path]
        argv += ["--tools", str(options.tools), "--retrieval", "on" if options.retrieval else "off"]
        if options.base_url:
            argv += ["--base-url", options.base_url, "--server-model", options.server_model]
        return argv

    return launch


def run_setting(setting: str, options: Options) -> list[Outcome]:
    outcomes = []
    launch = child_command(setting, options)
    for task_id, result, seconds in supervise(options.task_ids, launch, timeout_s=options.task_timeout_s):
        if isinstance(result, str):
            outcome = crashed(task_id, setting, result, seconds)
        else:
            outcome = Outcome(**result)
        _progress(outcome)
        outcomes.append(outcome)
    return outcomes


def _progress(o: Outcome) -> None:
    verdict = "CRASH " + (o.crash or "") if o.crash else ("right" if o.right else "wrong")
    print(
        f"[local_model] {o.setting} {o.task}: {verdict} {o.seconds:.1f}s {o.status} plan={o.plan} {o.made}",
        file=sys.stderr,
        flush=True,
    )


# --- the report ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    setting: str
    runs: int
    plans_right: int
    fully_right: int
    invalid_executed: int
    crashes: int
    dishonest: int
    mean_wall_s: float | None
    """Over the runs that finished (a crash has no run time)."""
    mean_cpu_s: float | None
    """CPU time of the child (all threads) per finished run: compare it with the wall time to see
    whether the machine was busy with something else."""
    calls_matched: int
    calls_expected: int


@dataclass(frozen=True)
class Target:
    measure: str
    shown: str
    met: Callable[[Summary], bool]
    figure: Callable[[Summary], str]


def _wall(s: Summary) -> str:
    return "-" if s.mean_wall_s is None else f"{s.mean_wall_s:.1f} s"


TARGETS = (
    Target(
        "right tools in plans",
        ">= 80 %",
        met=lambda s: s.plans_right >= 0.8 * s.runs,
        figure=lambda s: share(s.plans_right, s.runs),
    ),
    Target(
        "fully right",
        ">= 60 %",
        met=lambda s: s.fully_right >= 0.6 * s.runs,
        figure=lambda s: share(s.fully_right, s.runs),
    ),
    Target(
        "invalid calls executed",
        "0",
        met=lambda s: s.invalid_executed == 0,
        figure=lambda s: str(s.invalid_executed),
    ),
    Target("crashes", "0", met=lambda s: s.crashes == 0, figure=lambda s: str(s.crashes)),
    Target("dishonest status", "0", met=lambda s: s.dishonest == 0, figure=lambda s: str(s.dishonest)),
    Target(
        "mean wall per task",
        "<= 8 s",
        met=lambda s: s.mean_wall_s is not None and s.mean_wall_s <= 8.0,
        figure=_wall,
    ),
)
"""Issue 13's targets, each met or MISSed per setting."""


def summarize(setting: str, outcomes: Sequence[Outcome]) -> Summary:
    mine = [o for o in outcomes if o.setting == setting]
    finished = [o for o in mine if o.crash is None]
    return Summary(
        setting=setting,
        runs=len(mine),
        plans_right=sum(o.plan_right for o in mine),
        fully_right=sum(o.right for o in mine),
        invalid_executed=sum(len(o.invalid_executed) for o in mine),
        crashes=sum(o.crash is not None for o in mine),
        dishonest=sum(o.dishonest for o in mine),
        mean_wall_s=statistics.mean(o.seconds for o in finished) if finished else None,
        mean_cpu_s=statistics.mean(o.cpu_seconds for o in finished) if finished else None,
        calls_matched=sum(o.calls_matched for o in mine),
        calls_expected=sum(len(ALL_TASKS[o.task].calls) for o in mine),
    )


def summary_table(summaries: Sequence[Summary]) -> str:
    rows = []
    for target in TARGETS:
        cells = [f"{target.figure(s)}{'' if target.met(s) else '  MISS'}" for s in summaries]
        rows.append([target.measure, target.shown, *cells])
    rows.append(["expected calls made", "", *(share(s.calls_matched, s.calls_expected) for s in summaries)])
    cpu = ["-" if s.mean_cpu_s is None else f"{s.mean_cpu_s:.1f} s" for s in summaries]
    rows.append(["mean CPU per task", "", *cpu])
    headers = ["measure", "target", *(s.setting for s in summaries)]
    return format_table(headers, rows, "ll" + "l" * len(summaries))


def summary_line(s: Summary) -> str:
    figures = [f"{t.measure} {t.figure(s)} (target {t.shown}){'' if t.met(s) else ': MISS'}" for t in TARGETS]
    return f"SUMMARY {s.setting}: " + "; ".join(figures)


def _cells(o: Outcome | None, task: Task) -> list[str]:
    if o is None:
        return ["", "", "", "", "", ""]
    if o.crash:
        return ["-", "-", "-", "no", "CRASH", f"{o.seconds:.1f}"]
    yes = {True: "yes", False: "no"}
    calls = f"{o.calls_matched}/{len(task.calls)}{'' if o.calls_right else '~' if o.calls_matched else ''}"
    return [yes[o.plan_right], calls, yes[o.answer_right], yes[o.right], o.status, f"{o.seconds:.1f}"]


def task_table(tasks: Sequence[Task], settings: Sequence[str], outcomes: Sequence[Outcome]) -> str:
    by = {(o.task, o.setting): o for o in outcomes}
    rows = []
    for task in tasks:
        row = [task.id, task.domain]
        for setting in settings:
            row += _cells(by.get((task.id, setting)), task)
        rows.append([*row, " · ".join(c.shows for c in task.calls)])
    headers = ["task", "domain"]
    for setting in settings:
        headers += [f"{setting}:plan", "calls", "answer", "right", "status", "s"]
    return format_table([*headers, "expected calls"], rows, "ll" + "lrllrr" * len(settings) + "l")


def domain_line(settings: Sequence[str], tasks: Sequence[Task], outcomes: Sequence[Outcome]) -> str:
    domains = list(dict.fromkeys(t.domain for t in tasks))
    parts = []
    for setting in settings:
        mine = [o for o in outcomes if o.setting == setting]
        counts = [
            f"{d} {sum(o.right for o in mine if ALL_TASKS[o.task].domain == d)}/"
            f"{sum(ALL_TASKS[o.task].domain == d for o in mine)}"
            for d in domains
        ]
        parts.append(f"{setting}: {', '.join(counts)}")
    return "fully right by domain: " + "; ".join(parts)


def given_warning(outcomes: Sequence[Outcome]) -> list[str]:
    """The ``given`` setting means something only if the product ran the plan it was handed."""
    given = [o for o in outcomes if o.setting == "given" and o.crash is None]
    missed = [o.task for o in given if not o.plan_right]
    if not missed:
        return []
    return [
        f"WARNING given: the product did not run the given plan in {len(missed)} of {len(given)} runs "
        f"({', '.join(missed[:6])}{' ...' if len(missed) > 6 else ''}); its planning reply format may have "
        "changed: adapt `benchmarks/local_tasks.py:given_plan`"
    ]


LEGEND = (
    "plans = the model plans; given = it is handed the expected plan. plan = the plan's tools are the "
    "expected sequence;\ncalls = expected calls made in order (~ = not exactly the expected calls); "
    "answer = it states the expected values;\nright = calls exactly right and answer right."
)


def report(run: Mapping[str, Any], tasks: Sequence[Task], outcomes: Sequence[Outcome]) -> str:
    settings = run["settings"]
    summaries = [summarize(s, outcomes) for s in settings]
    machine = run["machine"]
    lines = [
        f"date: {run['date']}",
        f"model: {run['model']}",
        f"machine: {machine['platform']}, {machine['cpus']} CPUs, Python {machine['python']}, "
        f"llama-cpp-python {machine['llama_cpp_python']}; load average (1, 5, 15 min) "
        f"{machine.get('load_average_before')} before, {machine.get('load_average_after')} after",
        f"settings: {', '.join(settings)}; {run['decoding']}; {len(tasks)} tasks",
        f"tools offered: {run.get('tools_offered', 9)}; retrieval "
        f"{'on' if run.get('retrieval', True) else 'off'}",
        *(
            [
                f"server: {run['server']['base_url']} (model id {run['server']['model']!r}): "
                "the `@server` columns"
            ]
            if run.get("server")
            else []
        ),
        "",
        LEGEND,
        "",
        task_table(tasks, settings, outcomes),
        "",
        summary_table(summaries),
        "",
        domain_line(settings, tasks, outcomes),
        *given_warning(outcomes),
        *(summary_line(s) for s in summaries),
    ]
    return "\n".join(lines)


def markdown(run: Mapping[str, Any], tasks: Sequence[Task], outcomes: Sequence[Outcome], text: str) -> str:
    lines = [f"# Local model benchmark, {run['date']}", "", "```", text, "```", "", "## Runs", ""]
    for o in outcomes:
        task = ALL_TASKS[o.task]
        verdict = f"CRASH: {o.crash}" if o.crash else "right" if o.right else "wrong"
        lines += [
            f"### {o.task} · {o.setting} · {verdict}",
            "",
            f"- query: {task.query}",
            f"- expected: {' · '.join(c.shows for c in task.calls)}; answer states "
            f"{', '.join(str(s.value) for s in task.answer)}",
            f"- plan: {o.plan}",
            f"- successful calls: {' · '.join(o.made) or 'none'} ({o.failed_calls} failed)",
            f"- status: {o.status}{' (dishonest)' if o.dishonest else ''}; {o.seconds:.1f} s, "
            f"{o.model_calls} model calls",
        ]
        if o.failed:
            lines.append(f"- failed calls: {'; '.join(o.failed)}")
        if o.invalid_executed:
            lines.append(f"- invalid calls executed: {'; '.join(o.invalid_executed)}")
        lines += [f"- answer: {json.dumps(o.answer, ensure_ascii=False)}", ""]
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    try:
        llama = importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        llama = "not installed"
    return {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "llama_cpp_python": llama,
        "load_average_before": load_average(),
    }


def save(
    run: Mapping[str, Any],
    outcomes: Sequence[Outcome],
    text: str,
    tasks: Sequence[Task],
    out_dir: Path,
    label: str | None,
) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"local_model-{run['stamp']}" + (f"-{label}" if label else "")
    data = {
        **run,
        "summary": [asdict(summarize(s, outcomes)) for s in run["settings"]],
        "targets": {t.measure: t.shown for t in TARGETS},
        "outcomes": [asdict(o) for o in outcomes],
    }
    json_path, md_path = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    json_path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(markdown(run, tasks, outcomes, text) + "\n", encoding="utf-8")
    return json_path, md_path


# --- entry point --------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--settings", default=",".join(SETTINGS), help="comma-separated: plans, given")
    parser.add_argument(
        "--set",
        dest="task_set",
        choices=tuple(TASK_SETS),
        default="dev",
        help="dev: the 24 tasks the product was tuned on; holdout..holdout7: held out (see local_holdout); "
        "implied..implied11: steps the request only implies (see local_implied, local_implied_6 to _11)",
    )
    parser.add_argument("--tasks", type=int, default=0, help="run only the first N tasks")
    parser.add_argument("--model-path", help="a GGUF file instead of the packaged model")
    parser.add_argument("--free-text", action="store_true", help="structured_output off (no grammar)")
    parser.add_argument("--json", action="store_true", help="print the saved JSON instead of the table")
    parser.add_argument("--label", help="appended to the results' file names (e.g. baseline)")
    parser.add_argument("--out-dir", type=Path, default=RESULTS_DIR, help="where results are saved")
    parser.add_argument(
        "--task-timeout",
        type=float,
        default=DEFAULT_TASK_TIMEOUT_S,
        help="seconds a task may take before its child is killed and a crash recorded",
    )
    parser.add_argument(
        "--tools", type=int, default=0, help="offer this many tools: the task tools and catalogue ones"
    )
    parser.add_argument(
        "--retrieval", choices=("on", "off"), default="on", help="tool retrieval before planning"
    )
    parser.add_argument(
        "--base-url", help="also run through this OpenAI-compatible server (the same model), side by side"
    )
    parser.add_argument("--server-model", default="smollm2-135m", help="the model id sent to the server")
    parser.add_argument(
        "--server-log", type=Path, help="the server's output file: grammar parse failures, prefix reuse"
    )
    parser.add_argument(
        "--in-process-from",
        type=Path,
        help="with --base-url: a saved run's in-process figures, not a new pass",
    )
    parser.add_argument(
        "--first-option",
        action="store_true",
        help="no model: every grammar's first option (benchmarks/first_option.py), in this process",
    )
    parser.add_argument("--child", dest="child_setting", choices=SETTINGS, help=argparse.SUPPRESS)
    parser.add_argument("--ids", help=argparse.SUPPRESS)
    return parser


def _options(args: argparse.Namespace) -> Options:
    settings = tuple(s.strip() for s in args.settings.split(",") if s.strip())
    unknown = [s for s in settings if s not in SETTINGS]
    if unknown or not settings:
        raise SystemExit(f"--settings: unknown {unknown!r}; choose from {', '.join(SETTINGS)}")
    return Options(
        settings=settings,
        task_ids=tuple(t.id for t in TASK_SETS[args.task_set][: args.tasks or None]),
        structured=not args.free_text,
        model_path=args.model_path,
        task_timeout_s=args.task_timeout,
        tools=args.tools,
        retrieval=args.retrieval == "on",
        server_model=args.server_model,
    )


async def _first_option_run(options: Options, config: Mapping[str, Any]) -> list[Outcome]:
    """Every task in this process on ``FirstOptionProvider``: no model, no child, no timeout. A
    check of what guided mode offers (the right tool and values offered first), in seconds; not a
    model figure."""
    from benchmarks.first_option import FirstOptionProvider

    outcomes = []
    for setting in options.settings:
        for task_id in options.task_ids:
            outcome = await run_task(
                ALL_TASKS[task_id], setting, config, FirstOptionProvider(), options.tools
            )
            _progress(outcome)
            outcomes.append(outcome)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.child_setting:
        return child_main(args)
    options = _options(args)
    config = run_config(options.structured, options.model_path, options.retrieval)
    source = options.model_path or provider_config(config).model_package
    try:
        model = (
            "none: the first option of every grammar"
            if args.first_option
            else f"{locate_model('local', provider_config(config)).name} ({source})"
        )
    except PesAgentError as exc:
        if not (args.base_url and args.in_process_from):  # the in-process pass needs the file
            print(f"local_model benchmark: {exc}", file=sys.stderr)
            return 2
        model = str(json.loads(args.in_process_from.read_text(encoding="utf-8"))["model"])
    now = time.gmtime()
    run = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", now),
        "stamp": time.strftime("%Y%m%dT%H%M%SZ", now),
        "machine": machine(),
        "model": model,
        "decoding": "constrained decoding" if options.structured else "free text (structured_output off)",
        "settings": list(options.settings),
        "task_set": args.task_set,
        "provider": config["providers"]["local"],
        "task_timeout_s": options.task_timeout_s,
        "tools_offered": max(options.tools, len(harness_tools([]))),
        "retrieval": options.retrieval,
    }
    if args.first_option:
        in_process = asyncio.run(_first_option_run(options, config))
    elif args.base_url and args.in_process_from:
        in_process = saved_outcomes(args.in_process_from, options.task_ids, options.settings)
    else:
        in_process = [o for setting in options.settings for o in run_setting(setting, options)]
    outcomes = list(in_process)
    findings: LogFindings | None = None
    if args.base_url:
        log_start = args.server_log.stat().st_size if args.server_log else 0
        served = replace(options, base_url=args.base_url)
        outcomes += [
            replace(o, setting=o.setting + SERVER_SUFFIX)
            for setting in options.settings
            for o in run_setting(setting, served)
        ]
        findings = read_server_log(args.server_log, log_start) if args.server_log else None
        run["settings"] = [*options.settings, *(s + SERVER_SUFFIX for s in options.settings)]
        run["server"] = {
            "base_url": args.base_url,
            "model": args.server_model,
            "provider": run_config(
                options.structured, None, options.retrieval, args.base_url, args.server_model
            )["providers"]["local"],
            "in_process_from": str(args.in_process_from) if args.in_process_from else None,
            "log": None if findings is None else asdict(findings),
        }
    run["machine"]["load_average_after"] = load_average()
    tasks = [ALL_TASKS[i] for i in options.task_ids]
    text = report(run, tasks, outcomes)
    if args.base_url:
        text += "\n\n" + server_report(options.settings, outcomes, findings)
    json_path, md_path = save(run, outcomes, text, tasks, args.out_dir, args.label)
    print(json_path.read_text(encoding="utf-8") if args.json else text)
    print(f"saved: {json_path} and {md_path.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
