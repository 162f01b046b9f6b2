"""Remote A2A agents as tools, on the official ``a2a-sdk`` (``pip install 'pes-agent[a2a]'``).

Only imported when the config lists an enabled agent. At instance start each agent's card is read
(``/.well-known/agent-card.json``) and the agent becomes one tool, ``agent_<id>``, taking one argument,
``task``: what to ask, in words. The planner sees the card's description and its skills' names; a step
that picks the agent sees its skills in full and sends the task; the agent's answer (its artifacts'
text, and any data parts) is the step's output. Within a thread the conversation with an agent keeps
one A2A context, so a follow-up task can build on the earlier one.

An agent that cannot be reached at start-up, or whose card is not usable, is logged (a warning naming
it) and contributes no tool; the instance starts with the others.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from a2a.types import a2a_pb2 as a2a

from pes_agent.config.agents import RemoteAgentConfig
from pes_agent.errors import ConfigError
from pes_agent.guided.arguments import REQUEST_MARK
from pes_agent.tools.a2a_connection import RemoteAgent, context_for
from pes_agent.tools.decorators import tool_from_schema
from pes_agent.tools.spec import ToolContext, ToolSpec

logger = logging.getLogger("pes_agent.tools.a2a")

TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task": {
            "type": "string",
            "minLength": 1,
            REQUEST_MARK: True,  # guided steps (small models) send the step's request whole
            "description": "What the agent should do, in full: it sees nothing else of this conversation "
            "(put the values from earlier steps in the text).",
        }
    },
    "required": ["task"],
    "additionalProperties": False,
}
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "description": "The agent's answer in words."},
        "data": {"type": "array", "description": "Structured parts of the answer, if the agent sent any."},
    },
}


def agent_tool_name(agent_id: str) -> str:
    """The config admits only ids that every provider accepts in a tool name (at most 32 characters
    of letters, digits, ``_`` and ``-``: ``checked_name_part``), so the name needs no cleaning."""
    return f"agent_{agent_id}"


@dataclass(eq=False)
class AgentTools:
    """What the configured agents yield: one tool each, where each came from, and their clients."""

    specs: list[ToolSpec] = field(default_factory=list)
    agent_of: dict[str, str] = field(default_factory=dict)
    """Tool name → agent id."""
    failures: dict[str, str] = field(default_factory=dict)
    """Agent id → why it contributed no tool (unreachable, or an unusable card)."""
    agents: list[RemoteAgent] = field(default_factory=list)

    async def aclose(self) -> None:
        await asyncio.gather(*(agent.aclose() for agent in self.agents), return_exceptions=True)


async def open_agent_tools(
    configs: list[RemoteAgentConfig], *, taken: Collection[str] = (), source: str | None = None
) -> AgentTools:
    """Read every enabled agent's card (all at once) and make its tool, in config order. A tool name
    already taken is a ``ConfigError`` naming both; the clients opened are closed first."""
    found = AgentTools()
    enabled = [(index, RemoteAgent(c)) for index, c in enumerate(configs) if c.enabled]
    found.agents = [agent for _, agent in enabled]
    try:
        cards = await asyncio.gather(*(_card(agent) for _, agent in enabled))
        for (index, agent), card in zip(enabled, cards, strict=True):
            if isinstance(card, str):
                found.failures[agent.config.id] = card
                continue
            name = agent_tool_name(agent.config.id)
            if name in taken or name in found.agent_of:
                raise ConfigError(
                    f"agent {agent.config.id!r} would be the tool {name!r}, a name another tool has; "
                    "change the agent's `id`",
                    source=source,
                    key_path=f"agents[{index}].id",
                    value=agent.config.id,
                )
            found.specs.append(_spec(agent, card, name))
            found.agent_of[name] = agent.config.id
            logger.info("%s: registered as tool %r (%d skill(s))", agent.label, name, len(card.skills))
    except BaseException:
        await found.aclose()
        raise
    return found


async def _card(agent: RemoteAgent) -> a2a.AgentCard | str:
    """The agent's card, or why it has none to give (logged)."""
    try:
        return await agent.open()
    except ConnectionError as exc:
        logger.warning("%s; its tool is left out", exc)
        return str(exc)


def _spec(agent: RemoteAgent, card: a2a.AgentCard, name: str) -> ToolSpec:
    agent_id = agent.config.id

    async def delegate(task: str, context: ToolContext) -> dict[str, Any]:
        return await agent.ask(task, context_id=context_for(context.thread_id, agent_id))

    return tool_from_schema(
        name,
        describe_card(card, agent_id),
        TASK_SCHEMA,
        delegate,
        output_schema=ANSWER_SCHEMA,
        capabilities=[skill.name or skill.id for skill in card.skills][:8],
        timeout=agent.config.timeout_s + 10,  # the client bounds the task and cancels it; a backstop
        side_effects=True,  # an agent may act; nothing says it only reads
        deterministic=False,  # the same task may get a new answer
        context_param="context",
    )


def describe_card(card: a2a.AgentCard, agent_id: str) -> str:
    """The first sentence says who the agent is (the manifesto shows it); then each skill in full."""
    about = " ".join(card.description.split()) or f"Remote agent {agent_id!r}."
    first = f"Delegate a task to the remote agent {card.name or agent_id}: {about}"
    if first[-1] not in ".!?":
        first += "."
    lines = [first]
    for skill in card.skills:
        line = f"Skill {skill.name or skill.id}: {' '.join(skill.description.split())}".rstrip(": ")
        if skill.examples:
            line += f" (e.g. {'; '.join(skill.examples[:3])})"
        lines.append(line)
    return "\n".join(lines)
