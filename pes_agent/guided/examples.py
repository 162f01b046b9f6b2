"""The shapes of the values a free string's examples show ("such as Europe/Paris": letters, a
slash, letters), so that a value of another shape is not offered for it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pes_agent.guided.language import language

__all__ = ["example_shapes", "shaped_like"]


def example_shapes(schema: Mapping[str, Any]) -> frozenset[str]:
    """The shapes of the values a free string's examples show, when they have one: "an IANA time
    zone such as Europe/Paris" wants letters, a slash, letters, and "Auckland" is no time zone (it
    is what a time-zone lookup takes). Read from ``examples`` and the description's examples; only
    examples with a separator inside count (a plain word or number shows no shape), and only for
    strings without a ``pattern`` or ``format``, which say it already."""
    if schema.get("type") != "string" or "pattern" in schema or "format" in schema:
        return frozenset()
    given = [e for e in schema.get("examples") or () if isinstance(e, str)]
    description = schema.get("description")
    if isinstance(description, str):
        given += language().examples(description)
    return frozenset(shape for e in given if _SEPARATOR.search(shape := _shape(e.strip())))


def _shape(value: str) -> str:
    return re.sub(r"[^\W\d_]+", "a", re.sub(r"\d+", "9", value))


_SEPARATOR = re.compile(r"[^a9\s]")


def shaped_like(value: Any, shapes: frozenset[str]) -> bool:
    return not shapes or (isinstance(value, str) and _shape(value.strip()) in shapes)
