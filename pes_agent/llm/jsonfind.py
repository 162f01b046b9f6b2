"""Find JSON values in free text: prose, fences, markers and all.

Why a scanner and not a regex: a greedy ``\\{.*\\}`` swallows two objects and the prose between them,
a lazy one stops at the first ``}`` inside a string, and neither can tell a finished object from one
cut off mid-way. The scanner walks brackets while skipping strings (escapes included), so it knows
where each value ends, or that it never does.

Single-quoted strings are recognised only where a JSON value or key may start (after ``{ [ , :``),
so an apostrophe in ``it's`` inside a value never opens a string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

ScanStatus = Literal["closed", "unclosed", "mismatched"]

_CLOSERS = {"{": "}", "[": "]"}
_TOKEN_START = frozenset("{[,:")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ROOT_OBJECT = re.compile(r"\{\s*[\"'}]")
_ROOT_ARRAY = re.compile(r"\[\s*\{")
_TRAILING_COMMA = re.compile(r",\s*[}\]]")


@dataclass(frozen=True, kw_only=True)
class Found:
    """A decoded value and where it sits in the text (``text[start:end]``)."""

    value: Any
    start: int
    end: int
    repaired: bool = False


@dataclass(frozen=True, kw_only=True)
class Scan:
    """Every top-level JSON value in a text, in order, and what could not be read.

    ``unclosed_at`` is the start of a JSON-looking value that runs to the end of the text without
    closing: the sign of a cut-off reply. Nothing after it is scanned (it is all inside that value).
    ``malformed`` holds the ``(start, end)`` spans of JSON-looking values that closed but did not
    decode, even after repair.
    """

    found: tuple[Found, ...]
    unclosed_at: int | None = None
    malformed: tuple[tuple[int, int], ...] = ()


def _string_end(text: str, start: int) -> int | None:
    """Index just past the string opened at ``start`` (by its own quote character), or None."""
    quote = text[start]
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == quote:
            return i + 1
        i += 1
    return None


def balanced_end(text: str, start: int) -> tuple[ScanStatus, int]:
    """Follow the brackets from ``text[start]`` (``{`` or ``[``) to the one that closes it."""
    walk = _walk(text, start)
    return walk.status, walk.end


@dataclass(frozen=True, kw_only=True)
class _Walk:
    """One bracket walk and what it learned about the brackets inside it.

    ``closes`` maps each inner bracket that closed to the index past its closer; ``open_at_end``
    lists those still open when the text ran out. A later walk from any of them would see the same
    strings and reach the same answer, so ``scan`` reuses these instead of walking again: linear
    time even for a reply full of ``{``.
    """

    status: ScanStatus
    end: int
    closes: dict[int, int]
    open_at_end: tuple[int, ...] = ()


def _walk(text: str, start: int) -> _Walk:
    stack: list[tuple[str, int]] = []
    closes: dict[int, int] = {}
    previous = ""
    i = start
    while i < len(text):
        ch = text[i]
        if ch == '"' or (ch == "'" and previous in _TOKEN_START):
            end = _string_end(text, i)
            if end is None:
                break
            i, previous = end, '"'
            continue
        if ch in _CLOSERS:
            stack.append((_CLOSERS[ch], i))
        elif ch in "}]":
            closer, opened_at = stack.pop()
            if closer != ch:
                return _Walk(status="mismatched", end=i + 1, closes=closes)
            closes[opened_at] = i + 1
            if not stack:
                return _Walk(status="closed", end=i + 1, closes=closes)
        if not ch.isspace():
            previous = ch
        i += 1
    return _Walk(status="unclosed", end=len(text), closes=closes, open_at_end=tuple(p for _, p in stack))


def _requote(inner: str) -> str:
    """A single-quoted string's body as a double-quoted JSON string."""
    out = ['"']
    i = 0
    while i < len(inner):
        ch = inner[i]
        if ch == "\\" and i + 1 < len(inner):
            nxt = inner[i + 1]
            out.append("'" if nxt == "'" else ch + nxt)
            i += 2
            continue
        out.append('\\"' if ch == '"' else ch)
        i += 1
    out.append('"')
    return "".join(out)


def repair_syntax(snippet: str) -> str:
    """Lossless fixes only: single quotes → double, trailing commas dropped, Python literals → JSON.

    Text inside double-quoted strings is never touched. Callers must not use this on a cut-off
    value: closing or fixing a truncated value makes it look complete when it is not.
    """
    out: list[str] = []
    previous = "{"
    i = 0
    while i < len(snippet):
        ch = snippet[i]
        if ch == '"' or (ch == "'" and previous in _TOKEN_START):
            end = _string_end(snippet, i) or len(snippet)
            piece = snippet[i:end]
            out.append(piece if ch == '"' else _requote(piece[1:-1]))
            i, previous = end, '"'
            continue
        if ch == "," and _TRAILING_COMMA.match(snippet, i):
            i += 1
            continue
        word = _WORD.match(snippet, i)
        if word is not None:
            out.append(_PY_LITERALS.get(word.group(), word.group()))
            i, previous = word.end(), "w"
            continue
        out.append(ch)
        previous = ch if not ch.isspace() else previous
        i += 1
    return "".join(out)


def decode(snippet: str, *, repair: bool) -> Found | None:
    """Decode one JSON value, trying the lossless repairs when allowed; None if it is not JSON."""
    try:
        return Found(value=json.loads(snippet, strict=False), start=0, end=len(snippet))
    except (ValueError, RecursionError):
        pass
    if not repair:
        return None
    fixed = repair_syntax(snippet)
    if fixed == snippet:
        return None
    try:
        value = json.loads(fixed, strict=False)
    except (ValueError, RecursionError):
        return None
    return Found(value=value, start=0, end=len(snippet), repaired=True)


_DECODER = json.JSONDecoder(strict=False)


def _raw_decode(text: str, start: int) -> Found | None:
    try:
        value, end = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    return Found(value=value, start=start, end=end)


def looks_like_root(text: str, start: int) -> bool:
    """Whether the bracket at ``start`` opens JSON (``{"``, ``{'``, ``{}``, ``[{``) rather than prose."""
    return bool(_ROOT_OBJECT.match(text, start) or _ROOT_ARRAY.match(text, start))


def _next_open(text: str, start: int) -> int:
    positions = [p for p in (text.find("{", start), text.find("[", start)) if p >= 0]
    return min(positions) if positions else -1


def _remember(walk: _Walk, known: dict[int, tuple[ScanStatus, int]]) -> tuple[ScanStatus, int]:
    known.update((at, ("closed", end)) for at, end in walk.closes.items())
    known.update((at, ("unclosed", walk.end)) for at in walk.open_at_end)
    return walk.status, walk.end


def scan(text: str, *, repair: bool) -> Scan:
    """Every top-level JSON object or array in ``text``, decoded, with what could not be.

    Repairs are tried only on JSON-looking values (``{"``, ``{'``, ``[{``): prose in braces is not
    JSON with a typo, and repairing it would cost a pass per brace.
    """
    found: list[Found] = []
    malformed: list[tuple[int, int]] = []
    known: dict[int, tuple[ScanStatus, int]] = {}
    i = _next_open(text, 0)
    while i >= 0:
        fast = _raw_decode(text, i)
        if fast is not None:  # well-formed JSON (the usual case): C speed, no character walk
            found.append(fast)
            i = _next_open(text, fast.end)
            continue
        status, end = known.get(i) or _remember(_walk(text, i), known)
        rooty = looks_like_root(text, i)
        if status == "unclosed" and rooty:
            return Scan(found=tuple(found), unclosed_at=i, malformed=tuple(malformed))
        decoded = decode(text[i:end], repair=repair and rooty) if status == "closed" else None
        if decoded is not None:
            found.append(Found(value=decoded.value, start=i, end=end, repaired=decoded.repaired))
            i = _next_open(text, end)
        elif rooty:
            malformed.append((i, end))
            i = _next_open(text, end)
        else:
            i = _next_open(text, i + 1)
    return Scan(found=tuple(found), malformed=tuple(malformed))


# --- reading values the model wrote --------------------------------------------------------------

FENCE = re.compile(r"```[A-Za-z0-9_+-]*")
"""A code-fence marker with its optional language tag."""


def pick(obj: Mapping[str, Any], *names: str) -> Any:
    """The first of ``names`` that ``obj`` holds with a non-null value (camelCase/snake_case)."""
    for name in names:
        if obj.get(name) is not None:
            return obj[name]
    return None


def as_text(value: Any) -> str | None:
    """A free-text field as a string: lists of lines joined, other JSON dumped, blank as None."""
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = "\n".join(value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text.strip() or None


def as_id(value: Any) -> str | None:
    """An id as a string (``1`` and ``1.0`` → ``"1"``), or None when blank or not a scalar."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value).strip() or None
    return None


def excerpt(text: str, limit: int = 160) -> str:
    """The start of a reply, quoted, for error messages."""
    return repr(text[:limit] + ("..." if len(text) > limit else ""))


def maybe_json(value: Any) -> Any:
    """A value the model double-encoded (JSON text inside a string) decoded; others unchanged."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        found = decode(value.strip(), repair=True)
        if found is not None:
            return found.value
    return value


def unwrap_string(answer: str) -> str:
    """A whole reply sent as one JSON string (``"{\\"toolCalls\\": ...}"``) becomes its content."""
    bare = FENCE.sub("", answer).strip()
    if bare.startswith('"'):
        found = decode(bare, repair=False)
        if found is not None and isinstance(found.value, str):
            return found.value
    return answer


def prose_outside(answer: str, result: Scan) -> str:
    """The text without its JSON values (decoded or malformed), any cut-off tail and fence markers."""
    end = len(answer) if result.unclosed_at is None else result.unclosed_at
    spans = sorted([(f.start, f.end) for f in result.found] + list(result.malformed))
    pieces, cursor = [], 0
    for start, stop in spans:
        pieces.append(answer[cursor:start])
        cursor = stop
    pieces.append(answer[cursor:end])
    return FENCE.sub("", "".join(pieces)).strip()


def trailing_fence(text: str) -> tuple[str, Any] | None:
    """``(text before, value)`` when the text ends with a fence (plain or ```json) holding JSON.

    The closing fence must be the last thing in the text and its opening must really open (an even
    number of fences before it), so the end of an earlier code block is never taken for an opening.
    """
    stripped = text.rstrip()
    opening = stripped.rfind("```", 0, len(stripped) - 3)
    if not stripped.endswith("```") or opening < 0 or stripped.count("```", 0, opening) % 2:
        return None
    body = stripped[opening + 3 : -3]
    head, _, tail = body.partition("\n")
    payload = tail if head.strip().lower() in ("", "json") else body
    found = decode(payload.strip(), repair=True)
    return None if found is None else (stripped[:opening], found.value)
