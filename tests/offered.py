"""What guided schemas offer, for tests that read them: a step's options for an argument, a part's
tools in the plan."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pes_agent.guided.prompts import guided_plan_schema
from pes_agent.tools.spec import ToolSpec


def offered(schema: Mapping[str, Any], name: str) -> list[Any]:
    """The options ``guided_arguments_schema`` left ``name``: its ``enum``, or those of its ``anyOf``
    alternatives (options beside a composition of numbers)."""
    prop = schema["properties"][name]
    if "enum" in prop:
        return list(prop["enum"])
    return [o for alt in prop.get("anyOf", []) for o in alt.get("enum", [])]


def planned_tools(tools: Sequence[ToolSpec], part: str) -> list[str]:
    """The tools guided planning offers a one-part request among ``tools``, their declared outputs
    read."""
    plan = guided_plan_schema(
        [part],
        {t.name: t.summary for t in tools},
        {t.name: t.input_schema for t in tools},
        {t.name: t.output_schema for t in tools if t.output_schema is not None},
    )
    return list(plan["properties"][part]["enum"])
