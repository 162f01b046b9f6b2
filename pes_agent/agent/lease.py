"""Leases: one run per thread at a time, across processes and machines sharing a store.

A run writes its lease into the thread state with a compare-and-set save before it calls any model;
a second run that finds a live lease is refused (or waits). The lease is refreshed on every save, so
the lease of a run that died goes stale after ``concurrency.leaseTimeoutS``, or at once when its
owner was a process on this host that no longer exists.
"""

from __future__ import annotations

import os
import socket

from pes_agent.state.models import Lease

HOST = socket.gethostname()


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
    """True when nobody is running under this lease any more."""
    if now - lease.heartbeat > timeout_s:
        return True
    host, _, pid = lease.owner.rpartition(":")
    if host != HOST or not pid.isdigit():
        return False
    # This process holds no lease it is not running (the in-process lock sees to that), so a lease
    # of ours that is still written down belongs to a run that ended without releasing it.
    return int(pid) == os.getpid() or not _alive(int(pid))
