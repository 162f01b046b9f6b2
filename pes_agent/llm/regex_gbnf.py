"""A JSON Schema ``pattern`` as a GBNF expression, for the regex subset tool schemas use.

Supported: literals and escapes (``\\d \\w \\s \\.``), character classes (``[a-z0-9_-]``, negated),
``.``, groups (``(...)``, ``(?:...)``), alternation, quantifiers ``? * + {m} {m,} {m,n}``, and the
anchors ``^``/``$`` at the ends (a JSON Schema pattern is a search: an unanchored side gets any
text around the match). Anything else (look-around, back-references, ``\\b``) raises
``RegexUnsupported`` and the caller falls back to a bounded free string, which the gate's
validation still judges.

Characters a JSON string cannot hold raw (``"``, ``\\``, controls) are left out of classes, since
the grammar writes the string's characters unescaped.
"""

from __future__ import annotations

__all__ = ["RegexUnsupported", "regex_to_gbnf"]


RegexUnsupported = ValueError
"""Raised for a construct this translation does not cover (a plain ``ValueError``: every exception
class of pes-agent lives in ``pes_agent.errors``, and this one never leaves the grammar code)."""


_CLASS_ESCAPES = {"d": "0-9", "w": "a-zA-Z0-9_", "s": " \\t"}
_NEGATED_ESCAPES = {"D": "0-9", "W": "a-zA-Z0-9_", "S": " \\t"}
_EXCLUDED = '"\\\\\\x00-\\x1f'
"""Never inside the string's raw characters (see the module docstring)."""


def regex_to_gbnf(pattern: str, max_repeat: int = 400) -> str:
    """A GBNF expression matching exactly the strings the anchored ``pattern`` matches (unbounded
    repetitions capped at ``max_repeat``)."""
    starts = pattern.startswith("^")
    ends = pattern.endswith("$") and not pattern.endswith("\\$")
    parser = _Parser(pattern[int(starts) : len(pattern) - int(ends)], max_repeat)
    out = parser.alternation()
    if parser.at < len(parser.text):
        raise RegexUnsupported(f"unexpected {parser.text[parser.at]!r} at {parser.at}")
    around = f"[^{_EXCLUDED}]{{0,{max_repeat}}}"  # an unanchored side: any text may stand there
    return " ".join(p for p in (None if starts else around, f"({out})", None if ends else around) if p)


class _Parser:
    def __init__(self, text: str, max_repeat: int) -> None:
        self.text = text
        self.at = 0
        self.max_repeat = max_repeat

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def take(self) -> str:
        ch = self.peek()
        self.at += 1
        return ch

    def alternation(self) -> str:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.take()
            branches.append(self.sequence())
        return " | ".join(b or '""' for b in branches)

    def sequence(self) -> str:
        parts = []
        while self.peek() and self.peek() not in "|)":
            parts.append(self.quantified(self.atom()))
        return " ".join(parts)

    def atom(self) -> str:
        ch = self.take()
        if ch == "(":
            if self.text.startswith("?:", self.at):
                self.at += 2
            elif self.peek() == "?":
                raise RegexUnsupported("look-around and named groups are not supported")
            inner = self.alternation()
            if self.take() != ")":
                raise RegexUnsupported("unbalanced parenthesis")
            return f"({inner})"
        if ch == "[":
            return self.char_class()
        if ch == ".":
            return f"[^{_EXCLUDED}]"
        if ch == "\\":
            return self.escape(in_class=False)
        if ch in "*+?{^$":
            raise RegexUnsupported(f"{ch!r} at {self.at - 1} is not supported here")
        return _char_literal(ch)

    def escape(self, *, in_class: bool) -> str:
        ch = self.take()
        if not ch:
            raise RegexUnsupported("pattern ends with a backslash")
        if ch in _CLASS_ESCAPES:
            return _CLASS_ESCAPES[ch] if in_class else f"[{_CLASS_ESCAPES[ch]}]"
        if ch == "-" and in_class:
            raise RegexUnsupported("an escaped dash inside a class")
        if ch in _NEGATED_ESCAPES and not in_class:
            return f"[^{_NEGATED_ESCAPES[ch]}{_EXCLUDED}]"
        if ch.isalnum():
            raise RegexUnsupported(f"escape \\{ch} is not supported")
        return _class_char(ch) if in_class else _char_literal(ch)

    def char_class(self) -> str:
        negated = self.peek() == "^"
        if negated:
            self.take()
        body, dash = "", ""
        first = True
        while True:
            ch = self.take()
            if not ch:
                raise RegexUnsupported("unclosed character class")
            if ch == "]" and not first:
                break
            first = False
            if ch == "\\":
                body += self.escape(in_class=True)
            elif ch == "-" and body and self.peek() not in ("]", ""):
                body += "-"  # a range
            elif ch == "-":
                dash = "-"  # a literal dash: GBNF reads it as one only last in the class
            elif ch in '"\\' or ord(ch) < 0x20:
                continue  # cannot appear raw in the JSON string; see the module docstring
            else:
                body += _class_char(ch)
        body += dash
        if negated:
            return f"[^{body}{_EXCLUDED}]"
        return f"[{body}]"

    def quantified(self, atom: str) -> str:
        ch = self.peek()
        if ch in ("?", "*", "+"):
            self.take()
            low, high = {"?": (0, 1), "*": (0, self.max_repeat), "+": (1, self.max_repeat)}[ch]
        elif ch == "{":
            low, high = self.braces()
        else:
            return atom
        if self.peek() in ("?", "+"):  # lazy / possessive: same language
            self.take()
        return f"{atom}{{{low},{high}}}"

    def braces(self) -> tuple[int, int]:
        end = self.text.find("}", self.at)
        if end < 0:
            raise RegexUnsupported("unclosed repetition")
        spec = self.text[self.at + 1 : end]
        self.at = end + 1
        lo, sep, hi = spec.partition(",")
        try:
            low = int(lo)
            high = low if not sep else (int(hi) if hi.strip() else max(low, self.max_repeat))
        except ValueError:
            raise RegexUnsupported(f"repetition {{{spec}}} is not a count") from None
        return low, high


def _char_literal(ch: str) -> str:
    if ch == '"' or ch == "\\" or ord(ch) < 0x20:
        raise RegexUnsupported("a quote, backslash or control character cannot be written raw")
    return f'"{ch}"'


def _class_char(ch: str) -> str:
    """A class member; GBNF escapes only brackets (``-`` is placed last by the caller)."""
    return "\\" + ch if ch in "[]" else ch
