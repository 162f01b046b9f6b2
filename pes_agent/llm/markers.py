"""The reply markers of the text protocol, and the text operations built on them.

``sanitize_user_text`` keeps queries from forging markers; ``split_thinking`` and ``cut_block`` are
the tag handling the parser uses.

The parser recognises markers through the patterns defined here, and ``sanitize_user_text`` removes
text matching those same patterns from user input. Sharing the patterns is the point: if the parser
learned a new spelling of a marker that the sanitizer did not remove, a query could forge a plan or
an answer.
"""

from __future__ import annotations

import re

PLAN_START = "---JSON_OUTPUT_START---"
PLAN_END = "---JSON_OUTPUT_END---"
MAIN_START = "<mainContent>"
MAIN_END = "</mainContent>"
UI_START = "<uiMetadata>"
UI_END = "</uiMetadata>"

_I = re.IGNORECASE

PLAN_START_RE = re.compile(r"-{3}\s*JSON_OUTPUT_START\s*-{3}", _I)
PLAN_END_RE = re.compile(r"-{3}\s*JSON_OUTPUT_END\s*-{3}", _I)
MAIN_START_RE = re.compile(r"<\s*mainContent\s*>", _I)
MAIN_END_RE = re.compile(r"<\s*/\s*mainContent\s*>", _I)
UI_START_RE = re.compile(r"<\s*uiMetadata\s*>", _I)
UI_END_RE = re.compile(r"<\s*/\s*uiMetadata\s*>", _I)
THINK_OPEN_RE = re.compile(r"<\s*think(?:ing)?\s*>", _I)
THINK_CLOSE_RE = re.compile(r"<\s*/\s*think(?:ing)?\s*>", _I)

_ALL_MARKERS = (
    PLAN_START_RE,
    PLAN_END_RE,
    MAIN_START_RE,
    MAIN_END_RE,
    UI_START_RE,
    UI_END_RE,
    THINK_OPEN_RE,
    THINK_CLOSE_RE,
)


_ANY_MARKER = re.compile("|".join(f"(?:{p.pattern})" for p in _ALL_MARKERS), _I)


def strip_markers(text: str) -> str:
    """Remove every marker spelling the parser would recognise, until none is left.

    Repeated because removing one marker can join its neighbours into another
    (``<main<think>Content>`` becomes ``<mainContent>``). Every marker has a ``<`` or a ``---`` in
    it, so text with neither (most queries) is returned as it is without running the patterns.
    """
    if "<" not in text and "---" not in text:
        return text
    previous = None
    while previous != text:
        previous = text
        text = _ANY_MARKER.sub("", text)
    return text


def sanitize_user_text(text: str) -> str:
    """Make user text safe to embed in a prompt: it can no longer forge a reply marker."""
    return strip_markers(text)


def split_thinking(text: str) -> tuple[str, str | None]:
    """Separate reasoning-model thinking from the answer: ``(answer, thinking or None)``.

    - Every ``<think>...</think>`` block (also ``<thinking>``) goes to thinking, joined by blank lines.
    - A ``</think>`` with no opening tag before it (servers whose chat template already opened the
      block in the prompt) makes everything before it thinking.
    - A ``<think>`` that never closes makes everything after it thinking: the model did not finish
      thinking (usually cut off), so nothing after the tag is an answer; text before it stays.
    - Stray closing tags left after that are dropped from the answer.
    The answer is stripped of surrounding whitespace.
    """
    if "<" not in text:  # no tag at all (most replies): nothing to split
        return text.strip(), None
    thoughts: list[str] = []
    answer: list[str] = []
    rest = text
    first_open = THINK_OPEN_RE.search(rest)
    first_close = THINK_CLOSE_RE.search(rest)
    if first_close and (first_open is None or first_close.start() < first_open.start()):
        thoughts.append(rest[: first_close.start()])
        rest = rest[first_close.end() :]
    while (opening := THINK_OPEN_RE.search(rest)) is not None:
        answer.append(rest[: opening.start()])
        closing = THINK_CLOSE_RE.search(rest, opening.end())
        if closing is None:
            thoughts.append(rest[opening.end() :])
            rest = ""
            break
        thoughts.append(rest[opening.end() : closing.start()])
        rest = rest[closing.end() :]
    answer.append(rest)
    cleaned = THINK_CLOSE_RE.sub("", "".join(answer))
    thinking = "\n\n".join(t.strip() for t in thoughts if t.strip())
    return cleaned.strip(), thinking or None


def cut_block(text: str, start: re.Pattern[str], end: re.Pattern[str]) -> tuple[str | None, str, str]:
    """``(inside, before, after)`` of the first tagged block; ``inside`` is None when there is none.

    A block whose closing tag never comes runs to the end of the text (a model that forgot it still
    meant everything after the opening tag).
    """
    opening = start.search(text)
    if opening is None:
        return None, text, ""
    closing = end.search(text, opening.end())
    if closing is None:
        return text[opening.end() :], text[: opening.start()], ""
    return text[opening.end() : closing.start()], text[: opening.start()], text[closing.end() :]
