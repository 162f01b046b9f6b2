"""S1 runs against a fake server that fails a share of calls: 429, 500, and silence past the timeout.

Usage, from the repo root:
``python benchmarks/faults.py [--runs 200] [--share 0.1] [--timeout-s 2] [--max-retries 3] [--json]``

The fake server (its own process, ``_fake_server_proc.py``) answers each chat request with, drawn
from a seeded generator: 429 with ``Retry-After: 0`` (``--share``), 500 (``--share``), a hang longer
than the client's timeout (``--share``), else S1's reply after ``--latency-ms``. All runs start at
once on one event loop, each bounded by ``asyncio.wait_for`` (``--bound-s``, far above any retry
budget): a run still going then counts as a hang. Every run must end with ``success`` or an ``error``
status carrying a code and a phase; never an exception, never a hang.

Retries are counted twice, independently: the provider's retry log lines (by cause), and the
server's request count, which must equal the calls that succeeded + the retries + the calls that
failed for good (one per run that ended in a provider error).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent`, `tests` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from benchmarks._common import format_table
from benchmarks._fake_server_proc import FakeServerProcess, FaultMix
from benchmarks.concurrency import RunOutcome, s1_harness, timed_process
from benchmarks.overhead import machine_line

CLEAN = ("success", "error")


class RetryCounter(logging.Handler):
    """Counts the provider's ``...; retry N of M in S s`` log lines by cause (``HTTP 429``, ``timed out``)."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.causes: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "; retry " in message:
            cause = message.split(": ", 1)[-1].split(";", 1)[0]
            self.causes[cause] += 1

    def __enter__(self) -> Self:
        logger = logging.getLogger("pes_agent")
        self._level = logger.level
        logger.setLevel(logging.INFO)
        logger.addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logger = logging.getLogger("pes_agent")
        logger.removeHandler(self)
        logger.setLevel(self._level)


@dataclass
class Result:
    outcomes: list[RunOutcome]
    wall_s: float
    server: dict[str, Any]
    retries: dict[str, int]
    faults: FaultMix
    timeout_s: float
    max_retries: int
    bound_s: float

    def by_kind(self) -> dict[str, list[RunOutcome]]:
        kinds: dict[str, list[RunOutcome]] = {}
        for o in self.outcomes:
            kinds.setdefault(o.kind, []).append(o)
        return kinds

    @property
    def accounted(self) -> tuple[int, int, int, int]:
        """(server requests, calls answered, retries, calls failed for good)."""
        answered = sum(o.llm_calls for o in self.outcomes)
        failed = sum(1 for o in self.outcomes if o.kind == "error" and o.detail.startswith("provider_error"))
        return int(self.server.get("requests", 0)), answered, sum(self.retries.values()), failed


async def run_faults(
    server: FakeServerProcess, runs: int, *, timeout_s: float, max_retries: int, bound_s: float, warmup: int
) -> tuple[list[RunOutcome], float, dict[str, int], dict[str, Any]]:
    h = await s1_harness(server.base_url, timeout_s=timeout_s, max_retries=max_retries)
    async with h.art:
        server.set_faults(False)  # the warm-up fills the connection pool and caches, without faults
        await asyncio.gather(*(timed_process(h.art, h.query, f"warmup-{i}", bound_s) for i in range(warmup)))
        server.set_faults(True)
        server.reset()
        with RetryCounter() as counter:
            loop = asyncio.get_running_loop()
            start = loop.time()
            outcomes = await asyncio.gather(
                *(timed_process(h.art, h.query, f"fault-{i}", bound_s) for i in range(runs))
            )
            wall = loop.time() - start
        return list(outcomes), wall, dict(counter.causes), server.reset()


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


HEADERS = ("outcome", "runs", "share", "p50 s", "p90 s", "max s", "example")


def _rows(r: Result) -> list[list[str]]:
    kinds = r.by_kind()
    rows = []
    always = (*CLEAN, "exception", "hang")
    for kind in (*CLEAN, *sorted(k for k in kinds if k not in always), "exception", "hang"):
        found = kinds.get(kind, [])
        secs = [o.seconds for o in found]
        rows.append(
            [
                kind,
                str(len(found)),
                f"{len(found) / len(r.outcomes):.1%}",
                *(
                    f"{f(secs):.2f}" if secs else "-"
                    for f in (statistics.median, lambda s: percentile(s, 0.9), max)
                ),
                next((o.detail for o in found if o.detail), "")[:140],
            ]
        )
    secs = [o.seconds for o in r.outcomes]
    rows.append(
        [
            "all",
            str(len(secs)),
            "100.0%",
            f"{statistics.median(secs):.2f}",
            f"{percentile(secs, 0.9):.2f}",
            f"{max(secs):.2f}",
            "",
        ]
    )
    return rows


def summary_line(r: Result) -> tuple[str, bool]:
    kinds = Counter(o.kind for o in r.outcomes)
    unclean = [o for o in r.outcomes if o.kind not in CLEAN or (o.kind == "error" and " in " not in o.detail)]
    requests, answered, retries, failed = r.accounted
    balanced = requests == answered + retries + failed
    clean_ok = not unclean
    retried = ", ".join(f"{cause} {n:,}" for cause, n in sorted(r.retries.items())) or "none"
    parts = [
        (
            f"{len(r.outcomes)} runs: {kinds['success']} success, "
            f"{kinds['error']} error (clean: code and phase), "
            f"{kinds['exception']} exceptions, {kinds['hang']} hangs, "
            f"{len(unclean) - kinds['exception'] - kinds['hang']} other: {_verdict(clean_ok)}"
        ),
        f"retries {retries:,} ({retried})",
        f"requests accounted {requests:,} = {answered:,} + {retries:,} + {failed:,}: {_verdict(balanced)}",
        (
            f"run time p50 {statistics.median(o.seconds for o in r.outcomes):.2f} s, "
            f"p90 {percentile([o.seconds for o in r.outcomes], 0.9):.2f} s"
        ),
    ]
    return "SUMMARY " + "; ".join(parts), clean_ok and balanced


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def format_report(r: Result) -> str:
    f = r.faults
    head = (
        f"{len(r.outcomes)} concurrent S1 runs against a fake server answering {f.p429:.0%} of calls "
        f"with 429 (Retry-After: {f.retry_after}), {f.p500:.0%} with 500 and {f.phang:.0%} with "
        f"{f.hang_s:g} s of silence; "
        f"client timeout {r.timeout_s:g} s, max_retries {r.max_retries}, per-run bound {r.bound_s:g} s. "
        f"Wall {r.wall_s:.2f} s. {machine_line()}"
    )
    s = r.server
    server = format_table(
        ("server answered", "requests", "S1 reply", "429", "500", "hang"),
        [["", f"{s.get('requests', 0):,}", *(f"{s.get(k, 0):,}" for k in ("reply", "429", "500", "hang"))]],
        align="lrrrrr",
    )
    requests, answered, retries, failed = r.accounted
    causes = sorted(r.retries.items())
    client = format_table(
        ("client retried", "total", *(c for c, _ in causes)),
        [["", f"{retries:,}", *(f"{n:,}" for _, n in causes)]],
        align="l" + "r" * (len(causes) + 1),
    )
    accounting = (
        f"Accounting: {requests:,} server requests = {answered:,} calls answered + {retries:,} retries + "
        f"{failed:,} calls failed after {r.max_retries} retries."
    )
    table = format_table(HEADERS, _rows(r), align="lrrrrrl")
    return "\n\n".join([head, table, server, client, accounting, summary_line(r)[0]])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--share", type=float, default=0.1, help="share of calls for each fault kind")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--timeout-s", type=float, default=2.0, help="the client's timeout per call")
    parser.add_argument("--hang-s", type=float, default=None, help="server silence (default 3 × timeout)")
    parser.add_argument("--max-retries", type=int, default=3)
    parser.add_argument("--bound-s", type=float, default=300.0, help="a run taking longer counts as a hang")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    hang = args.hang_s if args.hang_s is not None else 3 * args.timeout_s
    mix = FaultMix(
        p429=args.share, p500=args.share, phang=args.share, hang_s=hang, retry_after="0", seed=args.seed
    )
    with FakeServerProcess(args.latency_ms / 1000.0, mix) as server:
        outcomes, wall, retries, stats = asyncio.run(
            run_faults(
                server,
                args.runs,
                timeout_s=args.timeout_s,
                max_retries=args.max_retries,
                bound_s=args.bound_s,
                warmup=args.warmup,
            )
        )
    result = Result(
        outcomes=outcomes,
        wall_s=wall,
        server=stats,
        retries=retries,
        faults=mix,
        timeout_s=args.timeout_s,
        max_retries=args.max_retries,
        bound_s=args.bound_s,
    )
    if args.json:
        summary, ok = summary_line(result)
        kinds = Counter(o.kind for o in outcomes)
        print(
            json.dumps(
                {
                    "outcomes": kinds,
                    "wall_s": wall,
                    "server": stats,
                    "retries": retries,
                    "accounted": result.accounted,
                    "summary": summary,
                    "passed": ok,
                },
                indent=2,
            )
        )
    else:
        print(format_report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
