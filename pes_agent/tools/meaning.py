"""The built-in meaning table: tools ranked by meaning with nothing configured, no model, no network.

A third of the tools a query needs share no word with it, so BM25 alone finds at most 0.67 of them
on the benchmark's catalogue. A sentence-embedding model closes that gap but needs PyTorch or an
endpoint. This is the middle way (model2vec's static embeddings): one vector per WordPiece token,
distilled once from all-MiniLM-L6-v2 by ``benchmarks/static_table.py``; a text's vector is the mean
of its tokens'. Fused with BM25 it finds 0.96 of the needed tools among 30 described + 340 named at
1,000 tools (``config.retrieval.BUILTIN_NAMES``), in microseconds a text, with numpy alone (which the
``retrieval`` extra brings with bm25s).

The table ships in the package (``data/meaning.npz``, 6.8 MB: int8 vectors with a scale per token;
``data/NOTICE`` says where it comes from) and is loaded once per process, on the first index build.
"""

from __future__ import annotations

import asyncio
import zipfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from pes_agent.errors import ConfigError
from pes_agent.tools.wordpiece import WordPiece

__all__ = ["TABLE", "BuiltinEmbedder", "MeaningTable", "builtin_table"]

TABLE = Path(__file__).with_name("data") / "meaning.npz"

IN_THREAD = 64
"""Texts from which ``embed`` runs in a worker thread (a catalogue: tens of milliseconds), so an
instance's event loop is not held while a changed tool list is embedded. The first ``embed`` runs
there too, whatever its size: it reads the table (about a third of a second)."""


class MeaningTable:
    """Token vectors (int8, one float32 scale each) and the tokenizer that indexes them."""

    def __init__(self, tokens: Sequence[str], vectors: Any, scales: Any) -> None:
        self.tokenizer = WordPiece({t: i for i, t in enumerate(tokens)})
        self._vectors = vectors
        self._scales = scales

    @classmethod
    def load(cls, path: Path = TABLE) -> MeaningTable:
        import numpy as np  # the `retrieval` extra, with bm25s

        try:
            with np.load(path, allow_pickle=False) as data:
                table = cls(data["tokens"].tolist(), data["vectors"], data["scales"])
        except (
            OSError,
            KeyError,
            ValueError,
            EOFError,
            zipfile.BadZipFile,
        ) as exc:  # missing, cut short, corrupt
            raise _unreadable(path, str(exc)) from None
        if table._vectors.ndim != 2 or len(table._scales) != len(table._vectors):
            raise _unreadable(path, "its vectors and scales differ in number")
        return table

    @property
    def dimensions(self) -> int:
        return int(self._vectors.shape[1])

    def vector(self, text: str) -> list[float]:
        """The mean of the text's token vectors; all zeros when it has no known token."""
        import numpy as np

        ids = self.tokenizer.ids(text)
        if not ids:
            return [0.0] * self.dimensions
        rows = self._vectors[ids].astype(np.float32) * self._scales[ids, None]
        mean: list[float] = rows.mean(axis=0).tolist()
        return mean


def _unreadable(path: Path, why: str) -> ConfigError:
    return ConfigError(
        f"the built-in meaning table {path} cannot be read ({why}): reinstall pes-agent, or set "
        "`retrieval.embeddings: off` to rank tools by their words alone",
        key_path="retrieval.embeddings",
    )


@cache
def builtin_table() -> MeaningTable:
    """The shipped table, read once per process."""
    return MeaningTable.load()


class BuiltinEmbedder:
    """``semantic.Embedder`` over the built-in table: the default ranking by meaning."""

    label = "builtin"
    """How ``TOOLS_OFFERED`` names the ranking: ``bm25+builtin``."""

    def __init__(self, table: MeaningTable | None = None) -> None:
        self._table = table

    @property
    def table(self) -> MeaningTable:
        if self._table is None:
            self._table = builtin_table()
        return self._table

    def vectors(self, texts: Sequence[str]) -> list[list[float]]:
        """Synchronously (a prompt preview): microseconds a text."""
        return [self.table.vector(t) for t in texts]

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self._table is not None and len(texts) < IN_THREAD:
            return self.vectors(texts)
        return await asyncio.to_thread(self.vectors, list(texts))

    async def aclose(self) -> None:
        """Nothing to close: no connection (the ``OpenAIEmbeddings`` counterpart has one)."""
