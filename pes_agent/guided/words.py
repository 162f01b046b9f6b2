"""Words as guided mode compares them: a text's content words, stemmed, and the tools' words a
request's word means (the meaning table). Tool scores, option choices, data flow and the run's
accounting all read texts this one way.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable

from pes_agent.guided.language import language
from pes_agent.guided.language.en import NUMBER_WORDS, STOPWORDS, TOOL_STOPWORDS
from pes_agent.guided.quotes import without_quotes

__all__ = ["COMMON_SHARE", "common_words", "meanings", "meant", "name_words", "stems", "word_stem"]


def meanings(part: str, texts: Iterable[str]) -> tuple[frozenset[str], ...]:
    """For each word of the part that no tool uses, the stems of the tools' words it means: "what
    does it cost" means ``price``, "how long" ``length``, "a night" ``nightly``
    (``language().similar``). A word some tool uses means what it says and is not read further; a
    word counts once however many words it means."""
    return _meanings(without_quotes(part), tuple(texts))


def meant(part: str, texts: Iterable[str]) -> frozenset[str]:
    """All the stems ``meanings`` finds, as one set."""
    return frozenset(s for alike in meanings(part, texts) for s in alike)


@functools.lru_cache(maxsize=4096)
def _meanings(part: str, texts: tuple[str, ...]) -> tuple[frozenset[str], ...]:
    vocabulary = {w for t in texts for w in _surface(t)}
    known = {word_stem(w) for w in vocabulary}
    unknown = [w for w in _surface(part) if word_stem(w) not in known]
    near = language().similar(unknown, vocabulary)
    return tuple(frozenset(word_stem(w) for w in words) for _, words in sorted(near.items()))


@functools.lru_cache(maxsize=8192)
def _surface(text: str) -> frozenset[str]:
    """The text's content words as written (lower-case), for word vectors; stems are for matching."""
    words = re.findall(r"[a-z]+", text.replace("_", " ").casefold())
    return frozenset(
        w
        for w in words
        if len(w) > 2 and w not in TOOL_STOPWORDS and w not in STOPWORDS and w not in NUMBER_WORDS
    )


def stems(text: str) -> list[str]:
    """The text's content words, stemmed, as tool and field names are compared (``price_usd`` →
    ``price``, ``usd``)."""
    return list(_stemmed(text))


@functools.lru_cache(maxsize=8192)
def _stemmed(text: str) -> tuple[str, ...]:
    """Cached: planning compares the same tool texts for every part and candidate. A word written in
    camel case counts as its words and, after them, as itself ("YouTube" is "you", "tube" and
    "youtube", so it still meets a ``youtube_search`` tool)."""
    words: list[str] = []
    for token in re.findall(r"[A-Za-z]+", text):
        split = name_words(token)
        words += split + ([token.casefold()] if len(split) > 1 else [])
    return tuple(word_stem(w) for w in words if len(w) > 2 and w not in TOOL_STOPWORDS)


COMMON_SHARE = 5
"""A word in the texts of more than one tool in this many (and of more than two) is common."""


def common_words(texts: Iterable[Iterable[str]]) -> frozenset[str]:
    """Words (stems) in more than a fifth of the given tools' word sets, and in more than two:
    "calculate" in a catalogue of calculators, "search" in one of search APIs. Said of every tool,
    they point to none in particular."""
    sets = [set(t) for t in texts]
    counts = Counter(w for words in sets for w in words)
    return frozenset(w for w, n in counts.items() if n > max(2, len(sets) // COMMON_SHARE))


def name_words(name: str) -> list[str]:
    """An identifier's words, lower-case: ``SearchHotels``, ``skyId``, ``price_usd`` and
    ``from-unit`` are two words each (a lower-case letter before a capital joins two words)."""
    return re.findall(r"[a-z]+", _CAMEL.sub(r"\1 \2", name).casefold())


_CAMEL = re.compile(r"([a-z])([A-Z])")


def word_stem(word: str) -> str:
    """One word's stem, by the language the requests are read in."""
    return language().stem(word)
