"""A query and everything that can accompany it."""

from __future__ import annotations

from dataclasses import dataclass

from pes_agent.config import ThreadConfig


@dataclass(frozen=True, kw_only=True)
class AgentProps:
    """A query with everything that can accompany it (the original's ``AgentProps``)."""

    query: str
    thread_id: str | None = None
    trace_id: str | None = None
    user_id: str | None = None
    options: ThreadConfig | None = None
