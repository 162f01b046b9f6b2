"""Which thread the running task works for, for the few parts below the agent that keep state per
thread without being handed the thread (a provider's ``complete`` takes only the request).

Set by `ArtInstance` around every run (a query, a resume, a recovery); read by the per-thread replay
of the ``scripted`` adapter (`pes_agent.testing.scripted.PerThreadReplay`). A context variable, so
concurrent runs on one event loop each see their own.
"""

from __future__ import annotations

from contextvars import ContextVar

RUN_THREAD: ContextVar[str | None] = ContextVar("pes_agent_run_thread", default=None)


def current_thread() -> str | None:
    """The thread of the run this task is executing; None outside a run."""
    return RUN_THREAD.get()
