"""Plumbing the benchmark scripts share: where the repo is, the offline tokenizer cache, plain tables.

Benchmarks print reports for people to read in a terminal or paste into an issue, so tables are
fixed-width text rather than anything that needs a renderer.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

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
