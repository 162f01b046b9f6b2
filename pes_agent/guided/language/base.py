"""The protocol a language implements for guided mode, and the values it returns."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Coded", "DateSpan", "Language", "TimeSpan"]


@dataclass(frozen=True, kw_only=True)
class DateSpan:
    """A date as the request wrote it, and the same day as ISO 8601 (``2024-01-15``)."""

    text: str
    iso: str


@dataclass(frozen=True, kw_only=True)
class TimeSpan:
    """A clock time as the request wrote it, and the same time on the 24-hour clock (``20:00``)."""

    text: str
    iso: str


@dataclass(frozen=True, kw_only=True)
class Coded:
    """A thing the request names in words, and its standard code ("Canadian dollars", ``CAD``)."""

    text: str
    code: str


@dataclass(frozen=True, kw_only=True)
class Counted:
    """A count the request writes in words, and its value ("three children": three, 3)."""

    text: str
    value: int
    start: int
    """Where ``text`` starts in the text read: the word after it is what it counts, and a count
    written twice ("two rooms for two adults") counts two things."""


class Language(Protocol):
    def is_context(self, part: str) -> bool:
        """Whether a sentence only gives context ("A tent weighs 4 pounds.") rather than asking."""
        ...

    def is_question(self, part: str) -> bool:
        """Whether a sentence asks for something to be found ("What is the weather in Oslo?")."""
        ...

    def asks_amount(self, sentence: str) -> bool:
        """Whether a sentence asks for an amount or a count ("How much would that cost?", "What would
        two passes come to?"): a number answers it."""
        ...

    def dates(self, text: str) -> list[DateSpan]:
        """The whole dates the text writes, in order ("01/15/2024", "18 March 2025")."""
        ...

    def currencies(self, text: str) -> list[Coded]:
        """The currencies the text names, in order, each as written and as its ISO 4217 code
        ("500 US dollars" → USD, "in euros" → EUR, "£20" → GBP, "JPY" → JPY)."""
        ...

    def counts(self, text: str) -> list[Counted]:
        """The counts the text writes in words, in order ("two adults and three children" → 2,
        3): not "one" or "a", which say more often which than how many."""
        ...

    def months(self, text: str) -> list[DateSpan]:
        """The months of a year the text writes ("January 2026"), with ISO's ``2026-01``."""
        ...

    def times(self, text: str) -> list[TimeSpan]:
        """The clock times the text writes, whole and in order ("9:00pm", "10:00 AM", "7 PM", "14:30"),
        each also as ``HH:MM`` on the 24-hour clock (``HH:MM:SS`` when it gives seconds)."""
        ...

    def ask_of(self, sentence: str) -> str:
        """The request a sentence makes after opening as a statement ("She doesn't do email, so
        could you text it to her": text it to her), else the sentence."""
        ...

    def back_words(self, text: str) -> list[str]:
        """Words the text uses for a thing already found ("that amount", "the same date"): the
        value is an earlier result's, not one to look up anew."""
        ...

    def of_words(self, text: str) -> list[str]:
        """Words the text uses as something *of* something else: "the capital of Japan", "Japan's
        capital", "its price", "Lena Brook's start date" give capital, price, start date. Such a
        word asks for a value to be found, not one the request holds."""
        ...

    def name_core(self, name: str) -> str:
        """A name without the grammar around it ("Lena Brook's" → "Lena Brook", "I'm Zofia Nowak"
        → "Zofia Nowak")."""
        ...

    def stem(self, word: str) -> str:
        """A word's stem, so that forms of one word meet ("prices"/"price", "counting"/"count")."""
        ...

    def similar(self, words: Collection[str], vocabulary: Collection[str]) -> dict[str, tuple[str, ...]]:
        """For each of ``words``, the words of ``vocabulary`` that mean alike ("cost" → "price",
        "long" → "length"), closest first; a word with none is left out."""
        ...

    def examples(self, description: str) -> list[str]:
        """The example values a description gives ("an IANA time zone such as Europe/Paris" gives
        Europe/Paris), as written."""
        ...

    def mentioned_values(self, description: str) -> list[str]:
        """Every value a description names for its argument, as written: quoted ones ("'gas' refers
        to a gasoline vehicle", "either 'summary' or 'full'") and those it lists as examples ("e.g.
        Living room, Bathroom etc.", "such as kitchen or bathroom")."""
        ...
