"""1,000 concurrent S1 runs on one event loop against a fake OpenAI server that takes 50 ms a call.

Usage, from the repo root:
``python benchmarks/concurrency.py [--runs 1000] [--latency-ms 50] [--batches 3] [--processes 2] [--json]``

The fake server runs in a child process (``_fake_server_proc.py``), so its CPU is not billed to the
client, and answers each request with S1's reply for it. The client is a real ``ArtInstance`` with an
``openai`` provider entry (``base_url`` = the fake server, model ``fake``, key ``x``), S1's two tools and
the memory store. Each batch starts ``--runs`` runs at once, each on its own thread id.

Two floors, both reported: the latency bound (6 calls × 50 ms = 300 ms: no client can beat it) and
the bare-client floor: the same 6,000 requests (S1's six message lists) sent by ``openai.AsyncOpenAI``
alone, 1,000 sequences of six at once, same server, same run. The ``openai`` client costs milliseconds
of CPU per request, more the more requests are in flight (its connection pool scans every connection
for each request), so on one event loop the floor is many seconds, not 300 ms. The framework is
judged against the higher floor: wall ≤ 1.25 × max(bound, floor), 0 errors, and no memory growth
over repeated batches (RSS after each batch; thread data is dropped between batches, as a service's
would live in a database, so what remains is the framework's own memory). Floor and framework
batches alternate and the medians are compared, so a neighbour's load drifting over the minutes of a
run weighs on both sides alike. ``--processes K`` also runs
the batch as K worker processes × runs/K, started together, to show what more event loops buy on
this machine (they share its cores with the fake server).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent`, `tests` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from benchmarks._common import format_table
from benchmarks._fake_server_proc import FakeServerProcess
from benchmarks.overhead import ForgetfulStore, current_rss_mb, machine_line, peak_rss_mb
from pes_agent import ArtInstance, create_art_instance
from tests.replay import ToolLog, load_scenario, scenario_tools, start_replay

CALLS_PER_RUN = 6
TARGET_RATIO = 1.25
GROWTH_LIMIT = 0.05
"""RSS after the last batch may exceed the first batch's by at most this share."""


# --- the client side ----------------------------------------------------------------------------------


@dataclass
class Harness:
    art: ArtInstance
    store: ForgetfulStore
    log: ToolLog
    query: str


async def s1_harness(base_url: str, *, timeout_s: float = 60.0, max_retries: int = 3) -> Harness:
    scenario = load_scenario("S1")
    log, store = ToolLog(), ForgetfulStore()
    provider = {
        "adapter": "openai",
        "base_url": base_url,
        "model": "fake",
        "api_key": "x",
        "timeout_s": timeout_s,
        "max_retries": max_retries,
    }
    config = {"storage": {"type": "memory"}, "providers": {"openai": provider}}
    art = await create_art_instance(config, tools=scenario_tools(scenario, log), store=store)
    return Harness(art=art, store=store, log=log, query=scenario["userQuery"])


@dataclass(frozen=True)
class RunOutcome:
    """How one run ended: ``success``, another status, ``exception`` (raised) or ``hang``."""

    kind: str
    seconds: float
    detail: str = ""
    llm_calls: int = 0


async def timed_process(art: ArtInstance, query: str, thread_id: str, bound_s: float | None) -> RunOutcome:
    start = time.perf_counter()
    try:
        response = await asyncio.wait_for(art.process(query, thread_id=thread_id), bound_s)
    except TimeoutError:
        return RunOutcome("hang", time.perf_counter() - start, f"no result within {bound_s} s")
    except Exception as exc:  # noqa: BLE001 - counted: a run must never raise
        return RunOutcome("exception", time.perf_counter() - start, f"{type(exc).__name__}: {exc}")
    seconds = time.perf_counter() - start
    error = response.error
    detail = f"{error.code} in {error.phase}: {error.message}" if error else ""
    return RunOutcome(response.status, seconds, detail, response.usage.llm_calls)


@dataclass(frozen=True)
class Batch:
    label: str
    runs: int
    requests: int
    wall_s: float
    cpu_s: float
    rss_mb: float
    outcomes: dict[str, int]
    first_error: str = ""
    server_cpu_s: float | None = None

    @property
    def errors(self) -> int:
        return self.runs - self.outcomes.get("success", 0)

    @property
    def cpu_ms_per_request(self) -> float:
        return self.cpu_s * 1e3 / self.requests


async def timed_batch(
    label: str, runs: int, requests: int, one: Callable[[int], Awaitable[RunOutcome]]
) -> Batch:
    cpu, start = time.process_time(), time.perf_counter()
    outcomes = await asyncio.gather(*(one(i) for i in range(runs)))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    failed = next((o for o in outcomes if o.kind != "success"), None)
    return Batch(
        label=label,
        runs=runs,
        requests=requests,
        wall_s=wall,
        cpu_s=cpu,
        rss_mb=current_rss_mb(),
        outcomes=dict(Counter(o.kind for o in outcomes)),
        first_error=f"{failed.kind}: {failed.detail}" if failed else "",
    )


async def framework_batch(h: Harness, runs: int, label: str, bound_s: float | None = None) -> Batch:
    h.store.forget()
    h.log.calls.clear()
    tag = f"{label.replace(' ', '-')}-{time.monotonic_ns()}"

    def run(i: int) -> Awaitable[RunOutcome]:
        return timed_process(h.art, h.query, f"{tag}-{i}", bound_s)

    return await timed_batch(label, runs, runs * CALLS_PER_RUN, run)


async def s1_messages() -> list[list[dict[str, str]]]:
    """The six message lists an S1 run sends (from a scripted replay: same prompts, no network)."""
    replay = await start_replay("S1")
    async with replay.art:
        await replay.art.process(replay.query, thread_id=replay.thread_id)
    return [call.messages for call in replay.provider.calls]


class BareClient:
    """``openai.AsyncOpenAI`` alone, built as the provider builds its own, sending S1's requests."""

    def __init__(self, base_url: str, messages: Sequence[Sequence[Mapping[str, str]]]) -> None:
        import openai

        self.messages = [list(m) for m in messages]
        pool = openai.DefaultAsyncHttpxClient(timeout=60.0)
        self.client = openai.AsyncOpenAI(
            api_key="x", base_url=base_url, max_retries=0, timeout=60.0, http_client=pool
        )

    async def sequence(self) -> RunOutcome:
        start = time.perf_counter()
        try:
            for messages in self.messages:
                chat = self.client.chat.completions
                await chat.create(model="fake", messages=messages)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - counted like a failed run
            return RunOutcome("exception", time.perf_counter() - start, f"{type(exc).__name__}: {exc}")
        return RunOutcome("success", time.perf_counter() - start, llm_calls=len(self.messages))

    async def batch(self, runs: int) -> Batch:
        requests = runs * len(self.messages)
        return await timed_batch("bare openai client", runs, requests, lambda _: self.sequence())

    async def aclose(self) -> None:
        await self.client.close()


# --- one process: floor and framework batches, alternating ------------------------------------------


@dataclass
class Measured:
    floors: list[Batch]
    batches: list[Batch]
    peak_rss_mb: float
    thread_locks: int | None
    processes: Batch | None = None

    @property
    def floor_s(self) -> float:
        return statistics.median(b.wall_s for b in self.floors)

    @property
    def wall_s(self) -> float:
        return statistics.median(b.wall_s for b in self.batches)


async def measure(server: FakeServerProcess, runs: int, batches: int, warmup: int) -> Measured:
    bare = BareClient(server.base_url, await s1_messages())
    h = await s1_harness(server.base_url)
    async with h.art:
        await bare.batch(warmup)
        await framework_batch(h, warmup, "warm-up")
        server.reset()
        floors, done = [], []
        for i in range(batches):
            floor = await bare.batch(runs)
            label = f"{floor.label} #{i + 1}"
            floors.append(replace(floor, label=label, server_cpu_s=server.reset()["cpu_s"]))
            batch = await framework_batch(h, runs, f"pes-agent #{i + 1}")
            done.append(replace(batch, server_cpu_s=server.reset()["cpu_s"]))
        await bare.aclose()
        locks = getattr(h.art, "_locks", None)  # diagnostic: per-thread locks the instance keeps
        return Measured(floors, done, peak_rss_mb(), len(locks) if locks is not None else None)


# --- several worker processes -----------------------------------------------------------------------


async def _worker(base_url: str, runs: int, warmup: int) -> None:
    h = await s1_harness(base_url)
    async with h.art:
        await framework_batch(h, warmup, "warm-up")
        print(json.dumps({"ready": True}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        print(json.dumps(asdict(await framework_batch(h, runs, "worker"))), flush=True)


def multi_process(server: FakeServerProcess, processes: int, runs: int, warmup: int) -> Batch:
    """``processes`` workers × ``runs // processes`` runs, released together; wall as the parent sees it."""
    share = runs // processes
    sizes = ["--runs", str(share), "--warmup", str(warmup)]
    cmd = [sys.executable, __file__, "--worker", server.base_url, *sizes]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True, "cwd": _ROOT}
    workers = [subprocess.Popen(cmd, **pipes) for _ in range(processes)]  # type: ignore[call-overload]
    try:
        if not all(w.stdout.readline() for w in workers):
            raise RuntimeError("a worker process exited before it was ready")
        server.reset()
        start = time.perf_counter()
        for w in workers:
            w.stdin.write("go\n")
            w.stdin.flush()
        results = [Batch(**json.loads(w.stdout.readline())) for w in workers]
        wall = time.perf_counter() - start
    finally:
        for w in workers:
            w.stdin.close()
            w.wait(timeout=30)
    outcomes: Counter[str] = Counter()
    for r in results:
        outcomes.update(r.outcomes)
    return Batch(
        label=f"{processes} processes × {share}",
        runs=share * processes,
        requests=share * processes * CALLS_PER_RUN,
        wall_s=wall,
        cpu_s=sum(r.cpu_s for r in results),
        rss_mb=max(r.rss_mb for r in results),
        outcomes=dict(outcomes),
        first_error=next((r.first_error for r in results if r.first_error), ""),
        server_cpu_s=server.reset().get("cpu_s"),
    )


# --- report -----------------------------------------------------------------------------------------


HEADERS = (
    "batch",
    "runs",
    "requests",
    "wall s",
    "× bound",
    "× floor",
    "errors",
    "CPU s",
    "CPU ms/req",
    "server CPU s",
    "RSS after MB",
    "note",
)


def _cells(b: Batch, bound: float, floor: float) -> list[str]:
    server = "-" if b.server_cpu_s is None else f"{b.server_cpu_s:.2f}"
    return [
        b.label,
        str(b.runs),
        f"{b.requests:,}",
        f"{b.wall_s:.2f}",
        f"{b.wall_s / bound:.1f}",
        f"{b.wall_s / floor:.2f}",
        str(b.errors),
        f"{b.cpu_s:.2f}",
        f"{b.cpu_ms_per_request:.3f}",
        server,
        f"{b.rss_mb:.1f}",
        b.first_error[:120],
    ]


def verdicts(m: Measured, bound: float) -> tuple[str, bool]:
    floor, wall = m.floor_s, m.wall_s
    errors = sum(b.errors for b in m.batches)
    time_ok = wall <= TARGET_RATIO * max(bound, floor)
    errors_ok = errors == 0 and not any(b.errors for b in m.floors)
    memory_ok = m.batches[-1].rss_mb <= m.batches[0].rss_mb * (1 + GROWTH_LIMIT)
    rss = " → ".join(f"{b.rss_mb:.1f}" for b in m.batches)
    parts = [
        (
            f"wall {wall:.2f} s (median of {len(m.batches)} batches) = "
            f"{wall / max(bound, floor):.2f} × max(bound {bound:.2f} s, floor {floor:.2f} s) "
            f"(target <= {TARGET_RATIO}): {_verdict(time_ok)}"
        ),
        f"errors {errors} (target 0): {_verdict(errors_ok)}",
        f"RSS after batches {rss} MB (target growth <= {GROWTH_LIMIT:.0%}): {_verdict(memory_ok)}",
        f"peak RSS {m.peak_rss_mb:.1f} MB",
    ]
    return "SUMMARY " + "; ".join(parts), time_ok and errors_ok and memory_ok


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def format_report(m: Measured, *, runs: int, latency_s: float) -> str:
    bound = CALLS_PER_RUN * latency_s
    rows = [b for pair in zip(m.floors, m.batches, strict=False) for b in pair] + (
        [m.processes] if m.processes else []
    )
    table = format_table(HEADERS, [_cells(b, bound, m.floor_s) for b in rows], align="lrrrrrrrrrrl")
    fw = statistics.median(b.cpu_ms_per_request for b in m.batches)
    bare = statistics.median(b.cpu_ms_per_request for b in m.floors)
    lines = [
        (
            f"{runs} concurrent S1 runs ({CALLS_PER_RUN} model calls each, {latency_s * 1e3:g} ms per call "
            f"at the fake server, in its own process), one event loop. Latency bound {bound:.2f} s; "
            f"bare-client floor {m.floor_s:.2f} s (median). {machine_line()}"
        ),
        "",
        table,
        "",
        (
            f"Client CPU per model call: bare openai client {bare:.3f} ms, pes-agent {fw:.3f} ms "
            f"(the framework's own share {fw - bare:.3f} ms per call, "
            f"{(fw - bare) * CALLS_PER_RUN:.2f} ms per run)."
        ),
    ]
    if m.thread_locks is not None:
        lines.append(f"Per-thread locks still held by the instance after all batches: {m.thread_locks:,}.")
    lines.append(_processes_note(m, bound))
    return "\n".join([*lines, "", verdicts(m, bound)[0]])


def _processes_note(m: Measured, bound: float) -> str:
    one = statistics.median(b.wall_s for b in m.batches)
    one_cpu = statistics.median(b.cpu_ms_per_request for b in m.batches)
    cores = os.cpu_count() or 1
    if m.processes is None:
        return (
            f"Worker processes: not measured (--processes K). K event loops split the client CPU "
            f"only over spare cores; this machine has {cores}, one kept busy by the fake server."
        )
    p = m.processes
    return (
        f"Worker processes: {p.label} took {p.wall_s:.2f} s ({p.wall_s / bound:.1f} × bound) against "
        f"{one:.2f} s for one process ({one / p.wall_s:.2f}× faster) on {cores} cores shared with the "
        f"fake server (server CPU {p.server_cpu_s or 0:.2f} s). Client CPU per call "
        f"{p.cpu_ms_per_request:.3f} ms against {one_cpu:.3f} ms in one process."
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--batches", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--processes", type=int, default=0, help="also run K worker processes × runs/K")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--worker", metavar="BASE_URL", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        asyncio.run(_worker(args.worker, args.runs, args.warmup))
        return 0
    latency = args.latency_ms / 1000.0
    with FakeServerProcess(latency) as server:
        m = asyncio.run(measure(server, args.runs, max(1, args.batches), args.warmup))
        if args.processes > 1:
            m.processes = multi_process(server, args.processes, args.runs, args.warmup)
    if args.json:
        summary, ok = verdicts(m, CALLS_PER_RUN * latency)
        print(json.dumps({**asdict(m), "summary": summary, "passed": ok}, indent=2))
    else:
        print(format_report(m, runs=args.runs, latency_s=latency))
    return 0


if __name__ == "__main__":
    sys.exit(main())
