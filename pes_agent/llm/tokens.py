"""Token counts that work offline: tiktoken when its rank file is on disk, a labelled estimate otherwise.

tiktoken downloads a missing rank file on first use, and with no network that can fail slowly or
hang. So before asking tiktoken for an encoding we look for the cached file ourselves (under
``TIKTOKEN_CACHE_DIR``, ``DATA_GYM_CACHE_DIR`` or the temp-dir default, the places tiktoken reads),
and fall back to ``ceil(chars / 4)`` labelled ``source="estimate"`` when it is not there. Counting
never raises and never touches the network.

The counting rule for messages is the benchmark reference's: the sum of the message contents, no
per-message chat overhead.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pes_agent.llm.types import Message

if TYPE_CHECKING:
    from tiktoken import Encoding

__all__ = [
    "DEFAULT_ENCODING",
    "TokenCount",
    "count_messages",
    "count_tokens",
    "estimate_tokens",
    "reset_token_cache",
    "tokenizer_available",
]

DEFAULT_ENCODING = "o200k_base"

_log = logging.getLogger("pes_agent")

_RANKS_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
# Encodings built from a single rank file, and the file each one reads. Others (gpt2, plugins) are
# loaded without the offline check: we cannot know which files they need.
_RANK_FILES = {
    "o200k_base": "o200k_base",
    "o200k_harmony": "o200k_base",
    "cl100k_base": "cl100k_base",
    "p50k_base": "p50k_base",
    "p50k_edit": "p50k_base",
    "r50k_base": "r50k_base",
}

_lock = threading.Lock()
_loaded: dict[str, Encoding] = {}
# (encoding, cache dir) pairs already found unusable: checked once, warned about once.
_unavailable: set[tuple[str, str]] = set()


@dataclass(frozen=True, kw_only=True)
class TokenCount:
    tokens: int
    source: Literal["tiktoken", "estimate"]
    """``tiktoken``: exact for ``encoding``; ``estimate``: ``ceil(chars / 4)``, no tokenizer loaded."""
    encoding: str


def estimate_tokens(text: str) -> int:
    """Characters / 4, rounded up: the fallback count, and the one scripted runs report."""
    return math.ceil(len(text) / 4) if text else 0


def count_tokens(text: str, *, encoding: str = DEFAULT_ENCODING) -> TokenCount:
    enc = _encoding(encoding)
    if enc is None:
        return TokenCount(tokens=estimate_tokens(text), source="estimate", encoding=encoding)
    return TokenCount(tokens=len(enc.encode_ordinary(text)), source="tiktoken", encoding=encoding)


def count_messages(
    messages: Sequence[Message | Mapping[str, str]], *, encoding: str = DEFAULT_ENCODING
) -> TokenCount:
    """Sum of the contents' counts; accepts ``Message`` objects or ``{role, content}`` dicts."""
    contents = [m.content if isinstance(m, Message) else str(m.get("content", "")) for m in messages]
    enc = _encoding(encoding)
    if enc is None:
        total = sum(estimate_tokens(c) for c in contents)
        return TokenCount(tokens=total, source="estimate", encoding=encoding)
    total = sum(len(enc.encode_ordinary(c)) for c in contents)
    return TokenCount(tokens=total, source="tiktoken", encoding=encoding)


def tokenizer_available(encoding: str = DEFAULT_ENCODING) -> bool:
    """True when counts for ``encoding`` will be exact (loads the encoding if it can)."""
    return _encoding(encoding) is not None


def reset_token_cache() -> None:
    """Forget loaded encodings and earlier failures (tests that switch ``TIKTOKEN_CACHE_DIR``)."""
    with _lock:
        _loaded.clear()
        _unavailable.clear()


def _cache_dir() -> str:
    """Where tiktoken looks for rank files, by tiktoken's own precedence; "" disables its cache."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return os.environ["TIKTOKEN_CACHE_DIR"]
    if "DATA_GYM_CACHE_DIR" in os.environ:
        return os.environ["DATA_GYM_CACHE_DIR"]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _missing_rank_file(encoding: str, cache_dir: str) -> str | None:
    """Why loading ``encoding`` would need the network, or None when it will not."""
    stem = _RANK_FILES.get(encoding)
    if stem is None:
        return None
    if cache_dir == "":
        return "`TIKTOKEN_CACHE_DIR` is empty, which turns tiktoken's cache off"
    url = _RANKS_URL.format(stem)
    path = os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest())
    if not os.path.isfile(path):
        return f"no cached rank file for {stem!r} at {path!r}"
    return None


def _encoding(name: str) -> Encoding | None:
    enc = _loaded.get(name)
    if enc is not None:
        return enc
    with _lock:
        enc = _loaded.get(name)
        if enc is not None:
            return enc
        cache_dir = _cache_dir()
        if (name, cache_dir) in _unavailable:
            return None
        reason = _missing_rank_file(name, cache_dir)
        if reason is None:
            try:
                import tiktoken

                enc = tiktoken.get_encoding(name)
            except Exception as exc:  # noqa: BLE001 -- ValueError, OSError, requests errors...: never crash
                reason = f"tiktoken could not load it ({type(exc).__name__}: {exc})"
        if enc is None:
            _unavailable.add((name, cache_dir))
            _log.warning(
                "token counts for encoding %r are estimates (characters / 4): %s. Point "
                "`TIKTOKEN_CACHE_DIR` at a folder holding tiktoken's cached rank files for exact counts.",
                name,
                reason,
            )
            return None
        _loaded[name] = enc
        return enc
