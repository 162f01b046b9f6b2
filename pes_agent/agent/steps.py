"""How a run performs its model calls and tool calls: the one seam a durable engine plugs into.

The item loop never knows whether a call runs directly (one process, the default) or as a
checkpointed step of a durable workflow (``pes_agent.workers``, DBOS): it hands each call to the
run's ``StepRunner`` as a function of no arguments, with a name that is the same every time the run
reaches that call, so a workflow replayed after a crash can match it with what it recorded. The ids a
run makes (its trace when resumed, a pause's) come from the runner too, for the same reason.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Literal, Protocol, TypeVar

T = TypeVar("T")

StepKind = Literal["model", "tool"]
"""A model call (no side effect: safe to repeat) or a tool call (its effect may not be)."""


class StepRunner(Protocol):
    async def run(self, kind: StepKind, name: str, fn: Callable[[], Awaitable[T]]) -> T:
        """Perform ``fn`` once and return (or raise) what it did."""
        ...

    def new_id(self) -> str:
        """A fresh id (32 hex digits) for a run or a pause; a replayed workflow must draw the same
        ones again, so ids a run makes come from here."""
        ...


class DirectSteps:
    """Calls run as they are: the store's journal is the only record (the single-process default)."""

    async def run(self, kind: StepKind, name: str, fn: Callable[[], Awaitable[T]]) -> T:
        return await fn()

    def new_id(self) -> str:
        return uuid.uuid4().hex


DIRECT = DirectSteps()
