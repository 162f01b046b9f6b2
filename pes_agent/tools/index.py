"""A lexical index of the registered tools, for finding the few a query needs among hundreds.

BM25 over each tool's name, description, argument names and capabilities (``search_terms``), with
the ``bm25s`` library: the ``retrieval`` extra (``pip install 'pes-agent[retrieval]'``). It is
imported here only, and only when an index is built, so an instance with few tools (or without the
extra) never loads it or numpy.

``finder.ToolFinder`` keeps one index per instance, in step with the registry.
"""

from __future__ import annotations

import heapq
import importlib.util
import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from pes_agent.tools.registry import ToolRegistry
from pes_agent.tools.search_terms import tool_terms, words

logger = logging.getLogger("pes_agent.retrieval")

EXTRA_HINT = "install the `retrieval` extra: pip install 'pes-agent[retrieval]'"


def index_available() -> bool:
    """Whether ``bm25s`` can be imported (without importing it)."""
    return importlib.util.find_spec("bm25s") is not None


@dataclass(frozen=True, kw_only=True)
class ToolHit:
    """A tool the index found, with its BM25 score (higher is better; 0 shares no word)."""

    name: str
    score: float
    lexical: float | None = None
    """With embeddings (``semantic.fuse``), ``score`` is the fused one; these are the parts."""
    semantic: float | None = None


class ToolIndex:
    """BM25 over a fixed list of tools; build a new one when the tools change."""

    def __init__(self, names: Sequence[str], documents: Sequence[Sequence[str]]) -> None:
        import bm25s  # the `retrieval` extra: see the module docstring

        self.names = tuple(names)
        self._bm25: Any = bm25s.BM25()
        # An empty document would make bm25s drop the row: a placeholder word keeps positions aligned.
        self._bm25.index([list(d) or ["\x00"] for d in documents], show_progress=False)

    @classmethod
    def of(cls, registry: ToolRegistry) -> ToolIndex:
        specs = registry.specs()
        return cls([s.name for s in specs], [tool_terms(s) for s in specs])

    def search(self, query: str, k: int, allowed: Collection[str] | None = None) -> tuple[ToolHit, ...]:
        """The ``k`` best tools for ``query`` among ``allowed`` (all when None), best first; tools
        that share no word with the query are left out, so fewer than ``k`` may come back."""
        terms = words(query)
        if not terms or k <= 0:
            return ()
        scores: list[float] = self._bm25.get_scores(terms).tolist()
        pool = (
            (score, -position)  # ties: the earlier-registered tool first
            for position, score in enumerate(scores)
            if score > 0 and (allowed is None or self.names[position] in allowed)
        )
        best = heapq.nlargest(k, pool)
        return tuple(ToolHit(name=self.names[-neg], score=round(score, 3)) for score, neg in best)
