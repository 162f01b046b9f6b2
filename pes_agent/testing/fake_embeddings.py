"""Deterministic embeddings for the fake OpenAI server: words hashed into dimensions.

Texts that share words get similar vectors, texts that share none are orthogonal, so a test can
tell what embeddings add over BM25 only by scripting which words mean the same thing: ``synonyms``
maps words onto one another before hashing (``word_embedder({"christmas": "date", ...})``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping

__all__ = ["DIMENSIONS", "word_embedder", "word_vector"]

DIMENSIONS = 256
_WORD = re.compile(r"[a-z0-9]+")


def word_vector(text: str, synonyms: Mapping[str, str] | None = None) -> list[float]:
    """A bag of the text's lower-cased words, each hashed to one of ``DIMENSIONS`` dimensions."""
    vector = [0.0] * DIMENSIONS
    for word in _WORD.findall(text.lower()):
        word = (synonyms or {}).get(word, word)
        vector[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % DIMENSIONS] += 1.0
    return vector


def word_embedder(synonyms: Mapping[str, str]) -> Callable[[str], list[float]]:
    """``word_vector`` with ``synonyms`` applied: a scripted notion of meaning."""
    table = {k.lower(): v.lower() for k, v in synonyms.items()}
    return lambda text: word_vector(text, table)
