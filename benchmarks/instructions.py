"""Instructions per S1 run, counted by valgrind: the overhead figure that a busy machine cannot move.

Usage, from the repo root: ``python benchmarks/instructions.py [--short 50] [--long 350]``

``overhead.py`` times runs, and on a shared virtual machine the same code measures anywhere from
1.4 to 2.3 ms depending on the minute. ``valgrind --tool=callgrind`` counts the instructions the
process executes instead: the same total for the same code, inputs and interpreter whatever else the
machine does. Each configuration of ``overhead.py`` (S1 with its 2 tools, and with all 200 tools of
the catalogue) runs twice under callgrind, ``--short`` and ``--long`` runs after the same start-up;
the difference divided by the extra runs is the cost of one run, with imports and set-up cancelled
out. Use it to compare commits (a change that saves 5% shows as 5%), not machines.

It needs valgrind (Debian: ``apt-get install valgrind``) and takes about two minutes per
configuration. Instructions are user-space only: time in system calls is not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent`, `tests` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from benchmarks._common import format_table, use_shared_tiktoken_cache
from benchmarks.overhead import CONFIGS, FORGET_EVERY, build, timed_run

_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


async def _runs(n_tools: int, runs: int) -> None:
    bench = await build(n_tools)
    for i in range(runs):
        if i % FORGET_EVERY == 0:
            bench.store.forget()
        outcome = await timed_run(bench, f"run-{i}")
        if isinstance(outcome, str):
            raise SystemExit(f"run {i} failed: {outcome}")


def count(n_tools: int, runs: int) -> int:
    """Instructions of one child process that sets up and does ``runs`` S1 runs."""
    cmd = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        __file__,
        "--worker",
        str(n_tools),
        str(runs),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=_ROOT, check=False, timeout=3600)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"callgrind run failed ({done.returncode}): {tail}")
    return int(found.group(1))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--short", type=int, default=50, help="runs in the first count")
    parser.add_argument("--long", type=int, default=350, help="runs in the second count")
    parser.add_argument("--worker", nargs=2, type=int, metavar=("TOOLS", "RUNS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    use_shared_tiktoken_cache()
    if args.worker is not None:
        asyncio.run(_runs(*args.worker))
        return 0
    if shutil.which("valgrind") is None:
        print("SUMMARY valgrind is not installed (Debian: apt-get install valgrind): nothing measured")
        return 1
    if args.long <= args.short:
        parser.error("--long must be greater than --short")
    rows, figures = [], []
    for n in CONFIGS:
        short, long = count(n, args.short), count(n, args.long)
        per_run = (long - short) / (args.long - args.short)
        figures.append(f"{n} tools {per_run / 1e6:.3f} M")
        rows.append([f"S1 + {n} tools", f"{short:,}", f"{long:,}", f"{per_run / 1e6:.3f}"])
    headers = (
        "configuration",
        f"instructions, {args.short} runs",
        f"instructions, {args.long} runs",
        "M instructions per run",
    )
    print(f"Instructions per S1 run (callgrind; Python {sys.version.split()[0]}, {os.uname().machine}).")
    print()
    print(format_table(headers, rows, align="lrrr"))
    print()
    print("SUMMARY instructions per S1 run: " + "; ".join(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
