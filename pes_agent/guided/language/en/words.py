"""English words and patterns guided mode reads requests and schemas with: clause breaks, the
words that are never values or tool evidence, units, counts, and the words of argument names that
say what kind of value an argument takes. Closed word classes and words any request or schema uses
of its values; never a word of one tool or one domain. The reader that uses them is ``en``.
"""

from __future__ import annotations

import re

__all__ = [
    "ARTICLES",
    "CLAUSE_BREAK",
    "CLOCK_NAME_WORDS",
    "CONJOINED",
    "DATED_NAME_WORDS",
    "DAY_NAME_WORDS",
    "FLAG_VERBS",
    "FRACTION_WORDS",
    "GENERIC_NAME_WORDS",
    "ID_NAME_WORDS",
    "KIND_NAME_WORDS",
    "LEADING_CONNECTIVE",
    "NAME_PARTICLES",
    "NAMING_WORDS",
    "NEGATIONS",
    "NUMBER_WORDS",
    "ORDINALS",
    "PER_WORDS",
    "PROVENANCE",
    "QUANTITY_WORDS",
    "RATE_WORDS",
    "REGION_WORDS",
    "RELATING",
    "SEQUENCING",
    "SEVERAL",
    "SENT_FROM",
    "SENT_TO",
    "SOURCE_WORDS",
    "SPAN_WORDS",
    "STOPWORDS",
    "STREET_WORDS",
    "TARGET_NAME_WORDS",
    "TARGET_WORDS",
    "TOOL_STOPWORDS",
    "TRAILING_CONNECTIVE",
    "UNITS",
    "VALUE_LINKS",
    "VERB_MARKERS",
    "WHEN_NAME_WORDS",
]

# --- clauses, and words that are never values or tool evidence ------------------------------------

CLAUSE_BREAK = re.compile(
    r"\s*(?:[;.!?](?:\s+|$)|,?\s+and\s+then\s+|,\s*then\s+|\s+then\s+|,?\s+after\s+that,?\s+|,?\s+finally,?\s+"
    r"|,?\s+afterwards,?\s+|,?\s+next,\s+)",
    re.IGNORECASE,
)
LEADING_CONNECTIVE = re.compile(
    r"^(?:(?:and|then|also|finally|next|so|after\s+that|afterwards)\b[\s,]*)+", re.IGNORECASE
)
SEQUENCING = re.compile(r"\b(?:then|after\s+that|afterwards|finally|next)\b", re.IGNORECASE)
"""Words that put one clause after another: calls in turn, not one call said twice."""
TRAILING_CONNECTIVE = re.compile(r"[\s,]+(?:and|or|then)$", re.IGNORECASE)
"""A joining word a clause was cut after ("… the key 'secret_key', and" before "finally …")."""
STOPWORDS = frozenset(
    "a an the and or of in on at to for from by with into onto than then that this these those is are "
    "was were be been it its it's as what which who whom how many much me my you your we our they "
    "their please can could would should will do does did have has had get give tell show find "
    "compute calculate make result results answer value number count word words text need needs want "
    "wants know let often also just i i'm i'd i've i'll them him her us".split()
)
"""Words no argument is made of (the words from "result" to "text" name a step's output, not a
value; the last ones are verbs and adverbs of wanting and asking, which stand between the words of
a thing: "does a monstera need watering")."""


CONJOINED = re.compile(
    r"^(?P<verb>.+?)\s+(?P<head>[a-z]+\s+[a-z]+(?:\s+[a-z]+)?\s+(?:of|in|for|at|on|from))\s+(?P<first>.+?)\s+and\s+"
    r"(?P=head)\s+(?P<second>.+)$",
    re.IGNORECASE,
)
"""One action on two objects said alike: "look up the price of a notebook and the price of a pen". The
words said twice end in a preposition ("the price of"): "a loan amount of $10000 … and a loan term of
36 months" is one loan described twice, not two objects."""

RELATING = re.compile(
    r"\b(?:between|compar\w*|versus|vs|differ\w*|match\w*|merg\w*|combin\w*|join\w*|swap\w*)\b", re.IGNORECASE
)
"""Words of an action on the two objects together: one step, not one per object ("the days between
the start of March and the start of April", "compare the price of X and the price of Y")."""


TOOL_STOPWORDS = frozenset(
    "the and for from with into than then that this these those what which who how many much please "
    "can could would should will does did tell show give get make use result results find fetch "
    "retrieve look its his her their our your you they them she him are was were been has have".split()
)
"""Unlike ``STOPWORDS``, verbs like "count" and "convert" stay: they say which tool is meant. The
request verbs that say only "look something up" (find, fetch, retrieve, look) go: they are in the
names of many lookups and point to none ("Find flights ..." chose ``find_employee``), and so do
pronouns and auxiliaries (a description's "by its title" matched "its price")."""


NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty "
    "hundred thousand million billion dozen half once twice thrice double triple first second third".split()
)
"""Numbers in words: amounts a request states, never what a tool is for (word vectors put "three"
next to "multiply")."""


VALUE_LINKS = frozenset({"of", "is", "at", "to", "for", "with", "as", "by", "=", ":"})
ARTICLES = frozenset({"a", "an", "the", "and", "its", "their", "this", "that"})
"""Words between a quantity's name and its value that say nothing of either ("the title 'X'")."""
"""Words that join a quantity's name to its number: "a bill of $50", "the rate is 5%", "term: 36"."""

NAME_PARTICLES = ("of", "vs", "vs.", "v.", "de", "del", "da", "di", "du", "van", "von", "la", "le", "upon")
"""Lower-case words inside a name ("Battle of Stalingrad", "R vs Adams", "Ludwig van Beethoven")."""

UNITS: dict[str, tuple[str, float]] = {
    **dict.fromkeys(["second", "seconds", "sec", "secs", "s"], ("time", 1.0)),
    **dict.fromkeys(["minute", "minutes", "min", "mins"], ("time", 60.0)),
    **dict.fromkeys(["hour", "hours", "hr", "hrs", "h"], ("time", 3600.0)),
    **dict.fromkeys(["day", "days"], ("time", 86400.0)),
    **dict.fromkeys(["millisecond", "milliseconds", "ms"], ("time", 0.001)),
    **dict.fromkeys(["meter", "meters", "metre", "metres", "m"], ("length", 1.0)),
    **dict.fromkeys(["kilometer", "kilometers", "kilometre", "kilometres", "km"], ("length", 1000.0)),
    **dict.fromkeys(["centimeter", "centimeters", "centimetre", "centimetres", "cm"], ("length", 0.01)),
    **dict.fromkeys(["gram", "grams", "g"], ("mass", 1.0)),
    **dict.fromkeys(["kilogram", "kilograms", "kg", "kgs"], ("mass", 1000.0)),
    **dict.fromkeys(["week", "weeks"], ("time", 604800.0)),
    **dict.fromkeys(["month", "months"], ("calendar", 1.0)),
    **dict.fromkeys(["year", "years"], ("calendar", 12.0)),
    **dict.fromkeys(["cent", "cents", "pence", "penny"], ("money", 0.01)),
    **dict.fromkeys(["dollar", "dollars", "euro", "euros", "$", "€", "£"], ("money", 1.0)),
}
"""Units a quantity is stated in, each with its dimension and its size in that dimension's base: a
value stated in one ("5 minutes") is given in the unit an argument asks for ("in seconds": 300).
Only units that convert by a factor, and no ambiguous ones (miles, pounds, ounces). Months and
years convert to each other only (a month has no fixed number of days); money converts between a
currency and its hundredth ("$86.40" is 8640 cents), never between currencies."""

QUANTITY_WORDS: dict[str, int] = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
"""Counts written as words before a unit ("for a year", "two weeks"): the quantity they state."""


SPAN_WORDS = frozenset("for in within after over under than about around nearly almost only just".split())
"""Words before "a"/"an" and a unit that make it a length of time or an amount ("for a year",
"within an hour"); elsewhere it is a rate ("20 miles a day", "3 meals a week"), no quantity."""

KIND_NAME_WORDS = frozenset(
    "topic type kind cuisine sport genre city country location place language category title author "
    "artist brand color colour department subject species substance vehicle platform game company team "
    "player restaurant hotel name style gender sender recipient destination origin airline".split()
)
"""Words of argument names that ask for a kind or a name of something, never a bare number: "Get 5
latest news on Bitcoin" gives the topic Bitcoin, not 5."""

NAMING_WORDS = frozenset({"name", "names", "surname", "nickname"})
"""Words of an argument's name that ask for a name: a result fills it only from a field named so (a
guest's name is no forecast's summary)."""

WHEN_NAME_WORDS = frozenset(
    "date day time when year month week hour period deadline due birthday birthdate schedule start end "
    "until since timestamp datetime".split()
)
"""Words of an argument's name or description that ask about when: such an argument may take a date
or a clock time the request states, where one of a kind (``KIND_NAME_WORDS``) may not."""

DAY_NAME_WORDS = frozenset("date day birthday birthdate deadline".split())
"""Words of an argument's name that ask for a day (not a clock time, a year or a period)."""

CLOCK_NAME_WORDS = frozenset({"time"})
"""Words of an argument's name that ask for a clock time, unless one of ``DATED_NAME_WORDS`` says a
day comes with it (``start_time`` is a time of day, ``date_time`` is not)."""

DATED_NAME_WORDS = frozenset({"date", "datetime", "timestamp"})
"""Words of an argument's name that ask for a day, whatever else it asks for."""

ID_NAME_WORDS = frozenset({"id", "ids", "identifier", "uuid"})
"""Last words of an argument's name that ask for an identifier (``business_id``, ``courseId``)."""

PER_WORDS = frozenset({"per"})
"""Words of an argument's name that make it a rate (``meals_per_week``): a count, no quantity."""

TARGET_WORDS = frozenset({"in", "into", "to"})
"""Words before a value that ask for a result in it or sent to it ("how much is that in euros",
"email it to sam@…", "into Spanish"), where "50 euros" only says what an amount is in."""

TARGET_NAME_WORDS = frozenset({"to", "target", "destination", "dest"})
"""Words of an argument name for where a value goes (``target_language``, ``to_city``): the value
the request writes after "to" or "into" is its ("translate it into French")."""

SENT_TO = frozenset({"to", "into"})
"""Words before the value an argument named for a target takes ("translate it into French")."""

SENT_FROM = frozenset({"from"})
"""Words before the value an argument named for a source takes ("from English")."""

VERB_MARKERS = frozenset({"to"})
"""Target words that also open a verb ("I want to know"): a lower-case word after them is no
destination; a name or a value is ("to Spanish", "to sam@…")."""

FRACTION_WORDS = frozenset({"decimal", "fraction", "proportion"})
"""Words of a numeric argument's description that say a rate is given as a fraction of one ("The
annual interest rate in decimal form"): "5%" is 0.05 there."""

RATE_WORDS = frozenset({"rate", "percent", "percentage", "yield", "return", "growth", "interest", "discount"})
"""Words of an argument's name or description that make it a rate (a fraction of one, or percent)."""

ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
"""Ordinal words that number an argument (``first_note_frequency``, ``second_note_frequency``)."""

REGION_WORDS = frozenset("state country region province county prefecture".split())
"""Words a description uses for the second half of a place written with its region ("The city and
state, e.g. San Francisco, CA"; "'City, Country' if there is no state")."""

STREET_WORDS = frozenset(
    "street st road rd lane ln avenue ave drive dr way square sq boulevard blvd place pl court ct "
    "terrace crescent close row quay parade highway hwy".split()
)
"""The last words of street names: a number written before such a name is its house number."""

NEGATIONS = frozenset({"not", "no", "without", "don't", "dont", "never", "exclude", "excluding", "except"})
"""Words that turn a flag the request names off ("without details")."""

FLAG_VERBS = frozenset({"include", "show", "use", "enable", "with", "return", "add", "get", "has", "is"})
"""Words of flag names that say how, not what (``include_images``: the images are what is named)."""

SOURCE_WORDS = frozenset({"from", "source", "base"})
"""Words of an argument name for where a value comes from (``from_unit``, ``sourceCurrency``,
``base_currency``)."""

PROVENANCE = frozenset({"from", "by"})
"""Words before a tool's name in an argument's description that say the value comes from that tool
("extracted *from* the Search Airport API", "as returned *by* Find Station")."""

GENERIC_NAME_WORDS = frozenset({"name", "id", "value", "text", "number", "code", "key", "type"})
"""Words of argument names that say nothing about which value they take."""


SEVERAL = re.compile(r"\b(?:them|both|together|the two|each of)\b", re.IGNORECASE)
"""Words that mean several earlier results ("add them together" after two lookups)."""


# --- context, questions, dates, names ------------------------------------------------------------
