"""A lexical index of the registered tools, for finding the few a query needs among hundreds.

BM25 over each tool's name, description, argument names and capabilities (``search_terms``), with
the ``bm25s`` library: the ``retrieval`` extra (``pip install 'pes-agent[retrieval]'``). It is
imported here only, and only when an index is built, so an instance with few tools (or without the
extra) never loads it or numpy.

``ToolFinder`` keeps one index per instance and builds it again when the registry's version moves
(a tool registered or removed, an MCP server's list changed), on the next search, not on the change:
a burst of changes costs one build.
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


class ToolFinder:
    """The index of one registry, kept in step with it; ``None`` when ``bm25s`` is not installed."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self._index: ToolIndex | None = None
        self._version = -1
        self._available: bool | None = None
        self.warned = False
        """Whether the missing-extra warning was logged (once per instance)."""

    def index(self) -> ToolIndex | None:
        if self._available is None:  # looked up once: it reads the file system
            self._available = index_available()
        if not self._available:
            return None
        if self._index is None or self._version != self._registry.version:
            try:
                self._index = ToolIndex.of(self._registry)
            except ImportError as exc:  # installed but broken (a numpy built for another Python)
                logger.warning("tool retrieval is installed but cannot be imported (%s): %s", exc, EXTRA_HINT)
                self._available = False
                return None
            self._version = self._registry.version
        return self._index

    def warn_once(self, total: int) -> None:
        if not self.warned:
            self.warned = True
            logger.warning(
                "%d tools are enabled, but tool retrieval is not installed, so every planning prompt "
                "lists all of them; %s (or set `retrieval.enabled: false` to silence this)",
                total,
                EXTRA_HINT,
            )
