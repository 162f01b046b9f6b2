"""A lexical index of the registered tools, for finding the few a query needs among hundreds.

BM25 over each tool's name, description, argument names and capabilities (``search_terms``), with
the ``bm25s`` library: the ``retrieval`` extra (``pip install 'pes-agent[retrieval]'``). It is
imported here only, and only when an index is built, so an instance with few tools (or without the
extra) never loads it or numpy.

``finder.ToolFinder`` keeps one index per instance, in step with the registry.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

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


class Hits(Sequence[ToolHit]):
    """A ranking whose names are known and whose hits are made when read: a request's parts are each
    ranked ``k + names`` deep, a fair merge reads only their names, and most of the offer is shown by
    name only (making every hit took more time than ranking them, issue 30)."""

    def __init__(self, names: list[str], hit: Callable[[int], ToolHit]) -> None:
        self.names = names
        self._hit = hit

    def __len__(self) -> int:
        return len(self.names)

    @overload
    def __getitem__(self, at: int) -> ToolHit: ...

    @overload
    def __getitem__(self, at: slice) -> tuple[ToolHit, ...]: ...

    def __getitem__(self, at: int | slice) -> ToolHit | tuple[ToolHit, ...]:
        if isinstance(at, slice):
            return tuple(self._hit(i) for i in range(*at.indices(len(self.names))))
        return self._hit(range(len(self.names))[at])

    def __iter__(self) -> Iterator[ToolHit]:
        return (self._hit(i) for i in range(len(self.names)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def pick(self, positions: Sequence[int]) -> Hits:
        """The hits at ``positions``, in that order, still made when read."""
        return Hits([self.names[i] for i in positions], lambda at: self._hit(positions[at]))


def hit_names(hits: Sequence[ToolHit]) -> list[str]:
    """The names of ``hits`` without making them (``Hits``)."""
    return hits.names if isinstance(hits, Hits) else [h.name for h in hits]


@dataclass(frozen=True)
class Ranked:
    """BM25's best tools for one text as arrays (the fusion reads them so): positions in ``names``
    and raw scores, best first."""

    names: tuple[str, ...]
    positions: Any
    scores: Any

    def hits(self) -> Hits:
        found, scores = [self.names[i] for i in self.positions.tolist()], self.scores.tolist()
        return Hits(found, lambda at: ToolHit(name=found[at], score=round(scores[at], 3)))


class AllowedMask:
    """Which of a fixed list of tools a search may return, as a boolean array, kept for the last
    set asked: a request's searches (and runs with the same enabled tools) share it."""

    def __init__(self, names: Sequence[str]) -> None:
        self._names = names
        self._last: tuple[frozenset[str], Any] | None = None

    def __call__(self, allowed: Collection[str]) -> Any:
        import numpy as np

        last = self._last
        if last is not None and last[0] is allowed:
            return last[1]
        if last is not None and last[0] == allowed:
            mask = last[1]
        else:
            mask = np.fromiter((n in allowed for n in self._names), dtype=bool, count=len(self._names))
        if isinstance(allowed, frozenset):  # a set that cannot change under the cache
            self._last = (allowed, mask)
        return mask


class ToolIndex:
    """BM25 over a fixed list of tools; build a new one when the tools change."""

    def __init__(self, names: Sequence[str], documents: Sequence[Sequence[str]]) -> None:
        import bm25s  # the `retrieval` extra: see the module docstring

        self.names = tuple(names)
        self._bm25: Any = bm25s.BM25()
        # An empty document would make bm25s drop the row: a placeholder word keeps positions aligned.
        self._bm25.index([list(d) or ["\x00"] for d in documents], show_progress=False)
        self._allowed = AllowedMask(self.names)

    @classmethod
    def of(cls, registry: ToolRegistry) -> ToolIndex:
        specs = registry.specs()
        return cls([s.name for s in specs], [tool_terms(s) for s in specs])

    def search(self, query: str, k: int, allowed: Collection[str] | None = None) -> Sequence[ToolHit]:
        """The ``k`` best tools for ``query`` among ``allowed`` (all when None), best first; tools
        that share no word with the query are left out, so fewer than ``k`` may come back."""
        return self.ranked(query, k, allowed).hits()

    def ranked(self, query: str, k: int, allowed: Collection[str] | None = None) -> Ranked:
        """``search`` as arrays; ties go to the earlier-registered tool."""
        import numpy as np

        terms = words(query)
        if not terms or k <= 0:
            return Ranked(self.names, np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32))
        scores = self._bm25.get_scores(terms)
        keep = scores > 0
        if allowed is not None:
            keep &= self._allowed(allowed)
        found = np.flatnonzero(keep)
        if len(found) > k:  # only those scoring at least the k-th best can be among the k
            found = found[scores[found] >= np.partition(scores[found], len(found) - k)[len(found) - k]]
        best = found[np.lexsort((found, -scores[found]))][:k]
        return Ranked(self.names, best, scores[best])
