"""Tool retrieval with embeddings over HTTP (``retrieval.embeddings``): the product path, measured.

Run through ``benchmarks/retrieval.py --embeddings-url URL --embeddings-model NAME`` against any
OpenAI-compatible ``/v1/embeddings`` (``benchmarks/embedding_server.py`` serves all-MiniLM-L6-v2).
The catalogue's vectors and each query's come from that server through pes-agent's own client
(``pes_agent.llm.embeddings``) and finder (``pes_agent.tools.finder``), as in a run.

- recall of the needed tools, BM25 alone vs fused, *described* (the ``k`` with their manifesto
  line) and *offered* (those plus the ``names`` named only, which the planner may plan with);
- fusion tuned on one half of the queries (even positions) and reported on the other half and on
  all, so ``k``, ``names`` and the fusion constant are not fitted to the figures they report;
- planning-prompt tokens (o200k) at N = 10/50/200/1,000 for the chosen ``k`` + ``names``;
- index build time (BM25 plus embedding the catalogue) and the time to choose a query's tools,
  including its embedding request.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks._common import format_table
from benchmarks.retrieval_queries import QUERIES, LabelledQuery
from benchmarks.tool_catalogue import catalogue
from pes_agent import create_art_instance
from pes_agent.agent.tool_offer import choose_tools
from pes_agent.config import EmbeddingsConfig, ProviderConfig, RetrievalConfig
from pes_agent.llm.embeddings import OpenAIEmbeddings
from pes_agent.llm.tokens import count_messages
from pes_agent.state.memory import MemoryStore
from pes_agent.tools import semantic
from pes_agent.tools.finder import ToolFinder
from pes_agent.tools.registry import ToolRegistry
from pes_agent.tools.semantic import Searcher
from pes_agent.tools.spec import ToolSpec

K_VALUES = (10, 20, 30, 50)
NAMES_VALUES = (0, 50, 100, 150, 200, 270)
K0_VALUES = (10, 30, 60, 100)
RECALL_TARGET = 0.95
TOKENS_TARGET = 3000
LATENCY_TARGET_MS = 5.0
DEPTH = 400
"""How deep each query's rankings are kept: past any k + names measured."""
Ranking = list[str]


def embedder(url: str, model: str) -> OpenAIEmbeddings:
    provider = ProviderConfig(adapter="openai", base_url=url, timeout_s=60)
    return OpenAIEmbeddings("bench", provider, EmbeddingsConfig(provider="bench", model=model))


async def rankings(url: str, model: str) -> dict[str, Any]:
    """Per query: BM25's ranking and the fused one (product constants), plus the raw cosine ranking
    for tuning; the build and per-query times, each query embedded by its own request as in a run."""
    registry = ToolRegistry(catalogue())
    client = embedder(url, model)
    finder = ToolFinder(registry, client)
    started = time.perf_counter()
    first = await finder.searcher([QUERIES[0].text])
    build_s = time.perf_counter() - started
    assert first is not None and first.semantic is not None, first and first.note
    build_requests = client.requests
    per_query: list[float] = []
    out: list[dict[str, Any]] = []
    for query in QUERIES:
        started = time.perf_counter()
        searcher = await finder.searcher([query.text])
        assert searcher is not None and searcher.semantic is not None, searcher and searcher.note
        fused = [h.name for h in searcher.search(query.text, DEPTH)]
        per_query.append((time.perf_counter() - started) * 1000)
        lexical = [h.name for h in searcher.index.search(query.text, DEPTH)]
        cosine = [n for n, _ in searcher.semantic.rank(searcher.vectors[query.text])][:DEPTH]
        out.append({"bm25": lexical, "fused": fused, "cosine": cosine, "searcher": searcher})
    await client.aclose()
    per_query.sort()
    return {
        "per_query": out,
        "build_s": build_s,
        "build_requests": build_requests,
        "query_ms_median": statistics.median(per_query),
        "query_ms_p95": per_query[int(0.95 * len(per_query)) - 1],
    }


def rrf(lexical: Ranking, cosine: Ranking, k0: int) -> Ranking:
    scores: dict[str, float] = {}
    for ranking in (lexical[: semantic.LEXICAL_POOL], cosine):
        for rank, name in enumerate(ranking, 1):
            scores[name] = scores.get(name, 0.0) + 1.0 / (k0 + rank)
    return sorted(scores, key=lambda n: -scores[n])


def recall(queries: Sequence[LabelledQuery], ranked: Sequence[Ranking], depth: int) -> float:
    found = sum(t in set(r[:depth]) for q, r in zip(queries, ranked, strict=True) for t in q.tools)
    return found / sum(len(q.tools) for q in queries)


def halves(items: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    return list(items[0::2]), list(items[1::2])


def tune_k0(per_query: Sequence[dict[str, Any]], k: int, names: int) -> dict[str, float]:
    """Recall offered (k + names) on the tuning half for each fusion constant."""
    tune_q, _ = halves(QUERIES)
    tune_r, _ = halves(per_query)
    return {
        str(k0): recall(tune_q, [rrf(r["bm25"], r["cosine"], k0) for r in tune_r], k + names)
        for k0 in K0_VALUES
    }


def recall_table(per_query: Sequence[dict[str, Any]], key: str) -> dict[str, dict[str, list[float]]]:
    """recall[k][names] = [tuning half, held-out half, all]."""
    tune_q, test_q = halves(QUERIES)
    ranked = [r[key] for r in per_query]
    tune_r, test_r = halves(ranked)
    return {
        str(k): {
            str(m): [
                recall(tune_q, tune_r, k + m),
                recall(test_q, test_r, k + m),
                recall(QUERIES, ranked, k + m),
            ]
            for m in NAMES_VALUES
        }
        for k in K_VALUES
    }


def check_offer(per_query: Sequence[dict[str, Any]], k: int, names: int) -> float:
    """Recall of what ``choose_tools`` offers (described + named) with the fused searchers: the
    same figure the rankings give, computed by the product's own choice."""
    config = RetrievalConfig(k=k, names=names, threshold=0)
    enabled = [s.name for s in catalogue()]
    found = needed = 0
    for query, r in zip(QUERIES, per_query, strict=True):
        offer = choose_tools(query.text, enabled, config, r["searcher"])
        found += sum(t in offer.plannable for t in query.tools)
        needed += len(query.tools)
    return found / needed


class _Fixed:
    """A finder whose synchronous preview (``planning_prompt``) uses a given searcher."""

    def __init__(self, searcher_for: Callable[[str], Searcher]) -> None:
        self.searcher_for = searcher_for
        self.query = ""

    def index(self) -> object:
        return True

    def lexical(self) -> Searcher:
        return self.searcher_for(self.query)


async def tokens_by_size(
    per_query: Sequence[dict[str, Any]], k: int, names: int, sizes: Sequence[int]
) -> dict[str, Any]:
    """Planning-prompt tokens of the first planning call, tools as the fused path chooses them."""
    picks = list(range(0, len(QUERIES), max(1, len(QUERIES) // 40)))
    out: dict[str, Any] = {}
    for n in sizes:
        specs: list[ToolSpec] = catalogue(n)
        config = {"storage": {"type": "memory"}, "retrieval": {"k": k, "names": names}}
        art = await create_art_instance(config, tools=specs, store=MemoryStore())
        real = art._finder

        def for_query(text: str, real: Any = real) -> Searcher:
            # choose_tools searches only the enabled tools: the catalogue's vectors serve any N
            full = per_query[[q.text for q in QUERIES].index(text)]["searcher"]
            index = real.index()
            assert index is not None
            return Searcher(index=index, semantic=full.semantic, vectors=full.vectors)

        fixed = _Fixed(for_query)
        art._finder = fixed  # type: ignore[assignment]
        counts = []
        for i in picks:
            fixed.query = QUERIES[i].text
            counts.append(count_messages(art.planning_prompt(QUERIES[i].text).messages).tokens)
        out[str(n)] = {"mean": statistics.mean(counts), "max": max(counts)}
        art._finder = real
        await art.aclose()
    return out


def measure_fused(url: str, model: str, k: int, names: int, sizes: Sequence[int]) -> dict[str, Any]:
    got = asyncio.run(rankings(url, model))
    per_query = got.pop("per_query")
    result: dict[str, Any] = {"url": url, "model": model, "k": k, "names": names, **got}
    result["k0_tuning"] = tune_k0(per_query, k, names)
    result["recall_bm25"] = recall_table(per_query, "bm25")
    result["recall_fused"] = recall_table(per_query, "fused")
    result["recall_offer_check"] = check_offer(per_query, k, names)
    result["tokens"] = asyncio.run(tokens_by_size(per_query, k, names, sizes))
    return result


def report_fused(r: dict[str, Any]) -> str:
    k, names = r["k"], r["names"]
    lines = [
        (
            f"Embeddings over HTTP: {r['model']} at {r['url']} (retrieval.embeddings), fused with BM25 by "
            "RRF "
            f"(k0 = {semantic.RRF_K0}); recall = [tuning half (even), held-out half (odd), all]"
        ),
        "",
    ]
    for label, key in (("BM25 alone", "recall_bm25"), ("fused", "recall_fused")):
        rows = [
            [kk, *(("/".join(f"{x:.3f}" for x in r[key][kk][m])) for m in map(str, NAMES_VALUES))]
            for kk in map(str, K_VALUES)
        ]
        lines += [
            f"{label}: recall of the needed tools offered, k described + names named only:",
            format_table(["k", *(f"+{m}" for m in NAMES_VALUES)], rows, "r" * (1 + len(NAMES_VALUES))),
            "",
        ]
    lines.append(
        f"fusion constant on the tuning half at k = {k}, names = {names}: "
        + ", ".join(f"k0 {a}: {b:.3f}" for a, b in r["k0_tuning"].items())
    )
    lines.append(f"choose_tools at k = {k}, names = {names}, all queries: {r['recall_offer_check']:.3f}")
    tok_rows = [[n, f"{v['mean']:.0f}", str(v["max"])] for n, v in r["tokens"].items()]
    lines += [
        "",
        f"planning prompt tokens (o200k) with embeddings, k = {k}, names = {names}:",
        format_table(["N", "mean", "max"], tok_rows, "rrr"),
        "",
    ]
    lines.append(
        f"index build at 1,000 tools (BM25 + embedding the catalogue, {r['build_requests']} requests): "
        f"{r['build_s']:.2f} s; choosing one query's tools incl. its embedding request: median "
        f"{r['query_ms_median']:.1f} ms, p95 {r['query_ms_p95']:.1f} ms"
    )
    offered = r["recall_fused"][str(k)][str(names)]
    tokens = r["tokens"]
    top, at_200 = tokens["1000"]["max"], tokens["200"]["max"]
    lines += [
        "",
        "targets, with embeddings:",
        (
            f"  recall offered ({k} described + {names} named) >= {RECALL_TARGET}: {offered[2]:.3f} "
            "(held-out half "
            f"{offered[1]:.3f}) {_verdict(offered[2] >= RECALL_TARGET and offered[1] >= RECALL_TARGET)}"
        ),
        f"  planning prompt at 1,000 tools <= {TOKENS_TARGET}: max {top} {_verdict(top <= TOKENS_TARGET)}",
        f"  flat in N (largest at 1,000 within 25 % of that at 200): {at_200} -> {top} "
        f"{_verdict(top <= 1.25 * at_200)}",
        (
            f"  <= {LATENCY_TARGET_MS} ms per query (with its embedding request): p95 "
            f"{r['query_ms_p95']:.1f} ms "
            f"{_verdict(r['query_ms_p95'] <= LATENCY_TARGET_MS)}"
        ),
    ]
    return "\n".join(lines)


def _verdict(passed: bool) -> str:
    return "ok" if passed else "MISS"
