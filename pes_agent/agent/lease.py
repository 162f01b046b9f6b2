"""Leases: one run per thread at a time, across processes and machines sharing a store.

A run writes its lease into the thread state with a compare-and-set save before it calls any model;
a second run that finds a live lease is refused (or waits). The lease is refreshed on every save, so
the lease of a run that died goes stale after ``concurrency.leaseTimeoutS``, or at once when its
owner was a process on this host that no longer exists.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from pes_agent.agent.context import RunContext
from pes_agent.agent.run_thread import RUN_THREAD
from pes_agent.config import ConcurrencyConfig
from pes_agent.errors import ThreadBusyError, VersionConflictError
from pes_agent.state.models import Lease, ThreadState
from pes_agent.state.store import StateStore

T = TypeVar("T")

HOST = socket.gethostname()

_HELD: set[str] = set()
"""Trace ids of the runs this process is executing: a lease of this pid is live only if listed.
Process-wide on purpose, since several ArtInstances in one process may share a store."""


def owner() -> str:
    return f"{HOST}:{os.getpid()}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_stale(lease: Lease, *, now: float, timeout_s: float) -> bool:
    """True when nobody is running under this lease any more.

    On this host the answer is exact (our own runs are listed; another process is alive or not);
    for a lease from another host, only the heartbeat's age can tell.
    """
    host, _, pid = lease.owner.rpartition(":")
    if host == HOST and pid.isdigit():
        if int(pid) == os.getpid():
            return lease.trace_id not in _HELD
        if not _alive(int(pid)):
            return True
    return now - lease.heartbeat > timeout_s


async def claim(
    store: StateStore,
    thread_id: str,
    trace_id: str,
    state: ThreadState | None,
    version: int,
    *,
    config: ConcurrencyConfig,
    clock: Callable[[], float],
    ended_trace: str | None = None,
) -> tuple[ThreadState, int]:
    """Take the thread's lease with a compare-and-set save, before any model call. A lease of the
    ``ended_trace`` (a run its caller knows has ended) is taken over as a stale one would be."""
    deadline = clock() + config.wait_timeout_s
    while True:
        lease = state.lease if state is not None else None
        if (
            lease is None
            or lease.trace_id == ended_trace
            or is_stale(lease, now=clock(), timeout_s=config.lease_timeout_s)
        ):
            fresh = state or ThreadState()
            fresh.lease = Lease(trace_id=trace_id, owner=owner(), heartbeat=clock())
            fresh.stopped = None  # a run owns the thread now: a stopped one is continued or replaced
            try:
                saved = await store.save(thread_id, fresh, version)
            except VersionConflictError:
                pass  # another worker claimed it between our load and our save
            else:
                _HELD.add(trace_id)
                return fresh, saved
        if config.on_busy_thread == "refuse" or clock() > deadline:
            raise ThreadBusyError(thread_id)
        await asyncio.sleep(0.2)
        state, version = await store.load(thread_id)


async def release(ctx: RunContext) -> None:
    """Give the lease back if the run still holds it (it ended without `save_and_release`, e.g. by
    raising); a lost race means another run owns the thread now, which is fine."""
    if ctx.state.lease is None:
        return
    with contextlib.suppress(VersionConflictError):
        await save_and_release(ctx)


async def save_and_release(ctx: RunContext) -> None:
    """The run's last save also gives the lease back: one write where there would be two."""
    if ctx.state.lease is not None:
        _HELD.discard(ctx.state.lease.trace_id)
    ctx.state.lease = None
    await ctx.save()


async def abandon(store: StateStore, thread_id: str, trace_id: str) -> None:
    """Drop a claim whose run never got going (it failed before or outside the run itself)."""
    _HELD.discard(trace_id)
    state, version = await store.load(thread_id)
    if state is None or state.lease is None or state.lease.trace_id != trace_id:
        return
    state.lease = None
    with contextlib.suppress(VersionConflictError):
        await store.save(thread_id, state, version)


@contextlib.asynccontextmanager
async def abandon_on_error(store: StateStore, thread_id: str, trace_id: str) -> AsyncIterator[None]:
    """A claim whose run fails before `run_then_release` takes over is given back, not left holding."""
    try:
        yield
    except BaseException:
        await abandon(store, thread_id, trace_id)
        raise


async def run_then_release(ctx: RunContext, run: Awaitable[T]) -> T:
    """Run (as the task working for ``ctx``'s thread: `RUN_THREAD`), then give the lease back (also
    when the run raised)."""
    token = RUN_THREAD.set(ctx.thread_id)
    try:
        return await run
    finally:
        RUN_THREAD.reset(token)
        await release(ctx)
