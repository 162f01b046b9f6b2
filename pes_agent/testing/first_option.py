"""A stand-in for a small model decoding under its reply's JSON Schema: the first option everywhere.

A ``FakeOpenAIServer`` handler (``handler=first_option_reply``) for tests of guided runs over the wire:
whatever dialect a request sends its schema in (``response_format`` ``json_schema`` or ``json_object``,
Ollama's ``format``), the reply is the schema's first option at every choice (the first ``enum``
value, the first ``anyOf`` branch, every required property), as greedy decoding under a grammar
would answer if the model always liked the first option best. A request without a schema gets
``free_text``. It cannot read a GBNF ``grammar``: such a request gets ``free_text`` too.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["first_option", "first_option_reply"]

_PLAIN = {"string": "x", "integer": 0, "number": 0, "boolean": True, "null": None}


def first_option(schema: Any) -> Any:
    """The value a schema's first options make."""
    if not isinstance(schema, dict):
        return None
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return first_option(schema[key][0])
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object" or "properties" in schema:
        properties: dict[str, Any] = schema.get("properties") or {}
        names: list[str] = list(schema.get("required") or properties)
        return {name: first_option(properties.get(name, {})) for name in names}
    if kind == "array":
        return [first_option(schema.get("items", {}))] * max(1, int(schema.get("minItems", 0)))
    return _PLAIN.get(str(kind), "x")


def first_option_reply(body: dict[str, Any], free_text: str = "Done.") -> str:
    """The reply to one chat request: its schema's first options as JSON, else ``free_text``."""
    schema = body.get("format")
    response_format = body.get("response_format")
    if isinstance(response_format, dict):
        schema = response_format.get("schema") or (response_format.get("json_schema") or {}).get("schema")
    return free_text if not isinstance(schema, dict) else json.dumps(first_option(schema))
