"""A run's calls as DBOS steps: checkpointed once done, never run again when a workflow is replayed.

DBOS replays a recovered workflow from its start; each step it already recorded returns the recorded
value (or raises the recorded error) instead of running. A step that was running when its worker
died is not recorded, so DBOS would run it again: at least once. For a model call that is harmless.
For a tool call it is the question the call journal answers (``pes_agent.state.journal``): a tool
that may have taken effect is not run again here; the step raises ``CallInterrupted`` and the
workflow hands the thread to the agent's own recovery, which reruns an idempotent tool and asks a
person about any other (``pes_agent.agent.recovery.recover_run``).

How a step knows it was interrupted: just before the tool step, a tiny step records which attempt
of the workflow reached it. When a replay finds that marker recorded by an earlier attempt and the
tool step itself not recorded, the earlier attempt died between the two, i.e. inside the tool.
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from dbos import DBOS

from pes_agent.agent.steps import StepKind
from pes_agent.state.transient import is_transient, new_outage_scope

T = TypeVar("T")

ATTEMPT: contextvars.ContextVar[str] = contextvars.ContextVar("pes_agent_workflow_attempt", default="")
"""A fresh id per execution of a workflow function (set by the workflow, never recorded)."""

_IDS: contextvars.ContextVar[dict[str, int]] = contextvars.ContextVar("pes_agent_workflow_ids")
"""How many ids of each kind this execution of the workflow has drawn (one dict, shared with the
tasks it starts)."""


class CallInterrupted(Exception):
    """A tool call was running when its worker died; the agent's recovery decides what happens next.
    Raised inside a workflow and caught by it (``workflow._outcome``); callers never see it."""


def new_attempt() -> None:
    """Called first thing by every execution of the workflow function, the first and each replay."""
    ATTEMPT.set(uuid.uuid4().hex)
    _IDS.set({})
    new_outage_scope()


@dataclass(frozen=True)
class Raised:
    """An error a step raised, recorded as data: DBOS pickles step outcomes, and many exceptions
    (those whose ``__init__`` takes other arguments than their message) do not unpickle."""

    cls: type[BaseException]
    args: tuple[Any, ...]
    attrs: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, exc: Exception) -> Raised:
        return cls(type(exc), exc.args, dict(vars(exc)))

    def rebuild(self) -> BaseException:
        """The same error, built without calling its ``__init__``."""
        exc = self.cls.__new__(self.cls)
        exc.args = self.args
        vars(exc).update(self.attrs)
        return exc


class _Unrecorded(BaseException):
    """Carries a transient database fault out of a step without DBOS recording it.

    DBOS records whatever ``Exception`` a step raises as its outcome and raises it again on every
    replay: a database that was down for a moment would then fail the run for good, on this worker
    and on any that recovers it. A ``BaseException`` passes DBOS's step wrapper unrecorded (as its
    own cancellation does), so the step stays unrun and a replay runs it again. Caught right outside
    the step (``durable``); nothing else ever sees it."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error


async def durable(name: str, fn: Callable[[], Awaitable[T]]) -> T:
    """``fn`` as a DBOS step named ``name`` (run directly outside a workflow). Its result, or the error
    it raised, is the recorded outcome; a transient database fault never is (``_Unrecorded``)."""

    async def step() -> T | Raised:
        try:
            return await fn()
        except Exception as exc:  # noqa: BLE001 -- any other error is an outcome: recorded, raised on every replay
            if is_transient(exc):
                raise _Unrecorded(exc) from None
            return Raised.of(exc)

    fault: Exception | None = None
    try:
        outcome: T | Raised = await DBOS.run_step_async({"name": name}, step)
    except _Unrecorded as carrier:
        fault = carrier.error
    if fault is not None:
        raise fault  # outside the handler: its chain stays the database's error, not the carrier
    if isinstance(outcome, Raised):
        raise outcome.rebuild()
    return outcome


class DbosSteps:
    """The ``StepRunner`` of a worker: model calls and tool calls as DBOS steps."""

    async def run(self, kind: StepKind, name: str, fn: Callable[[], Awaitable[T]]) -> T:
        if kind == "model" or DBOS.workflow_id is None:
            return await durable(name, fn)
        attempt = ATTEMPT.get()
        reached_by = await durable(f"reach {name}", _current_attempt)

        async def guarded() -> T:
            if reached_by != attempt:
                raise CallInterrupted(
                    f"{name}: the worker running this call died before its result was recorded"
                )
            return await fn()

        return await durable(name, guarded)

    def new_id(self) -> str:
        return stable_id("id") or uuid.uuid4().hex


def stable_id(kind: str) -> str | None:
    """Inside a workflow, the n-th id of ``kind`` it draws, made of its id and n: the same again on
    replay, since a replay takes the same path. None outside a workflow."""
    workflow, drawn = DBOS.workflow_id, _IDS.get(None)
    if workflow is None or drawn is None:
        return None
    drawn[kind] = drawn.get(kind, 0) + 1
    return uuid.uuid5(uuid.NAMESPACE_URL, f"{workflow}/{kind}/{drawn[kind]}").hex


async def _current_attempt() -> str:
    return ATTEMPT.get()
