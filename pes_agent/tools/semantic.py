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

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pes_agent.tools.index import AllowedMask, Hits, Ranked, ToolHit, ToolIndex
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
        self._mask = AllowedMask(self.names)
        self._names: Any = np.asarray(self.names, dtype=object)
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
        lexical: Sequence[Ranked],
        vectors: Sequence[Sequence[float]],
        k: int,
        allowed: Collection[str] | None = None,
    ) -> list[Sequence[ToolHit]]:
        """For each text, ``fuse(lexical[i].hits(), self.rank(vectors[i], allowed), k)``, computed
        over arrays and for all of a request's texts at once (its parts and its whole, issue 30):
        one sort of the catalogue for them all, and hits made only when read."""
        import numpy as np

        found: dict[int, Sequence[ToolHit]] = {}
        rows: list[tuple[int, Any, Any]] = []  # text, BM25's tools here, the unit query vector
        for i, (words, vector) in enumerate(zip(lexical, vectors, strict=True)):
            at = self._positions(words)
            query = np.asarray(vector, dtype=np.float32)
            norm = float(np.linalg.norm(query))
            if at is None:  # a tool newer than the vectors
                found[i] = fuse(words.hits(), self.rank(vector, allowed), k)
            elif query.shape[0] != self.dimensions or not self.names or norm == 0:
                found[i] = fuse(words.hits(), [], k)  # no word the table knows: BM25 decides alone
            else:
                rows.append((i, at, query / norm))
        if rows:
            # a product per text: one for all rounds differently in the last bit, which reorders
            # tools of near-equal cosine (and was no faster)
            cosines = np.stack([self._matrix @ query for _, _, query in rows])
            fused = self._fuse_rows(
                [at for _, at, _ in rows], [lexical[i].scores for i, _, _ in rows], cosines, allowed, k
            )
            found.update(zip([i for i, _, _ in rows], fused, strict=True))
        return [found[i] for i in range(len(lexical))]

    def _ranks(self, cosines: Any, allowed: Collection[str] | None) -> Any:
        """Each row's 1-based rank of every allowed tool by cosine (ties: the earlier-registered
        tool first), 0 for a tool not allowed."""
        import numpy as np

        mask = None if allowed is None else self._mask(allowed)
        keys = -cosines if mask is None else np.where(mask, -cosines, np.inf)
        order = np.argsort(keys, axis=1, kind="stable")
        ranks = np.empty(cosines.shape, dtype=np.float64)
        np.put_along_axis(ranks, order, np.arange(1, cosines.shape[1] + 1, dtype=np.float64)[None, :], axis=1)
        if mask is not None:
            ranks[:, ~mask] = 0
        return ranks

    def _fuse_rows(
        self,
        lexical: Sequence[Any],
        bm25: Sequence[Any],
        cosines: Any,
        allowed: Collection[str] | None,
        k: int,
    ) -> list[Hits]:
        """Each text's fused ranking, a row each: reciprocal ranks of both rankings, ties to BM25's
        order, then meaning's. ``lexical``: BM25's tools of each text (positions here, best first)
        and ``bm25`` their scores; ``cosines``: every tool's, a row a text."""
        import numpy as np

        ranks = self._ranks(cosines, allowed)
        texts, n = ranks.shape
        ranked = ranks > 0  # every allowed tool: meaning orders them all
        scores = np.where(ranked, 1.0 / (RRF_K0 + ranks), 0.0)
        first = np.where(ranked, np.array([[len(tools)] for tools in lexical]) + ranks, np.inf)
        words = np.full((texts, n), np.nan)
        flat = np.concatenate([row * n + tools for row, tools in enumerate(lexical)])  # in all rows
        places = np.concatenate([np.arange(1, len(tools) + 1) for tools in lexical])
        flat_scores, flat_first, flat_words = scores.reshape(-1), first.reshape(-1), words.reshape(-1)
        flat_scores[flat] = 1.0 / (RRF_K0 + places) + flat_scores[flat]
        flat_first[flat] = places
        flat_words[flat] = np.concatenate(bm25)
        found = np.flatnonzero(ranked[0])  # the same tools in every row: the allowed ones
        if len(found) > k > 0:  # only those scoring at least the k-th best can be among the k
            kth = np.partition(scores[:, found], len(found) - k, axis=1)[:, len(found) - k]
            rows = [found[scores[row, found] >= kth[row]] for row in range(texts)]
        else:
            rows = [found] * texts
        best = np.stack(
            [cut[np.lexsort((first[row, cut], -scores[row, cut]))][:k] for row, cut in enumerate(rows)]
        )
        fused = np.round(np.take_along_axis(scores, best, axis=1) * 1000, 3)
        meaning = np.round(np.take_along_axis(cosines, best, axis=1).astype(np.float64), 4)
        lexical_scores = np.take_along_axis(words, best, axis=1)
        names: list[list[str]] = self._names[best].tolist()
        return [_hits(names[row], fused[row], meaning[row], lexical_scores[row]) for row in range(texts)]

    def _positions(self, lexical: Ranked) -> Any:
        """BM25's tools as positions in this index (the same when both were built from one tool
        list); None when one has no vector."""
        import numpy as np

        if lexical.names is self.names or lexical.names == self.names:
            return lexical.positions
        mine = [self._position.get(lexical.names[i], -1) for i in lexical.positions.tolist()]
        return None if -1 in mine else np.asarray(mine, dtype=np.intp)


def _hits(names: list[str], fused: Any, meaning: Any, words: Any) -> Hits:
    """A fused row's hits, made when read (``words``: NaN where BM25 did not rank the tool)."""

    def hit(i: int) -> ToolHit:
        bm25 = float(words[i])
        return ToolHit(
            name=names[i],
            score=float(fused[i]),
            lexical=None if bm25 != bm25 else round(bm25, 3),
            semantic=float(meaning[i]),
        )

    return Hits(names, hit)


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
        return self.search_each([text], k, allowed, words=[words])[0]

    def search_each(
        self,
        texts: Sequence[str],
        k: int,
        allowed: Collection[str] | None = None,
        *,
        words: Sequence[Sequence[str]] = (),
    ) -> list[Sequence[ToolHit]]:
        """``search`` for each of ``texts`` (with ``words[i]`` for BM25): a request's parts and its
        whole text, ranked by meaning in one pass (``SemanticIndex.fused``)."""
        extra = words or [()] * len(texts)
        lexical = [" ".join([text, *more]) for text, more in zip(texts, extra, strict=True)]
        semantic = self.semantic
        meant = [i for i, text in enumerate(texts) if semantic is not None and text in self.vectors]
        found = {i: self.index.search(lexical[i], k, allowed) for i in range(len(texts)) if i not in meant}
        if semantic is not None and meant:
            ranked = [self.index.ranked(lexical[i], LEXICAL_POOL, allowed) for i in meant]
            fused = semantic.fused(ranked, [self.vectors[texts[i]] for i in meant], k, allowed)
            found.update(zip(meant, fused, strict=True))
        return [found[i] for i in range(len(texts))]
