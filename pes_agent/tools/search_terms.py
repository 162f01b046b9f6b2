"""Words a tool is found by, and the words of a query, in one normal form.

Tool names are identifiers (``billing_get_invoice_pdf``, ``getInvoicePdf``) and queries are prose
("a printable copy of my bill"): both are cut into lower-case words, common English words are
dropped, and plural and verb endings are taken off, so "invoices", "invoicing" and "invoice" meet.
The stemmer is a few suffix rules, not a language model: it has to be fast (every planning call with
many tools runs it) and must not pull in a dependency of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pes_agent.tools.spec import ToolSpec

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
"""Words, splitting ``camelCase`` and ``snake_case``; a run of capitals (``PDF``) stays one word."""

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "after",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "each",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "please",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "get",
        "gets",
        "got",
        "let",
        "lets",
        "need",
        "needs",
        "want",
        "wants",
        "like",
        "give",
        "show",
        "tell",
        "find",
        "me",
        "us",
        "one",
        "two",
    ]
)
"""English glue words, and the verbs every request starts with ("can you get me", "show me"): they
say nothing about which tool is meant, and every tool name with ``get`` would match them."""

_SUFFIXES = (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def stem(word: str) -> str:
    """``invoices`` → ``invoic``, ``invoice`` → ``invoic``: one rule set for tools and queries alike,
    so the stems only need to agree with each other, not to be English."""
    for suffix, replacement in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix) and not word.endswith("ss"):
            word = word[: -len(suffix)] + replacement
            break
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def words(text: str) -> list[str]:
    """The stemmed content words of ``text``, in order (repeats kept: they weigh in BM25)."""
    found = (w.lower() for w in _WORD.findall(text))
    return [stem(w) for w in found if w not in STOPWORDS and len(w) > 1]


def tool_terms(spec: ToolSpec) -> list[str]:
    """What a tool is found by: its name (twice: the name is the most telling text a tool has), its
    description, the names of its arguments, its capabilities and its author's search words."""
    name = words(spec.name)
    return [
        *name,
        *name,
        *words(spec.description),
        *_argument_words(spec),
        *words(" ".join(spec.capabilities)),
        *words(" ".join(spec.search_terms)),
    ]


def _argument_words(spec: ToolSpec) -> Iterable[str]:
    properties = spec.input_schema.get("properties")
    if not isinstance(properties, dict):
        return []
    return words(" ".join(str(name) for name in properties))
