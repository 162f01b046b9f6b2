"""The ``agents`` section: remote A2A agents the planner may delegate a step to (``pes_agent.tools.a2a``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from pes_agent.config.base import (
    CONFIG_ERROR_TYPE,
    ConfigModel,
    checked_name_part,
    fail,
    is_http_url,
    problem,
)
from pes_agent.secrets import SecretValue

AGENT_CARD_PATH = "/.well-known/agent-card.json"
"""Where an A2A agent publishes its card, below its base URL (A2A 0.3 and 1.0)."""


class RemoteAgentConfig(ConfigModel):
    """One remote agent, registered as the tool ``agent_<id>``: a step that picks it sends the agent
    a task in words and takes its answer as the step's output."""

    id: str
    """Short name, part of the tool name: letters, digits, ``_`` and ``-`` (at most 32)."""
    url: str
    """The agent's base URL; its card is read from ``<url>/.well-known/agent-card.json``."""
    card_path: str = AGENT_CARD_PATH
    """Where the card is, relative to ``url``, for an agent that publishes it elsewhere."""
    headers: dict[str, SecretValue] = Field(default_factory=dict)
    """Request headers (``Authorization: Bearer ${TOKEN}``) for the card and every call; values are
    secrets: never logged or dumped."""
    enabled: bool = True
    timeout_s: float = Field(default=120.0, gt=0)
    """Bound on reading the card and on each delegated task (sending it and waiting for the answer);
    past it the task is cancelled and the step sees a tool error."""
    streaming: bool = True
    """true: follow the task over the agent's event stream when its card offers one, else by one
    request that returns when the task ends; false: send the task, then poll it until it ends (no
    request stays open, for proxies that cut long ones)."""

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        return checked_name_part(value, "agent", "e.g. research, billing-agent")

    @field_validator("card_path")
    @classmethod
    def _check_card_path(cls, value: str) -> str:
        if not value.startswith("/") or any(c.isspace() for c in value):
            raise PydanticCustomError(
                CONFIG_ERROR_TYPE,
                "the card path is a path below the agent's URL, starting with `/`",
                {"value": value, "allowed": [AGENT_CARD_PATH]},
            )
        return value

    @model_validator(mode="after")
    def _check_url(self) -> RemoteAgentConfig:
        if not is_http_url(self.url):
            fail(
                problem(
                    ("url",),
                    "a remote agent needs its http(s) base URL",
                    ["http://host:port", "https://agents.example.com/research"],
                    self.url,
                )
            )
        return self


def delegation_problems(switch: bool | None, agents: list[RemoteAgentConfig]) -> list[dict[str, Any]]:
    """The original's ``execution.enableA2ADelegation`` agreeing with the agents listed."""
    listed = any(agent.enabled for agent in agents)
    where = ("execution", "enable_a2a_delegation")
    if switch is True and not listed:
        return [
            problem(
                where,
                "delegation is on but no enabled agent is listed under `agents`",
                ["list agents under `agents` ({id, url})", "remove the key"],
                True,
            )
        ]
    if switch is False and listed:
        return [
            problem(
                where,
                "delegation is off but agents are listed under `agents`; remove the key "
                "or set `enabled: false` on the agents",
                ["remove the key"],
                False,
            )
        ]
    return []
