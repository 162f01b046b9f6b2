"""The tools of one instance, in registration order, with their compiled validators.

The registry also renders tools for prompts: the planning prompt shows a one-line manifesto per tool
(at 200 tools the schemas would dominate the prompt), and a tool step shows full schemas for only the
tools it may call. Both renderings are deterministic because they end up in snapshot tests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pes_agent.errors import ToolDefinitionError
from pes_agent.tools.spec import ToolSpec
from pes_agent.tools.validation import SchemaValidator

TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def check_tool_name(name: str) -> None:
    """Names travel in prompts and provider tool lists, which only accept this character set."""
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        raise ToolDefinitionError(
            f"tool name {name!r} is not allowed: use 1 to 64 characters from letters, digits, "
            "`_`, `.` and `-` (pass `name=` to `@tool` to choose another)."
        )


class ToolRegistry:
    def __init__(self, specs: Iterable[ToolSpec] = ()) -> None:
        self._specs: dict[str, ToolSpec] = {}
        self._validators: dict[str, SchemaValidator] = {}
        self._lines: dict[str, str] = {}
        self._contracts: dict[str, str] = {}
        self._version = 0
        for spec in specs:
            self.register(spec)

    @property
    def version(self) -> int:
        """Counts changes (a tool registered, replaced or removed): what was derived from an older
        version of the tool set is stale."""
        return self._version

    def register(self, spec: ToolSpec) -> None:
        if not isinstance(spec, ToolSpec):
            raise ToolDefinitionError(
                f"expected a ToolSpec (what `@tool` returns), got {type(spec).__name__}: decorate the "
                "function with `@tool` or build it with `tool_from_schema`."
            )
        check_tool_name(spec.name)
        if spec.name in self._specs:
            raise ToolDefinitionError(
                f"tool {spec.name!r} is registered twice: tool names must be unique; rename one "
                "with `@tool(name=...)` or drop the duplicate from `tools`."
            )
        validator = SchemaValidator(spec.input_schema, tool_name=spec.name)
        self._specs[spec.name] = spec
        self._validators[spec.name] = validator
        self._version += 1

    def replace(self, spec: ToolSpec) -> None:
        """Put a new version of a registered tool in its place (a remote tool whose schema changed)."""
        if spec.name not in self._specs:
            raise KeyError(f"no tool named {spec.name!r} is registered")
        validator = SchemaValidator(spec.input_schema, tool_name=spec.name)
        self._forget(spec.name)
        self._specs[spec.name] = spec
        self._validators[spec.name] = validator
        self._version += 1

    def unregister(self, name: str) -> None:
        """Remove a tool (a remote tool its server no longer offers); unknown names are ignored."""
        if name in self._specs:
            self._forget(name)
            del self._specs[name]
            del self._validators[name]
            self._version += 1

    def _forget(self, name: str) -> None:
        self._lines.pop(name, None)
        self._contracts.pop(name, None)

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def names(self) -> list[str]:
        return list(self._specs)

    def specs(self) -> list[ToolSpec]:
        return list(self._specs.values())

    def validator(self, name: str) -> SchemaValidator:
        try:
            return self._validators[name]
        except KeyError:
            raise KeyError(f"no tool named {name!r} is registered") from None

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __len__(self) -> int:
        return len(self._specs)

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(list(self._specs.values()))

    def manifesto_lines(self, names: Sequence[str]) -> list[str]:
        """One minimal line per tool, no schema. Names the registry does not hold are skipped."""
        return [self._manifesto_line(spec) for spec in self._known(names)]

    def _manifesto_line(self, spec: ToolSpec) -> str:
        """Rendered once per tool: a 200-tool manifesto is built for every planning call."""
        line = self._lines.get(spec.name)
        if line is None:
            line = f"- {spec.name}: {spec.summary}" if spec.summary else f"- {spec.name}"
            if spec.capabilities:
                line += f" [capabilities: {', '.join(spec.capabilities)}]"
            self._lines[spec.name] = line
        return line

    def schema_block(self, names: Sequence[str]) -> str:
        """Full contracts of the given tools, one compact JSON object per line."""
        return "\n".join(self._contract_line(spec) for spec in self._known(names))

    def _contract_line(self, spec: ToolSpec) -> str:
        """Rendered once per tool, like the manifesto line: every tool step's prompt carries it."""
        line = self._contracts.get(spec.name)
        if line is None:
            line = self._contracts[spec.name] = _compact_json(_contract(spec))
        return line

    def _known(self, names: Sequence[str]) -> Iterator[ToolSpec]:
        seen: set[str] = set()
        for name in names:
            spec = self._specs.get(name)
            if spec is not None and name not in seen:
                seen.add(name)
                yield spec


def _contract(spec: ToolSpec) -> dict[str, Any]:
    contract: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "input_schema": spec.model_schema,
    }
    if spec.examples:
        contract["examples"] = list(spec.examples)
    return contract


def _compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
