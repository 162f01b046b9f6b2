"""What a guided step's narrowed arguments schema offers an argument, for tests that read it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def offered(schema: Mapping[str, Any], name: str) -> list[Any]:
    """The options ``guided_arguments_schema`` left ``name``: its ``enum``, or those of its ``anyOf``
    alternatives (options beside a composition of numbers)."""
    prop = schema["properties"][name]
    if "enum" in prop:
        return list(prop["enum"])
    return [o for alt in prop.get("anyOf", []) for o in alt.get("enum", [])]
