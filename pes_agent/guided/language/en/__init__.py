"""English, as guided mode reads it: context sentences, dates, times, names, currencies.

Closed word classes (determiners, pronouns, month names, ordinals) and the words any request or
schema uses of its values (units, currencies, "state" and "country" of a place, "decimal" of a
rate): never a word of one tool or one domain, so nothing here knows a tool or a benchmark. The
word lists other modules read are in ``words`` and re-exported here: ``pes_agent.guided.language.en``
is still the one place English lives; the split keeps each file to one idea (lists; the reader).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection

from pes_agent.guided.language.base import Coded, Counted, DateSpan, TimeSpan
from pes_agent.guided.language.en.asked import back_words, of_words
from pes_agent.guided.language.en.clock import clock_times
from pes_agent.guided.language.en.words import (
    ARTICLES,
    CLAUSE_BREAK,
    CLOCK_NAME_WORDS,
    CONJOINED,
    DATED_NAME_WORDS,
    DAY_NAME_WORDS,
    FLAG_VERBS,
    FRACTION_WORDS,
    GENERIC_NAME_WORDS,
    ID_NAME_WORDS,
    KIND_NAME_WORDS,
    LEADING_CONNECTIVE,
    NAME_PARTICLES,
    NAMING_WORDS,
    NEGATIONS,
    NUMBER_WORDS,
    ORDINALS,
    PER_WORDS,
    PROVENANCE,
    QUANTITY_WORDS,
    RATE_WORDS,
    REGION_WORDS,
    RELATING,
    SENT_FROM,
    SENT_TO,
    SEQUENCING,
    SEVERAL,
    SOURCE_WORDS,
    SPAN_WORDS,
    STOPWORDS,
    STREET_WORDS,
    TARGET_NAME_WORDS,
    TARGET_WORDS,
    TOOL_STOPWORDS,
    TRAILING_CONNECTIVE,
    UNITS,
    VALUE_LINKS,
    VERB_MARKERS,
    WHEN_NAME_WORDS,
)
from pes_agent.guided.language.similar import similar_words

__all__ = [
    "ARTICLES",
    "CLAUSE_BREAK",
    "CONJOINED",
    "GENERIC_NAME_WORDS",
    "ENGLISH",
    "KIND_NAME_WORDS",
    "LEADING_CONNECTIVE",
    "TRAILING_CONNECTIVE",
    "RELATING",
    "SEQUENCING",
    "SEVERAL",
    "FLAG_VERBS",
    "NAME_PARTICLES",
    "NEGATIONS",
    "SENT_FROM",
    "SENT_TO",
    "SOURCE_WORDS",
    "PROVENANCE",
    "VALUE_LINKS",
    "STOPWORDS",
    "STREET_WORDS",
    "UNITS",
    "QUANTITY_WORDS",
    "SPAN_WORDS",
    "TOOL_STOPWORDS",
    "FRACTION_WORDS",
    "ORDINALS",
    "RATE_WORDS",
    "REGION_WORDS",
    "NAMING_WORDS",
    "TARGET_NAME_WORDS",
    "TARGET_WORDS",
    "VERB_MARKERS",
    "WHEN_NAME_WORDS",
    "DAY_NAME_WORDS",
    "CLOCK_NAME_WORDS",
    "DATED_NAME_WORDS",
    "ID_NAME_WORDS",
    "PER_WORDS",
    "NUMBER_WORDS",
    "English",
]

_COUNT = re.compile(
    rf"(?<![\w-])(?:{'|'.join(w for w, n in QUANTITY_WORDS.items() if n > 1)})"
    rf"(?!\w)(?!-(?!(?:{'|'.join(w for w in UNITS if len(w) > 2)})\b))",
    re.IGNORECASE,
)
"""A count from two up, as a word of its own or joined to a unit ("a six-day pass", "a twelve-hour
shift"); "two-factor" is no count."""

_GREETINGS = frozenset("hi hello hey dear greetings".split())
"""Words a message opens with before what it says: "Hi, my router is dead" states, "Hello, book a
table" asks; the word after them tells."""
_CONTEXT_OPENERS = frozenset(
    "a an the our my his her their its this these those there we he she they it i'm we're"
    " it's it’s that's that’s there's there’s they're they’re".split()
)
"""A sentence opening with a determiner or a subject pronoun states something ("A cake needs 3
pounds of flour.", "Our team flies to Portugal next week.", "It's for our book club."); a request
opens with its action or a question word. ("I" is left out: "I need the weather in Oslo" asks.)"""

_ASKING = re.compile(r"\b(?:could|can|would|will)\s+you\b|\bplease\b", re.IGNORECASE)
"""A request inside a sentence that opens as a statement: "My dad is paying, so please email …"."""

_PAST = re.compile(r"[a-z]+ed|did|was|were|had|made|took|gave|went|came|met|paid|bought|found|sent|told|said")
"""A verb in the past tense: the regular ones, and the irregular ones a request's context uses."""


def _named_subject(text: str) -> bool:
    """A sentence whose subject is a name of two words or more, then a verb in the past ("Ana-Lucía
    Gómez looked after our boys", "Siobhán Ní Bhriain did my crown"): it says what happened, it asks
    nothing. (An action's capitalised verb before a name is followed by its object: "Email Omar
    Haddad the minutes".)"""
    words = text.split()
    lead = 0
    while (
        lead < min(len(words), 4)
        and words[lead][:1].isupper()
        and words[lead] != "I"  # the pronoun is no name ("Last Saturday I met …")
        and not words[lead].endswith(("'s", "’s"))
    ):
        lead += 1
    return 2 <= lead < len(words) and _PAST.fullmatch(words[lead]) is not None


_HOW_MUCH = re.compile(r"\bhow\s+(?:much|many)\b", re.IGNORECASE)
_WHAT = re.compile(r"\bwhat\b", re.IGNORECASE)
_AMOUNT_VERB = re.compile(r"\b(?:costs?|comes?\s+to)\b", re.IGNORECASE)
"""A question for an amount or a count: "how much", "how many", "what would … cost / come to"
(read apart, so that a long text is read once)."""

_QUESTION_OPENERS = frozenset(
    ["what", "what's", "whats", "which", "who", "whom", "whose", "when", "where", "why", "how"]
    + ["is", "are", "was", "were", "do", "does", "did", "can", "could", "will", "would", "has", "have"]
)
"""Words a question opens with (its "?" may be missing in a clause split off a longer request): the
question words, and the auxiliaries a yes-or-no question opens with ("Can I borrow ...", "Is it
raining ...")."""

_MONTHS = {
    name: i + 1
    for i, names in enumerate(
        "january jan|february feb|march mar|april apr|may|june jun|july jul|august aug|"
        "september sep sept|october oct|november nov|december dec".split("|")
    )
    for name in names.split()
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_MONTH_OF_YEAR = re.compile(rf"\b(?P<mname>{_MONTH})\.?,?\s+{_YEAR}\b", re.IGNORECASE)
"""A month of a year: "January 2026", "Feb. 2025" (a whole date is read first)."""
_DATE_FORMS = [
    re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})\b"),
    re.compile(r"\b(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<year>\d{4})\b"),
    re.compile(rf"\b(?P<mname>{_MONTH})(?:\.\s*|\s+){_DAY},?\s*{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?(?P<mname>{_MONTH})\.?,?\s+{_YEAR}\b", re.IGNORECASE),
]
_RANGE_START = re.compile(
    rf"\b(?P<start>(?P<mname>{_MONTH})\.?\s+{_DAY})\s*(?:to|until|till|through|-|–|and)\s+(?P<end>(?:{_MONTH})\b)",
    re.IGNORECASE,
)
"""A day written without its year, opening a range whose end gives one ("April 3rd to April 5th 2023")."""
_CURRENCY_NAMES = {
    "dollar": "USD", "us dollar": "USD", "u.s. dollar": "USD", "american dollar": "USD", "buck": "USD",
    "euro": "EUR", "pound": "GBP", "british pound": "GBP", "pound sterling": "GBP", "sterling": "GBP",
    "pounds sterling": "GBP", "yen": "JPY", "japanese yen": "JPY", "yuan": "CNY", "chinese yuan": "CNY",
    "renminbi": "CNY", "rupee": "INR", "indian rupee": "INR", "canadian dollar": "CAD",
    "australian dollar": "AUD", "new zealand dollar": "NZD", "hong kong dollar": "HKD",
    "singapore dollar": "SGD", "swiss franc": "CHF", "franc": "CHF", "mexican peso": "MXN", "peso": "MXN",
    "korean won": "KRW", "south korean won": "KRW", "ruble": "RUB", "rouble": "RUB", "russian ruble": "RUB",
    "brazilian real": "BRL", "swedish krona": "SEK", "krona": "SEK", "norwegian krone": "NOK",
    "danish krone": "DKK", "south african rand": "ZAR", "turkish lira": "TRY", "lira": "TRY",
    "zloty": "PLN", "polish zloty": "PLN", "shekel": "ILS", "israeli shekel": "ILS", "dirham": "AED",
    "baht": "THB", "thai baht": "THB",
}  # fmt: skip
"""Currencies by their English names (the singular; a plural adds s or es): the longest name read
first ("Canadian dollars" is CAD, "dollars" alone USD). Names that are common words alone ("won",
"real", "rand") count only with their country's word."""
_CURRENCY_SYMBOLS = {"US$": "USD", "$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "₩": "KRW"}
_CURRENCY = re.compile(
    r"(?<![\w.])(?:"
    + "|".join(re.escape(n) + "(?:e?s)?" for n in sorted(_CURRENCY_NAMES, key=len, reverse=True))
    + r")(?![\w])|(?:"
    + "|".join(re.escape(s) for s in sorted(_CURRENCY_SYMBOLS, key=len, reverse=True))
    + r")(?=\s?\d)|\b(?:"
    + "|".join(sorted(set(_CURRENCY_NAMES.values())))
    + r")\b",
    re.IGNORECASE,
)
"""A currency named: by name ("Canadian dollars", "euros"), by symbol before an amount ("£20"), or
by its code written in capitals ("JPY")."""
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
_FIRST_PERSON = re.compile(
    r"^(?:I(?:['’](?:m|d|ve|ll))?\s+)+|(?:\s+I['’](?:m|d|ve|ll))+$|^I(?:['’](?:m|d|ve|ll))?$"
)
"""The pronoun "I" (capitalised wherever it stands) opening a capitalised run, and its contractions
at either end: "I'm Zofia Wójcik-Nowak" names Zofia Wójcik-Nowak, "I'd" names no one. A bare "I"
closing a run is a numeral of the name ("World War I", "Elizabeth I"), not the pronoun."""
_EXAMPLE = re.compile(
    r"\b(?:such as|e\.g\.,?|for example,?|for instance,?|like)\s+[\"'`]?([^\s\"'`,;()]+)", re.IGNORECASE
)
"""A value a description gives as an example: "such as Europe/Paris", "e.g. P-1234"."""
_QUOTED_VALUE = re.compile(r"(?<!\w)'([^'\n]{1,40})'(?!\w)|\"([^\"\n]{1,40})\"|`([^`\n]{1,40})`")
_EXAMPLE_LIST = re.compile(
    r"\b(?:such as|e\.g\.?|eg|for example|for instance|like|supports|either|one of)[:,]?\s+"
    r"([^.;()!?]{1,120})",
    re.IGNORECASE,
)
_NOT_A_VALUE = STOPWORDS | {"etc", "etc."}
_LIST_BREAK = re.compile(r"\s*,\s*|\s+or\s+|\s+and\s+|\s+etc\b\.?", re.IGNORECASE)


class English:
    def is_context(self, part: str) -> bool:
        text = part.strip()
        if not text or text.endswith("?"):
            return False
        words = [w.casefold().strip(",!") for w in text.split()]
        while len(words) > 1 and words[0] in _GREETINGS:  # "Hi, my internet is down": a statement
            words.pop(0)
        if _ASKING.search(text):  # "She doesn't do email, so could you text it to her …": it asks
            return False
        return words[0] in _CONTEXT_OPENERS or _named_subject(text)

    def is_question(self, part: str) -> bool:
        text = part.strip()
        first = text.split()[0].casefold() if text else ""
        return text.endswith("?") or first in _QUESTION_OPENERS

    def asks_amount(self, sentence: str) -> bool:
        return bool(_HOW_MUCH.search(sentence) or (_WHAT.search(sentence) and _AMOUNT_VERB.search(sentence)))

    def dates(self, text: str) -> list[DateSpan]:
        found: list[tuple[int, DateSpan]] = []
        taken = bytearray(len(text))  # the characters a date already covers: linear in long outputs
        for form in _DATE_FORMS:
            for match in form.finditer(text):
                if taken[match.start()]:
                    continue
                day = _day(match)
                if day is not None:
                    taken[match.start() : match.end()] = b"\x01" * (match.end() - match.start())
                    found.append((match.start(), DateSpan(text=match.group(0), iso=day.isoformat())))
        starts = {at: span for at, span in found}
        for match in _RANGE_START.finditer(text):  # "from April 3rd to April 5th 2023": the year is both's
            end = starts.get(match.start("end"))
            if end is not None and not taken[match.start()]:
                month, day_of = _MONTHS[match["mname"].casefold()], int(match["day"])
                try:
                    start = dt.date(int(end.iso[:4]), month, day_of)
                except ValueError:
                    continue
                found.append((match.start(), DateSpan(text=match.group("start"), iso=start.isoformat())))
        return [span for _, span in sorted(found, key=lambda f: f[0])]

    def times(self, text: str) -> list[TimeSpan]:
        return clock_times(text)

    def currencies(self, text: str) -> list[Coded]:
        out = []
        for match in _CURRENCY.finditer(text):
            written = match.group(0)
            if written.isalpha() and written.isupper() and len(written) == 3:
                out.append(Coded(text=written, code=written))
                continue
            if written in _CURRENCY_SYMBOLS:
                out.append(Coded(text=written, code=_CURRENCY_SYMBOLS[written]))
                continue
            name = written.casefold()
            code = next(
                (_CURRENCY_NAMES[n] for n in (name, name[:-1], name[:-2]) if n in _CURRENCY_NAMES), None
            )
            if code is not None:
                out.append(Coded(text=written, code=code))
        return out

    def counts(self, text: str) -> list[Counted]:
        return [
            Counted(text=m.group(0), value=QUANTITY_WORDS[m.group(0).casefold()], start=m.start())
            for m in _COUNT.finditer(text)
        ]

    def months(self, text: str) -> list[DateSpan]:
        taken = [range(m.start(), m.end()) for form in _DATE_FORMS for m in form.finditer(text)]
        return [
            DateSpan(text=m.group(0), iso=f"{m['year']}-{_MONTHS[m['mname'].casefold()]:02d}")
            for m in _MONTH_OF_YEAR.finditer(text)
            if not any(m.start() in r for r in taken)
        ]

    def ask_of(self, sentence: str) -> str:
        match = _ASKING.search(sentence)
        if match is None:
            return sentence
        before, rest = sentence[: match.start()].strip(" ,"), sentence[match.end() :].strip(" ,")
        # only a request with words after something said first ("How much is it, please?" asks the
        # question)
        if not before or not re.search(r"[^\W\d_]{2,}", rest):
            return sentence
        return rest

    def back_words(self, text: str) -> list[str]:
        return back_words(text)

    def of_words(self, text: str) -> list[str]:
        return of_words(text)

    def examples(self, description: str) -> list[str]:
        return [m.group(1).rstrip(".:") for m in _EXAMPLE.finditer(description)]

    def mentioned_values(self, description: str) -> list[str]:
        found = [next(g for g in m.groups() if g) for m in _QUOTED_VALUE.finditer(description)]
        for listing in _EXAMPLE_LIST.finditer(_QUOTED_VALUE.sub(" ", description)):
            found += [v.strip(" '\"`") for v in _LIST_BREAK.split(listing.group(1))]
        kept = [v.strip() for v in found if v.strip() and len(v.split()) <= 4]
        return list(
            dict.fromkeys(v for v in kept if any(w not in _NOT_A_VALUE for w in v.casefold().split()))
        )

    def name_core(self, name: str) -> str:
        return _POSSESSIVE.sub("", _FIRST_PERSON.sub("", name.strip()))

    def similar(self, words: Collection[str], vocabulary: Collection[str]) -> dict[str, tuple[str, ...]]:
        """From the built-in meaning table (``similar``): an English model's word vectors."""
        return similar_words(words, vocabulary)

    def stem(self, word: str) -> str:
        """A crude suffix strip: "words"/"word", "converted"/"convert", "counting"/"count" meet, and
        a silent final e goes from five letters on, so "square"/"squared" and "price"/"priced" meet
        too; a double s is no plural ("pass"/"passes"); "-tion" and "-able" go where five letters
        stay, so "adoption", "adoptable" and "adopt" meet ("station", "suitable" stay whole)."""
        if word.endswith(("ses", "xes", "zes", "ches", "shes")) and len(word) > 5:
            return word[:-2]  # boxes -> box; but prices -> price below
        for suffix in (
            "ations",
            "ation",
            "tions",
            "tion",
            "ables",
            "able",
            "ings",
            "ing",
            "ers",
            "er",
            "ed",
            "s",
        ):
            least = {"tion": 4, "tions": 4, "able": 5, "ables": 5}.get(suffix, 3)  # no "stat", "suit"
            if word.endswith(suffix) and len(word) - len(suffix) >= least and not word.endswith("ss"):
                word = word[: -len(suffix) + (suffix.startswith("t"))]  # "adoption"/"adopt"
                break
        return word[:-1] if word.endswith("e") and len(word) > 4 else word


def _day(match: re.Match[str]) -> dt.date | None:
    """The day a date match names; slashes read month first (US) unless the first number cannot be
    a month ("25/12/2024")."""
    groups = match.groupdict()
    try:
        year = int(groups["year"])
        if groups.get("mname"):
            month, day = _MONTHS[groups["mname"].casefold()], int(groups["day"])
        elif groups.get("a") is not None:
            a, b = int(groups["a"]), int(groups["b"])
            month, day = (a, b) if a <= 12 else (b, a)
        else:
            month, day = int(groups["month"]), int(groups["day"])
        return dt.date(year, month, day)
    except (ValueError, KeyError):
        return None


ENGLISH = English()
