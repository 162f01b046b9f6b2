"""Tools ranked by meaning: embeddings of each tool's text, fused with the BM25 ranking.

A third of the tools a query needs share no word with it ("How long until Christmas?" needs
``time_days_between``), which caps BM25's recall at 0.67 on the benchmark's catalogue whatever ``k``.
An embedding model places both near each other. Fusion is reciprocal-rank (each ranking gives
``1 / (RRF_K0 + rank)``): scores of the two kinds are not comparable, ranks are, and a tool both
rankings like comes first.

Vectors are cached by the tool's text, so a changed tool list (MCP's ``list_changed``) embeds only
the tools whose text is new. numpy comes with the ``retrieval`` extra (bm25s needs it) and is imported
only when an index with embeddings is built.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, overload

from pes_agent.tools.index import ToolHit, ToolIndex
from pes_agent.tools.spec import ToolSpec

RRF_K0 = 60
"""The usual constant of reciprocal-rank fusion (Cormack et al.); ``benchmarks/retrieval.py`` found
no better one on its tuning half (see ``config.retrieval``)."""

LEXICAL_POOL = 100
"""How deep BM25's ranking goes into the fusion: below it, its scores are near zero anyway."""


class Embedder(Protocol):
    """Texts to vectors (``pes_agent.llm.embeddings.OpenAIEmbeddings``, ``meaning.BuiltinEmbedder``)."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


def tool_text(spec: ToolSpec) -> str:
    """What is embedded for a tool: its name as words, its description, and its author's search
    words (``ToolSpec.search_terms``) when it has any."""
    text = f"{spec.name.replace('_', ' ')}: {spec.description}"
    return f"{text} ({', '.join(spec.search_terms)})" if spec.search_terms else text


class SemanticIndex:
    """Unit vectors of a fixed list of tools; cosine similarity against a query's vector."""

    def __init__(self, names: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        import numpy as np  # the `retrieval` extra, with bm25s

        self.names = tuple(names)
        self._position = {name: i for i, name in enumerate(self.names)}
        self._mask: tuple[Collection[str] | None, Any] = (None, None)
        matrix = np.asarray(vectors, dtype=np.float32).reshape(len(self.names), -1)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self._matrix: Any = matrix / np.where(norms == 0, 1.0, norms)

    @property
    def dimensions(self) -> int:
        """The length of the catalogue's vectors: a query's must match (``ToolFinder.searcher``)."""
        return int(self._matrix.shape[1])

    def rank(
        self, vector: Sequence[float], allowed: Collection[str] | None = None
    ) -> list[tuple[str, float]]:
        """Every allowed tool with its cosine similarity to ``vector``, best first."""
        import numpy as np

        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if query.shape[0] != self._matrix.shape[1] or not self.names or norm == 0:
            return []  # a zero vector (no word the table knows) ranks nothing: BM25 decides alone
        scores = self._matrix @ (query / norm)
        order = np.argsort(-scores, kind="stable")  # ties: the earlier-registered tool first
        return [
            (self.names[i], float(scores[i]))
            for i in order.tolist()
            if allowed is None or self.names[i] in allowed
        ]

    def fused(
        self,
        lexical: Sequence[ToolHit],
        vector: Sequence[float],
        k: int,
        allowed: Collection[str] | None = None,
    ) -> Sequence[ToolHit]:
        """``fuse(lexical, self.rank(vector, allowed), k)``, computed over arrays: a request searches
        once per part (issue 30), and ranking every tool in Python took most of its time."""
        import numpy as np

        if any(h.name not in self._position for h in lexical):  # a tool newer than the vectors
            return fuse(lexical, self.rank(vector, allowed), k)
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if query.shape[0] != self._matrix.shape[1] or not self.names or norm == 0:
            return fuse(lexical, [], k)
        cosines = self._matrix @ (query / norm)
        order = np.argsort(-cosines, kind="stable")
        if allowed is not None:
            order = order[self._allowed(allowed)[order]]
        places = np.zeros(len(self.names), dtype=np.float64)  # 1-based semantic rank, 0: not ranked
        places[order] = np.arange(1, len(order) + 1)
        scores = np.where(places > 0, 1.0 / (RRF_K0 + places), 0.0)
        first = np.where(places > 0, len(lexical) + places, np.inf)  # ties: BM25's order, then meaning's
        words: dict[str, float] = {}
        for rank, hit in enumerate(lexical, 1):
            at = self._position[hit.name]
            scores[at] = 1.0 / (RRF_K0 + rank) + scores[at]
            first[at] = rank
            words[hit.name] = hit.score
        found = np.flatnonzero(np.isfinite(first))
        if len(found) > k > 0:  # only those scoring at least the k-th best can be among the k
            found = found[scores[found] >= np.partition(scores[found], len(found) - k)[len(found) - k]]
        best = found[np.lexsort((first[found], -scores[found]))][:k]
        ranked = places[best].tolist()
        return Hits(
            [self.names[i] for i in best.tolist()],
            np.round(scores[best] * 1000, 3).tolist(),
            [
                m if r > 0 else None
                for m, r in zip(np.round(cosines[best].astype(np.float64), 4).tolist(), ranked, strict=True)
            ],
            words,
        )

    def _allowed(self, allowed: Collection[str]) -> Any:
        """A mask of the allowed tools, kept for the last set asked (a request's parts share it)."""
        import numpy as np

        if self._mask[0] is not allowed:
            self._mask = (
                allowed,
                np.fromiter((n in allowed for n in self.names), dtype=bool, count=len(self.names)),
            )
        return self._mask[1]


class Hits(Sequence[ToolHit]):
    """A fused ranking whose hits are made when read: a request's parts are each ranked ``k + names``
    deep, and a fair merge reads only the front of each."""

    def __init__(
        self, names: list[str], scores: list[float], meaning: list[float | None], words: Mapping[str, float]
    ) -> None:
        self.names, self._scores, self._meaning, self._words = names, scores, meaning, words

    def __len__(self) -> int:
        return len(self.names)

    @overload
    def __getitem__(self, at: int) -> ToolHit: ...

    @overload
    def __getitem__(self, at: slice) -> tuple[ToolHit, ...]: ...

    def __getitem__(self, at: int | slice) -> ToolHit | tuple[ToolHit, ...]:
        if isinstance(at, slice):
            return tuple(self[i] for i in range(*at.indices(len(self.names))))
        name = self.names[at]
        return ToolHit(
            name=name, score=self._scores[at], lexical=self._words.get(name), semantic=self._meaning[at]
        )

    def __iter__(self) -> Iterator[ToolHit]:
        return (self[i] for i in range(len(self.names)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]


class ToolVectors:
    """The catalogue's vectors, cached by tool text across rebuilds."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._cache: dict[str, list[float]] = {}

    def forget(self) -> None:
        """Drop every cached vector (they came from a model the endpoint no longer serves)."""
        self._cache = {}

    async def index(self, specs: Sequence[ToolSpec]) -> SemanticIndex:
        """The index of ``specs``, embedding only texts not seen before; texts of tools that are
        gone are forgotten."""
        texts, known, missing = self._known(specs)
        if missing:
            known.update(zip(missing, await self.embedder.embed(missing), strict=True))
        return self._kept(specs, texts, known)

    def index_now(
        self, specs: Sequence[ToolSpec], vectors: Callable[[Sequence[str]], list[list[float]]]
    ) -> SemanticIndex:
        """The same, synchronously, with ``vectors`` computed in process (the built-in table's, for
        a prompt preview): the cache it fills is the one runs use."""
        texts, known, missing = self._known(specs)
        if missing:
            known.update(zip(missing, vectors(missing), strict=True))
        return self._kept(specs, texts, known)

    def _known(self, specs: Sequence[ToolSpec]) -> tuple[list[str], dict[str, list[float]], list[str]]:
        """The tools' texts, the vectors cached for them, and the texts still to embed. Read before
        any request: a call for another tool list may replace the cache while this one waits (a list
        changing during a slow request), and must not take vectors this one counted on."""
        texts = [tool_text(s) for s in specs]
        known = {t: self._cache[t] for t in dict.fromkeys(texts) if t in self._cache}
        return texts, known, [t for t in dict.fromkeys(texts) if t not in known]

    def _kept(
        self, specs: Sequence[ToolSpec], texts: Sequence[str], known: dict[str, list[float]]
    ) -> SemanticIndex:
        self._cache = known  # texts of tools that are gone are forgotten
        return SemanticIndex([s.name for s in specs], [known[t] for t in texts])


def fuse(lexical: Sequence[ToolHit], semantic: Sequence[tuple[str, float]], k: int) -> tuple[ToolHit, ...]:
    """The ``k`` best by reciprocal rank over both rankings; each hit keeps both raw scores."""
    scores: dict[str, float] = {}
    words: dict[str, float] = {}
    meaning: dict[str, float] = {}
    for rank, hit in enumerate(lexical, 1):
        scores[hit.name] = 1.0 / (RRF_K0 + rank)
        words[hit.name] = hit.score
    for rank, (name, cosine) in enumerate(semantic, 1):
        scores[name] = scores.get(name, 0.0) + 1.0 / (RRF_K0 + rank)
        meaning[name] = cosine
    best = sorted(scores, key=lambda n: -scores[n])[:k]  # sorted is stable: BM25's order breaks ties
    return tuple(
        ToolHit(
            name=n,
            score=round(scores[n] * 1000, 3),
            lexical=words.get(n),
            semantic=round(meaning[n], 4) if n in meaning else None,
        )
        for n in best
    )


@dataclass(frozen=True, kw_only=True)
class Searcher:
    """One planning call's view of the index: BM25, fused with embeddings for the texts whose
    vectors it holds (the query, the planner's ``findTools`` phrases)."""

    index: ToolIndex
    semantic: SemanticIndex | None = None
    vectors: Mapping[str, Sequence[float]] = field(default_factory=dict)
    note: str = ""
    """Why embeddings that are configured were not used this time ("" when they were, or are not
    configured)."""
    meaning: str = "embeddings"
    """Where the vectors came from, as ``ranking`` names it: ``embeddings`` (an endpoint) or
    ``builtin`` (the meaning table shipped in the package)."""

    @property
    def ranking(self) -> str:
        return f"bm25+{self.meaning}" if self.semantic is not None else "bm25"

    def search(
        self, text: str, k: int, allowed: Collection[str] | None = None, *, words: Sequence[str] = ()
    ) -> Sequence[ToolHit]:
        """The ``k`` best tools for ``text``; ``words`` join it for BM25 only (the plain verb of the
        arithmetic a guided part names), so ``text`` keeps the vector fetched for it."""
        vector = self.vectors.get(text)
        lexical_text = " ".join([text, *words])
        if self.semantic is None or vector is None:
            return self.index.search(lexical_text, k, allowed)
        lexical = self.index.search(lexical_text, LEXICAL_POOL, allowed)
        return self.semantic.fused(lexical, vector, k, allowed)
