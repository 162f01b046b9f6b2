"""Plumbing the benchmark scripts share: where the repo is, the offline tokenizer cache, plain tables,
the load average sampled through a run, the commit a run measured, fixed samples without randomness.

Benchmarks print reports for people to read in a terminal or paste into an issue, so tables are
fixed-width text rather than anything that needs a renderer.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_TIKTOKEN = REPO_ROOT.parent / "shared" / "tiktoken"
"""The checked-out offline tiktoken cache next to the repo; tiktoken would otherwise try to download."""


def use_shared_tiktoken_cache() -> None:
    """Point tiktoken at the shared offline cache, unless the caller chose a cache already."""
    if "TIKTOKEN_CACHE_DIR" not in os.environ and SHARED_TIKTOKEN.is_dir():
        os.environ["TIKTOKEN_CACHE_DIR"] = str(SHARED_TIKTOKEN)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """Columns padded to their widest cell; ``align`` holds one ``l`` or ``r`` per column.

    The last column is never padded, so a long free-text note does not leave trailing blanks.
    """
    if len(align) != len(headers):
        raise ValueError(f"`align` has {len(align)} letters for {len(headers)} columns")
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=False)]

    def line(cells: Sequence[str]) -> str:
        padded = [
            cell.rjust(width) if how == "r" else cell.ljust(width)
            for cell, width, how in zip(cells[:-1], widths, align, strict=False)
        ]
        return "  ".join([*padded, cells[-1]]).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([line(headers), rule, *(line(row) for row in rows)])


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages: wall times mean little on a machine busy with other work."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


class LoadSampler:
    """The 1-minute load average every ``every_s`` seconds while the benchmark runs."""

    def __init__(self, every_s: float = 15.0) -> None:
        self.samples: list[float] = []
        self._every = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            load = load_average()
            if load:
                self.samples.append(load[0])
            if self._stop.wait(self._every):
                return

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict[str, float | int | None]:
        """Mean and max of the samples, and how many there were (as a result file records them)."""
        samples = self.samples
        return {
            "mean": round(sum(samples) / len(samples), 2) if samples else None,
            "max": round(max(samples), 2) if samples else None,
            "samples": len(samples),
        }


def git_commit() -> str:
    """The short commit the run measured, marked when ``pes_agent/`` has uncommitted changes."""
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        )
        dirty = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "status", "--porcelain", "pes_agent"],
            capture_output=True,
            text=True,
        )
    except OSError:
        return "unknown"
    return out.stdout.strip() + (" (pes_agent modified)" if dirty.stdout.strip() else "") or "unknown"


def evenly_spaced(items: Sequence[T], k: int) -> list[T]:
    """``k`` of ``items`` spread evenly, without randomness: the middle of each of ``k`` equal slices
    (all of them when ``k`` is at least their number)."""
    if k >= len(items):
        return list(items)
    return [items[math.floor((i + 0.5) * len(items) / k)] for i in range(k)]


def share(part: int, whole: int) -> str:
    """``part/whole (percent)``, as the result tables show a count."""
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "0/0"


def seconds_text(value: float | None) -> str:
    """A wall time for a table, ``-`` when nothing finished."""
    return "-" if value is None else f"{value:.1f} s"


def child_launcher(
    script: str, threads: int | None, model_path: str | None, *options: str
) -> Callable[[Sequence[str]], list[str]]:
    """The command that runs ``script`` as a child on the remaining ids (``local_model.supervise``
    starts it again after a death), with the model settings the parent was given."""

    def launch(ids: Sequence[str]) -> list[str]:
        argv = [sys.executable, str(Path(script).resolve()), "--child", *options, "--ids", ",".join(ids)]
        if threads:
            argv += ["--threads", str(threads)]
        if model_path:
            argv += ["--model-path", model_path]
        return argv

    return launch
