"""Real or stand-in: what a call may draw on (``Grounding``) and values a model writes when it has
no real value (``<url>``, ``your email here``, ``example.com``).

Running a tool with such a value does harm quietly (a mail to nobody, a fetch of a demo page), so the
gate treats it as missing. The test is always on a whole value (a whole string, the host of a URL,
the domain of an address, a whole list element) and never on a substring of free text: "see the
example below" is text, ``example`` alone is a placeholder.

A value that looks like a placeholder but is grounded (the user wrote it, an earlier step returned
it) is a real value: ``Grounding.mentions`` answers that. For a side effect's target,
``target_grounded`` says whether the query and results hold a value of the target's kind at all,
which decides between asking the model (arg-fill) and asking the user.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any
from urllib.parse import urlsplit

from pes_agent.gate.normalize import FieldInfo
from pes_agent.gate.references import as_text

_RESERVED_DOMAINS = ("example.com", "example.org", "example.net")
"""RFC 2606 names kept for documentation; nothing real lives there."""
_RESERVED_TLDS = ("example", "invalid")

_PATTERNS = re.compile(
    r"""
    <(?![^<>]*(?:@|://))[^<>]{1,80}>                # <url>, <recipient email>; not <a@b.io>
    | \{\{[^{}]{1,80}\}\}                           # {{value}}
    | \[(?:insert|your|enter|add)\b[^\[\]]{0,80}\]  # [insert name]
    | (?:your|enter|insert)\b.{0,80}?\bhere         # your value here, enter text here
    | \.{3,} | …                                    # ... on its own
    """,
    re.IGNORECASE | re.VERBOSE | re.DOTALL,
)
_EMAIL = re.compile(r"[^@\s]+@(?P<domain>[^@\s]+)")
_BARE_HOST = re.compile(r"(?:[a-z0-9-]+\.)+[a-z]{2,}(?::\d+)?(?:/\S*)?", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class Grounding:
    """What a call may draw on: the user's query and the results of earlier steps."""

    query: str
    step_outputs: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    """Step id → outputs of its successful tool calls, in call order."""
    step_results: Mapping[str, str] = field(default_factory=dict)
    """Step id → the step's final text."""
    pending_steps: frozenset[str] = frozenset()
    """Plan steps with no results yet: a reference to one is unresolved instead of plain text."""
    output_texts: tuple[str, ...] | None = None
    """The outputs of ``step_outputs`` already rendered as text, when the caller has them."""

    @cached_property
    def text(self) -> str:
        """Query and every result as one text (JSON for structured outputs), for "is it grounded"."""
        parts = [self.query]
        if self.output_texts is not None:
            parts.extend(self.output_texts)
        else:
            parts.extend(as_text(out) or "" for outs in self.step_outputs.values() for out in outs)
        parts.extend(self.step_results.values())
        return "\n".join(parts)

    @cached_property
    def _lower(self) -> str:
        return self.text.lower()

    @cached_property
    def step_ids(self) -> frozenset[str]:
        return frozenset(self.step_outputs) | frozenset(self.step_results) | self.pending_steps

    def mentions(self, value: str) -> bool:
        """Whether ``value`` occurs whole (not inside a longer word) in the text, ignoring case."""
        needle = value.strip().lower()
        if not needle:
            return False
        haystack = self._lower
        word_start, word_end = _is_word(needle[0]), _is_word(needle[-1])
        at = haystack.find(needle)
        while at >= 0:
            end = at + len(needle)
            before_ok = not word_start or at == 0 or not _is_word(haystack[at - 1])
            after_ok = not word_end or end == len(haystack) or not _is_word(haystack[end])
            if before_ok and after_ok:
                return True
            at = haystack.find(needle, at + 1)
        return False


def _is_word(char: str) -> bool:
    """A regex ``\\w`` character: letters and digits of any script, and the underscore."""
    return char.isalnum() or char == "_"


class PlaceholderRules:
    """The configured placeholder words (``gate.placeholders``) plus the built-in shapes."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = frozenset(w.strip().lower() for w in words if w.strip())

    def matches(self, value: str) -> bool:
        """Whether the whole ``value`` reads as a stand-in rather than a real value."""
        text = value.strip()
        if not text:
            return False
        if text.lower() in self.words or _PATTERNS.fullmatch(text):
            return True
        host = reserved_host(text)
        return host is not None


def reserved_host(text: str) -> str | None:
    """The reserved example host or mail domain ``text`` points at, if it is one of those."""
    host = _host_of(text)
    if host is None:
        return None
    host = host.lower().rstrip(".")
    for domain in _RESERVED_DOMAINS:
        if host == domain or host.endswith("." + domain):
            return host
    if host.rsplit(".", 1)[-1] in _RESERVED_TLDS and "." in host:
        return host
    return None


def _host_of(text: str) -> str | None:
    """The host of a URL (``https://x/..``, ``www.x/..``, a bare ``x.com``) or a mail domain."""
    if " " in text:
        return None
    if "://" in text:
        try:
            return urlsplit(text).hostname
        except ValueError:
            return None
    email = _EMAIL.fullmatch(text)
    if email:
        return email.group("domain")
    if _BARE_HOST.fullmatch(text):
        return urlsplit("//" + text).hostname
    return None


_EMAIL_IN_TEXT = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL_IN_TEXT = re.compile(r"\b(?:https?|ftp)://[^\s\"'<>]+", re.IGNORECASE)
_PATH_IN_TEXT = re.compile(r"(?:~|\.{1,2})?/[\w.-]+(?:/[\w.-]+)*|\b[\w-]+(?:/[\w.-]+)*\.[A-Za-z0-9]{1,8}\b")


def target_grounded(target: FieldInfo, grounding: Grounding) -> bool:
    """Could a real value for a side effect's target be taken from the query and results?

    A side effect must never land on a guess, so this answers yes only when something of the
    target's kind is there to take: an allowed value, an email address, a URL, a file path, or a
    match of the property's ``pattern``. A target of no recognisable kind (a name, an id) is never
    treated as grounded: the user is asked.
    """
    allowed = target.allowed()
    if allowed:
        return any(isinstance(v, str) and grounding.mentions(v) for v in allowed)
    kind = _target_kind(f"{target.name} {target.description or ''}", target.format or "")
    if kind is not None:
        return kind.search(grounding.text) is not None
    if target.pattern:
        try:
            return re.search(target.pattern.removeprefix("^").removesuffix("$"), grounding.text) is not None
        except re.error:
            return False
    return False


def _target_kind(name: str, fmt: str) -> re.Pattern[str] | None:
    words = name.lower()
    if fmt in ("email", "idn-email") or "email" in words or "mail" in words:
        return _EMAIL_IN_TEXT
    if fmt in ("uri", "url", "iri", "uri-reference", "iri-reference") or any(
        w in words for w in ("url", "uri", "link", "endpoint", "webhook")
    ):
        return _URL_IN_TEXT
    if fmt == "path" or any(w in words for w in ("path", "file", "dir", "folder")):
        return _PATH_IN_TEXT
    return None
