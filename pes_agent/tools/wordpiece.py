"""BERT's uncased WordPiece tokenizer: the tokens the built-in meaning table has vectors for.

The table (``meaning``) was distilled with HuggingFace ``tokenizers`` configured as BERT's uncased
tokenizer (BertNormalizer, BertPreTokenizer, WordPiece). That library would bring
``huggingface-hub`` and its own dependencies (about 30 MB) into every install for what is a
documented, 60-line algorithm; this is that algorithm, held token for token to ``tokenizers``' output
on the catalogue, the labelled queries and edge cases (accents, CJK, emoji, control characters,
over-long words) by ``tests/test_meaning.py`` against ``tests/fixtures/wordpiece.json``.

Steps, as ``tokenizers`` runs them: clean (drop NUL, U+FFFD and control characters, tabs and line
breaks become spaces), space out CJK ideographs, strip accents (NFD without combining marks) and
lowercase; split on white space and punctuation (each punctuation mark is a word); then each word is
matched greedily, longest vocabulary entry first, later pieces prefixed ``##``; a word with no match
(or over 100 characters) is unknown and dropped. ``[PAD]`` written in a text is that token.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

__all__ = ["WordPiece"]

MAX_WORD = 100
"""``max_input_chars_per_word``: a longer word is unknown."""

_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
"""The CJK ideograph blocks BERT puts spaces around (BertNormalizer's ``handle_chinese_chars``)."""


_OTHER = frozenset({"Cc", "Cf", "Cs", "Co"})
"""Control, format, surrogate and private-use characters: dropped (tabs and line breaks become spaces
instead). Not unassigned ones: ``tokenizers`` keeps those, so their word is unknown."""


UNKNOWN = "[UNK]"
_SPECIAL = re.compile(r"(\[PAD\]|\[UNK\])")
"""The table's special tokens, matched in the raw text before anything else (as ``tokenizers`` does
with its added tokens); ``[UNK]`` is then dropped like any unknown word."""


def _cjk(code: int) -> bool:
    return any(low <= code <= high for low, high in _CJK)


def _punctuation(char: str) -> bool:
    """ASCII punctuation (which includes ``$+<=>^`|~``) or a Unicode punctuation category."""
    return (char.isascii() and not char.isalnum() and char.isprintable() and not char.isspace()) or (
        unicodedata.category(char).startswith("P")
    )


_ASCII_CLEAN = {code: (" " if chr(code) in "\t\n\r" else None) for code in (*range(0x20), 0x7F)}
_ASCII_WORDS = re.compile(r"[a-z0-9]+|[^a-z0-9 ]")
"""ASCII text (tool descriptions, most queries) takes a fast path with the same result: control
characters dropped, tabs and line breaks spaces, lowercased; words are letter-digit runs and each
other visible character (all ASCII punctuation to BERT)."""


def _normal(text: str) -> str:
    """BertNormalizer: cleaned, CJK spaced out, accents stripped, lowercased (character by character,
    as ``tokenizers`` does: a final sigma stays σ)."""
    if text.isascii():
        return text.translate(_ASCII_CLEAN).lower()
    out: list[str] = []
    for char in text:
        if char not in "\t\n\r" and (char in "\x00\ufffd" or unicodedata.category(char) in _OTHER):
            continue
        if char.isspace():
            out.append(" ")
        elif _cjk(ord(char)):
            out.append(f" {char} ")
        else:
            out.append(char)
    decomposed = unicodedata.normalize("NFD", "".join(out))
    return "".join(c.lower() for c in decomposed if unicodedata.category(c) != "Mn")


def _words(text: str) -> list[str]:
    """BertPreTokenizer: split on white space, each punctuation mark a word of its own."""
    if text.isascii():
        return _ASCII_WORDS.findall(text)
    words: list[str] = []
    for chunk in text.split():
        start = 0
        for i, char in enumerate(chunk):
            if _punctuation(char):
                if i > start:
                    words.append(chunk[start:i])
                words.append(char)
                start = i + 1
        if start < len(chunk):
            words.append(chunk[start:])
    return words


class WordPiece:
    """Texts to token ids of a fixed vocabulary (unknown words left out, as the table's distiller did)."""

    def __init__(self, vocabulary: Mapping[str, int]) -> None:
        self._ids = vocabulary
        self._longest = max((len(t) for t in vocabulary), default=0)

    def ids(self, text: str) -> list[int]:
        ids: list[int] = []
        for i, part in enumerate(_SPECIAL.split(text)):  # odd parts: a special token, as written
            if i % 2:
                ids += [self._ids[part]] if part in self._ids and part != UNKNOWN else []
            else:
                ids += [i for word in _words(_normal(part)) for i in self._pieces(word)]
        return ids

    def _pieces(self, word: str) -> list[int]:
        if len(word) > MAX_WORD:
            return []
        pieces: list[int] = []
        start = 0
        while start < len(word):
            prefix = "##" if start else ""
            for end in range(min(len(word), start + self._longest), start, -1):
                found = self._ids.get(prefix + word[start:end])
                if found is not None:
                    pieces.append(found)
                    start = end
                    break
            else:
                return []  # one unmatched piece makes the whole word unknown
        return pieces
