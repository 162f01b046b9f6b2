"""Codes a request quotes and the one tool whose pattern takes them.

"Could you book room LR-2204 for Saturday …" names no library in words, and a driving lesson's
description says more of Saturdays and hours than the room booking's does. But "LR-2204" is a room
id by the booking's own schema (``pattern: ^LR-[0-9]{4}$``) and by no other tool's: a value of a
shape only one tool takes says which tool the part is for more plainly than any word. Decided by the
tools' input patterns alone; a pattern many tools share (a date, a clock time) tells nothing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from pes_agent.guided.grounding import checking, text_spans
from pes_agent.guided.language import language
from pes_agent.guided.words import COMMON_SHARE

__all__ = ["MAX_CODE", "coded"]

MAX_CODE = 40
"""The longest code read: ids are short, and a schema's pattern may backtrack on a long one."""

_CODE = re.compile(r"(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9._/#-]{2,}|[A-Z]{2,}(?:-[A-Z0-9]+)+")
"""A code as written: letters and digits together without a space ("LR-2204", "BK3027") or capitals
in dashed groups ("SR-NGH"); not a plain number nor a date."""


def coded(part: str, schemas: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """For each tool, how many of the part's codes a ``pattern`` of its inputs takes, counting only
    codes few tools take (at most one in ``COMMON_SHARE``, and two)."""
    dated = " ".join(d.text for d in language().dates(part))
    codes = [v for v in text_spans(part) if len(v) <= MAX_CODE and _CODE.fullmatch(v) and v not in dated]
    if not codes:
        return {}
    takes = {name: {c for c in codes if _takes(schema, c)} for name, schema in schemas.items()}
    limit = max(2, len(schemas) // COMMON_SHARE)
    few = {c for c in codes if sum(c in t for t in takes.values()) <= limit}
    return {name: len(t & few) for name, t in takes.items() if t & few}


def _takes(schema: Mapping[str, Any], code: str) -> bool:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return False
    return any(
        isinstance(p, Mapping)
        and isinstance(p.get("pattern"), str)
        and _matches(p["pattern"], code)
        and not _matches(p["pattern"], "word")  # a username's pattern takes "3pm" as any word
        and not _matches(p["pattern"], "12345")
        for p in properties.values()
    )


@functools.lru_cache(maxsize=4096)
def _matches(pattern: str, code: str) -> bool:
    """Whether the pattern takes the code, as JSON Schema reads it; a pattern it cannot read takes
    nothing."""
    try:
        return bool(checking({"type": "string", "pattern": pattern}).is_valid(code))
    except re.error:  # a schema's broken pattern must not fail planning
        return False
