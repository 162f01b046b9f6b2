"""Words of like meaning, from the built-in meaning table (``pes_agent.tools.meaning``).

A request says "how long", "cost", "a night", "raining"; the tools say ``length_km``, ``price``,
``nightly_rate_usd``, "weather". Guided planning compares words, so such a request shares no word
with the tool or the field it needs. The meaning table (static word vectors distilled from
all-MiniLM-L6-v2, shipped in the package for retrieval) knows which words mean alike. Measured on
pairs from the implied sets: long/length 0.54, cost/price 0.68, warm/temperature 0.56,
raining/weather 0.62, night/nightly 0.59, while unrelated pairs sit below 0.15 (long/price -0.03,
find/book 0.10); hence ``THRESHOLD``.

Only a word that no tool uses is read this way (a word a tool uses means what it says), and only
against the words of the tools on offer. Without numpy (the ``retrieval`` or ``local`` extra) there
is no table: planning reads words alone, and says so once in the log.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Collection
from typing import Any

__all__ = ["THRESHOLD", "similar_words"]

_log = logging.getLogger("pes_agent.guided")

THRESHOLD = 0.5
"""Cosine similarity from which two words count as meaning alike (see the module docstring)."""
MAX_SIMILAR = 4
"""The closest words kept for one word: a word means a few things, not a vocabulary."""

_WORD = re.compile(r"^[a-z]{3,}$")


def similar_words(words: Collection[str], vocabulary: Collection[str]) -> dict[str, tuple[str, ...]]:
    """For each of ``words`` (lower-case surface words), the words of ``vocabulary`` that mean
    alike, closest first; words with none are left out. Pure given the shipped table."""
    asked = tuple(sorted(w for w in set(words) if _WORD.match(w)))
    known = tuple(sorted(w for w in set(vocabulary) if _WORD.match(w)))
    if not asked or not known:
        return {}
    return dict(_similar(asked, known))


@functools.lru_cache(maxsize=1024)
def _similar(asked: tuple[str, ...], known: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    vectors = _vectors(asked + known)
    if vectors is None:
        return ()
    import numpy as np

    scores = vectors[: len(asked)] @ vectors[len(asked) :].T
    out = []
    for i, word in enumerate(asked):
        order = np.argsort(-scores[i], kind="stable")[:MAX_SIMILAR]
        near = tuple(known[j] for j in order if scores[i, j] >= THRESHOLD and known[j] != word)
        if near:
            out.append((word, near))
    return tuple(out)


def _vectors(words: tuple[str, ...]) -> Any:
    table = _table()
    if table is None:
        return None
    import numpy as np

    rows = np.array([_vector(w) for w in words], dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


@functools.lru_cache(maxsize=8192)
def _vector(word: str) -> tuple[float, ...]:
    table = _table()
    assert table is not None
    return tuple(table.vector(word))


@functools.cache
def _table() -> Any:
    """The shipped table, or None (said once) when numpy is not installed or the table is unreadable."""
    try:
        import numpy  # noqa: F401  (the `retrieval` and `local` extras bring it)

        from pes_agent.tools.meaning import builtin_table

        return builtin_table()
    except ImportError:
        _log.warning(
            "guided planning reads words alone: numpy is not installed, so the built-in meaning table "
            "(words of like meaning: 'cost' for a price) is not used; install the `retrieval` extra"
        )
    except Exception as exc:  # the table's own ConfigError says what is wrong with the file
        _log.warning("guided planning reads words alone: %s", exc)
    return None
