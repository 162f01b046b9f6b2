"""A provider that answers every guided prompt with the first option its grammar offers: no model.

Guided mode turns each decision into a choice among options it grounded (a tool per part, a value
per argument). Whether the right option is *offered*, and offered first, is the agent's part; which
one a small model picks is the model's. Running a benchmark with this provider (``--first-option``
in ``benchmarks/nestful.py`` and ``benchmarks/bfcl.py``) measures the agent's part alone, through
the same code path as a real run, in seconds instead of an hour: NESTFUL's 300 requests in about
three minutes, BFCL's 858 in about fifteen seconds on two cores. It is a check for mechanisms, not a
model figure (at session 11's start it read 257/858 on BFCL where the model read 342, and NESTFUL
full sequences 15/300 where the model read 21). A prompt without a reply schema (none in guided
mode) and the answer get a fixed sentence.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pes_agent.llm.types import CallOptions, LLMReply, PromptRequest
from pes_agent.prompts.schemas import inline_refs

__all__ = ["FirstOptionProvider", "first_option"]

ANSWER = "Done."


def first_option(schema: Any) -> Any:
    """The value a grammar for ``schema`` would produce first: the first of an ``enum`` or of an
    ``anyOf``'s first alternative that has one, an object of its required properties' first options,
    a one-item list, and for a free value of a type the plainest one."""
    if not isinstance(schema, Mapping):
        return None
    if "enum" in schema:
        options = schema["enum"]
        return options[0] if options else None
    if "const" in schema:
        return schema["const"]
    if "anyOf" in schema:
        return next((v for a in schema["anyOf"] if (v := first_option(a)) is not None), None)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        wanted = schema.get("required") or list(properties)
        return {k: first_option(v) for k, v in properties.items() if k in wanted}
    if kind == "array":
        item = first_option(schema.get("items") or {})
        return [item] if item is not None else []
    return {"integer": 1, "number": 1, "boolean": True}.get(str(kind), "x")


class FirstOptionProvider:
    """``Provider`` whose every reply is ``first_option`` of the request's reply schema."""

    name = "local"

    async def complete(self, request: PromptRequest, options: CallOptions) -> LLMReply:
        schema = request.response_schema
        if schema is None or request.phase == "synthesis":
            return LLMReply(text=ANSWER)
        return LLMReply(text=json.dumps(first_option(inline_refs(schema))))

    async def aclose(self) -> None:
        return None
