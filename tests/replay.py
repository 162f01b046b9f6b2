"""Replaying the recorded scenarios of the TypeScript original through the real pes-agent stack."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pes_agent import ArtInstance, ToolResult, create_art_instance
from pes_agent.testing import ScriptedProvider, ScriptedReply
from pes_agent.tools.decorators import tool_from_schema
from pes_agent.tools.spec import ToolSpec

FIXTURES = Path(__file__).parent / "fixtures"
SCENARIOS = FIXTURES / "scenarios"


def load_scenario(name: str) -> dict[str, Any]:
    return json.loads((SCENARIOS / f"{name}.json").read_text(encoding="utf-8"))


@dataclass
class ToolLog:
    """Every call that reached a tool function, in order."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _outputs(scenario: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    extra = scenario["expected"]["pesAgent"].get("additionalToolOutputs", [])
    return [*scenario["toolOutputs"], *extra]


def scenario_tools(scenario: Mapping[str, Any], log: ToolLog) -> list[ToolSpec]:
    """Fake tools that answer exactly as the original's recorded tools did, by (tool, arguments)."""

    def make(name: str) -> Any:
        # Async: the fakes never block, so they run on the event loop (a sync tool would be run in
        # a worker thread, which is right for real blocking tools but not what the replays measure).
        async def run(**arguments: Any) -> Any:
            log.calls.append((name, arguments))
            for entry in _outputs(scenario):  # read at call time: tests may add outputs mid-run
                if entry["tool"] == name and entry["arguments"] == arguments:
                    if entry["status"] == "suspended":
                        out = entry["output"]
                        return ToolResult.suspended(out["message"], out.get("preview"))
                    return entry["output"]
            raise AssertionError(f"no recorded output for {name}({arguments})")

        return run

    specs = []
    for entry in scenario["toolCatalog"]:
        mode = "blocking" if entry.get("executionMode") == "blocking" else "automatic"
        specs.append(
            tool_from_schema(
                entry["name"],
                entry["description"],
                entry["inputSchema"],
                make(entry["name"]),
                execution_mode=mode,
            )
        )
    return specs


def scripted_replies(scenario: Mapping[str, Any]) -> list[ScriptedReply]:
    unused = set(scenario["expected"]["pesAgent"].get("unusedReplies", []))
    return [
        ScriptedReply(text=r["text"], thinking=r.get("thinking"))
        for r in scenario["scriptedResponses"]
        if r["index"] not in unused
    ]


@dataclass
class Replay:
    art: ArtInstance
    provider: ScriptedProvider
    log: ToolLog
    scenario: dict[str, Any]

    @property
    def expected(self) -> dict[str, Any]:
        return self.scenario["expected"]["pesAgent"]

    @property
    def query(self) -> str:
        return self.scenario["userQuery"]

    @property
    def thread_id(self) -> str:
        return self.scenario["config"]["processProps"]["threadId"]


async def start_replay(name: str, config: Mapping[str, Any] | None = None) -> Replay:
    scenario = load_scenario(name)
    log = ToolLog()
    provider = ScriptedProvider(scripted_replies(scenario))
    art = await create_art_instance(
        dict(config or {"storage": {"type": "memory"}}),
        tools=scenario_tools(scenario, log),
        providers={"scripted": provider},
    )
    return Replay(art=art, provider=provider, log=log, scenario=scenario)


def new_messages(calls: list[Any], index: int) -> list[dict[str, str]]:
    """Messages of call ``index`` added since the previous call of the same step, without the
    assistant turn that repeats the model's last reply."""
    call = calls[index]
    previous = next((c for c in reversed(calls[:index]) if c.step_id == call.step_id), None)
    if previous is None:
        return list(call.messages)
    added = call.messages[len(previous.messages) :]
    return [m for m in added if m["role"] != "assistant"]


def data_matches(actual: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    for key, value in wanted.items():
        if key not in actual:
            return False
        got = actual[key]
        if isinstance(value, Mapping) and isinstance(got, Mapping):
            if not data_matches(got, value):
                return False
        elif isinstance(value, list) and isinstance(got, list):
            if sorted(map(json.dumps, value)) != sorted(map(json.dumps, got)):
                return False
        elif got != value:
            return False
    return True
