"""Data-flow references: how a tool call names a value that an earlier step produced.

A model that copies a long list of URLs from one step's results into the next call often drops or
garbles some of them; naming the value instead is shorter and exact.

Syntax
------
``$<step id>`` followed by any number of path parts, with no spaces in between:

- ``.key``      a key of an object (``$step_1.results``); on a list, digits index it (``.0`` = ``[0]``)
- ``[n]``       an item of a list, counted from 0; a negative ``n`` counts from the end
- ``["key"]``   a key that is not a plain word (spaces, dots): ``$step_1["page title"]``

``${step_1.results[0].url}`` (in braces) means the same and may sit right next to other text.

What a reference starts from (its root):

- a step that made one successful tool call: that call's output, so ``$step_1.results[0].url``;
- a step that made several: the list of their outputs in call order, so ``$step_1[1].results``;
- a step that made none: its final text result.

A tool output that is JSON text is read as JSON when a path goes into it.

How it is replaced: a reference that is the whole value (surrounding blanks aside) becomes the value
itself and keeps its type (a list stays a list); a reference inside longer text is replaced by the
value as text (strings as they are, anything else as compact JSON).

Only the ids of steps the caller names are references: ``$5.00`` or ``$HOME`` stay ordinary text.
A reference whose step or path does not exist is reported as unresolved, with the paths that do
exist, so the caller can ask the model for a correct one; it is never passed on as text.
"""

from __future__ import annotations

import copy
import json
import re
from collections import deque
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

PathPart = str | int

SYNTAX_HINT = (
    "To pass a value an earlier step returned, write a reference instead of copying it: "
    "`$<step id>.<key>`, with `[n]` for a list item counted from 0, e.g. `$step_1.results[0].url`. "
    "A reference that is the whole value keeps its type (a list stays a list); inside text it is "
    "replaced by the value as text. When a step made several tool calls, `$step_1[1]` is the second "
    "call's output."
)
"""A few plain sentences for the tool-step prompt's data-flow directive (what the gate accepts)."""

_PART = r"(?:\.[A-Za-z0-9_][\w-]*|\[-?\d+\]|\[\"[^\"\]]*\"\]|\['[^'\]]*'\])"
_GENERIC_ID = r"[A-Za-z_][\w-]*"
_PART_RE = re.compile(
    r"\.(?P<key>[A-Za-z0-9_][\w-]*)|\[(?P<index>-?\d+)\]|\[[\"'](?P<quoted>[^\"'\]]*)[\"']\]"
)
_GENERIC_RE = re.compile(
    rf"\$(?:\{{(?P<bid>{_GENERIC_ID})(?P<bpath>{_PART}*)\}}|(?P<id>{_GENERIC_ID})(?P<path>{_PART}*))"
)
_MISSING = object()


@dataclass(frozen=True, kw_only=True)
class Reference:
    """One reference as written: ``text`` is the exact substring, ``start``/``end`` its place."""

    text: str
    step_id: str
    path: tuple[PathPart, ...]
    start: int
    end: int

    @property
    def where(self) -> str:
        """The path as written after the step id (``results[0].url``), for messages."""
        return format_path(self.path)


@dataclass(frozen=True, kw_only=True)
class Unresolved:
    """A reference that names no existing value, with what the model could have named instead."""

    reference: Reference
    reason: str
    available: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Resolution:
    value: Any
    resolved: tuple[tuple[Reference, Any], ...]
    unresolved: tuple[Unresolved, ...]

    @property
    def changed(self) -> bool:
        return bool(self.resolved)


def pattern_for(step_ids: Collection[str] | None) -> re.Pattern[str]:
    """The reference pattern: for known ids only (longest first), or any id-shaped word."""
    if step_ids is None:
        return _GENERIC_RE
    ids = "|".join(re.escape(i) for i in sorted(step_ids, key=len, reverse=True))
    if not ids:
        return re.compile(r"(?!x)x")  # no steps: nothing is a reference
    return re.compile(
        rf"\$(?:\{{(?P<bid>{ids})(?P<bpath>{_PART}*)\}}|(?P<id>{ids})(?![\w-])(?P<path>{_PART}*))"
    )


def find_references(value: Any, step_ids: Collection[str] | None = None) -> list[Reference]:
    """Every reference in ``value`` (strings inside lists and object values included).

    With ``step_ids``, only references to those steps count; without, any ``$word`` is a candidate.
    """
    pattern = pattern_for(step_ids)
    return [ref for text in _strings(value) for ref in _scan(text, pattern)]


def resolve(
    value: Any,
    outputs: Mapping[str, tuple[Any, ...]],
    results: Mapping[str, str] | None = None,
    *,
    pending: Collection[str] = (),
    limit: int = 8,
) -> Resolution:
    """Replace the references in ``value`` by what they name (see the module docstring).

    ``outputs`` maps a step id to the outputs of its successful tool calls in call order;
    ``results`` maps a step id to its final text; ``pending`` names steps that exist but have no
    results yet (a reference to one is unresolved rather than text). ``limit`` caps the example
    paths listed for an unresolved reference.
    """
    results = results or {}
    ids = set(outputs) | set(results) | set(pending)
    pattern = pattern_for(ids)
    resolver = _Resolver(outputs, results, pattern, limit)
    new = resolver.walk(value)
    return Resolution(value=new, resolved=tuple(resolver.resolved), unresolved=tuple(resolver.unresolved))


def available_paths(output: Any, limit: int = 8) -> list[str]:
    """A few paths that exist in ``output``, shallow ones first (``results``, ``results[0].url``).

    Lists show their first items only: enough for a model to see the shape, short enough for a
    corrective message.
    """
    paths: list[str] = []
    queue: deque[tuple[tuple[PathPart, ...], Any]] = deque([((), _as_data(output))])
    while queue and len(paths) < limit:
        path, node = queue.popleft()
        for part, child in _children(node):
            if len(paths) >= limit:
                break
            here = (*path, part)
            paths.append(format_path(here))
            queue.append((here, _as_data(child)))
    return paths


def format_path(path: tuple[PathPart, ...]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z0-9_][\w-]*", part):
            out += f".{part}" if out else part
        else:
            out += f'["{part}"]'
    return out


def reference_text(step_id: str, path: str) -> str:
    """``step_1`` + ``results[0]`` → ``$step_1.results[0]``; ``[1]`` joins without a dot."""
    if not path:
        return f"${step_id}"
    return f"${step_id}{path}" if path.startswith("[") else f"${step_id}.{path}"


def as_text(value: Any) -> str:
    """How a value reads inside longer text: strings as they are, the rest as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class _Resolver:
    def __init__(
        self,
        outputs: Mapping[str, tuple[Any, ...]],
        results: Mapping[str, str],
        pattern: re.Pattern[str],
        limit: int,
    ) -> None:
        self.outputs = outputs
        self.results = results
        self.pattern = pattern
        self.limit = limit
        self.resolved: list[tuple[Reference, Any]] = []
        self.unresolved: list[Unresolved] = []

    def walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value) if "$" in value else value
        if isinstance(value, list):
            return [self.walk(v) for v in value]
        if isinstance(value, Mapping):
            return {k: self.walk(v) for k, v in value.items()}
        return value

    def text(self, text: str) -> Any:
        refs = list(_scan(text, self.pattern))
        if not refs:
            return text
        values = [self.lookup(ref) for ref in refs]
        if any(v is _MISSING for v in values):
            return text  # unresolved: the caller reports it; the text is not used
        if len(refs) == 1 and text.strip() == refs[0].text:
            return copy.deepcopy(values[0])
        out, last = [], 0
        for ref, found in zip(refs, values, strict=False):
            out.append(text[last : ref.start])
            out.append(as_text(found))
            last = ref.end
        out.append(text[last:])
        return "".join(out)

    def lookup(self, ref: Reference) -> Any:
        root = self.root(ref.step_id)
        if root is _MISSING:
            self.fail(ref, f"step `{ref.step_id}` has no results yet", None)
            return _MISSING
        node: Any = root
        for i, part in enumerate(ref.path):
            node = _as_data(node)
            child = _step(node, part)
            if child is _MISSING:
                seen = format_path(ref.path[:i])
                self.fail(ref, _why(ref.step_id, seen, node, part), root)
                return _MISSING
            node = child
        self.resolved.append((ref, node))
        return node

    def root(self, step_id: str) -> Any:
        found = self.outputs.get(step_id, ())
        if len(found) == 1:
            return found[0]
        if found:
            return list(found)
        return self.results.get(step_id, _MISSING)

    def fail(self, ref: Reference, reason: str, root: Any) -> None:
        paths = () if root is _MISSING or root is None else tuple(available_paths(root, self.limit))
        self.unresolved.append(Unresolved(reference=ref, reason=reason, available=paths))


def _scan(text: str, pattern: re.Pattern[str]) -> Iterator[Reference]:
    if "$" not in text:
        return
    for match in pattern.finditer(text):
        step_id = match.group("bid") or match.group("id")
        if not step_id:
            continue
        raw_path = match.group("bpath") if match.group("bid") else match.group("path")
        yield Reference(
            text=match.group(0),
            step_id=step_id,
            path=tuple(_parts(raw_path or "")),
            start=match.start(),
            end=match.end(),
        )


def _parts(raw: str) -> Iterator[PathPart]:
    for match in _PART_RE.finditer(raw):
        if match.group("index") is not None:
            yield int(match.group("index"))
        elif match.group("key") is not None:
            yield match.group("key")
        else:
            yield match.group("quoted")


def _step(node: Any, part: PathPart) -> Any:
    if isinstance(node, Mapping):
        key = str(part)
        return node.get(key, _MISSING)
    if isinstance(node, (list, tuple)):
        if isinstance(part, str):
            if not part.isdigit():
                return _MISSING
            part = int(part)
        if -len(node) <= part < len(node):
            return node[part]
    return _MISSING


def _why(step_id: str, seen: str, node: Any, part: PathPart) -> str:
    at = f"`{reference_text(step_id, seen)}`"
    if isinstance(node, (list, tuple)):
        if isinstance(part, int) or (isinstance(part, str) and part.isdigit()):
            return f"{at} has {len(node)} item{'' if len(node) == 1 else 's'}, so there is no [{part}]"
        return f"{at} is a list: use an index such as [0], not `.{part}`"
    if isinstance(node, Mapping):
        return f"{at} has no key `{part}`"
    kind = "text" if isinstance(node, str) else "null" if node is None else type(node).__name__
    return f"{at} is {kind}, which has no `{format_path((part,))}`"


def _as_data(node: Any) -> Any:
    """JSON text from a tool is looked into as JSON; anything else is returned as it is."""
    if isinstance(node, str) and node[:1] in ("{", "["):
        try:
            return json.loads(node)
        except ValueError:
            return node
    return node


def _children(node: Any) -> Iterator[tuple[PathPart, Any]]:
    if isinstance(node, Mapping):
        for key, child in node.items():
            yield str(key), child
    elif isinstance(node, (list, tuple)):
        for index, child in enumerate(node[:3]):
            yield index, child


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
