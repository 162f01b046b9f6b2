"""Transient database faults: the one definition the store and the worker share, and riding them out.

A fault is *transient* when the database could not be reached or dropped the connection, so the same
operation may well succeed once the server answers again: a refused or lost connection, a server
shutting down or starting (``AdminShutdown``, ``CannotConnectNow``), a connection the server ended
under a query, too many connections, a pool or connect timeout. Everything else a server says is a
refusal (bad SQL, a missing right, a constraint) that no retry changes, and is never retried.

Decided on exception types and SQLSTATE codes only, never on message text. The drivers are looked up
in ``sys.modules``: a driver that was never imported raised nothing, so this module imports none.

- ``PostgresStore`` raises ``StoreUnavailableError`` for a transient fault (it also decides the two
  ambiguous asyncpg errors, ``InterfaceError`` and ``InternalClientError``, by the state of the
  connection they happened on: see ``needs_connection_check`` and ``postgres_pool.ConnectionPool.run``).
- ``ride_out`` retries an operation while it fails with a transient fault, for a window the operator
  sets (``workers.storeOutageS``), with a warning per attempt; past it, ``StoreUnavailableError``
  says for how long the database was unreachable.
- A worker never records a transient fault as the outcome of a DBOS step (``workers.steps``).
"""

from __future__ import annotations

import asyncio
import contextvars
import errno
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pes_agent.errors import StoreUnavailableError

__all__ = ["is_transient", "needs_connection_check", "new_outage_scope", "ride_out"]

logger = logging.getLogger("pes_agent.store")
T = TypeVar("T")

_STATES = frozenset(
    {
        "53300",  # too_many_connections: a slot frees when a client leaves
        "57P01",  # admin_shutdown: `pg_ctl stop/restart -m fast`, a connection ended by the server
        "57P02",  # crash_shutdown: another backend crashed, the server restarts
        "57P03",  # cannot_connect_now: the server is starting or shutting down
    }
)
"""SQLSTATEs of a server going away or not yet back. Class 08 (connection exception) counts too.
Not 57014 (a statement cancelled or timed out: repeating it would undo the cancel) nor 57P04 (the
database was dropped: it will not come back)."""

_NETWORK_ERRNOS = frozenset({errno.ENETDOWN, errno.ENETUNREACH, errno.EHOSTDOWN, errno.EHOSTUNREACH})

RUN_ADVICE = (
    ". The run stopped there; once the database is back, continue it from its journal with "
    "`Producer.recover(thread_id)`: finished tool calls do not run again"
)
"""What a run's caller is told to do after the window (``ride_out``'s default advice)."""

FIRST_WAIT_S = 0.1
MAX_WAIT_S = 2.0
"""Backoff between attempts: short first (a fast restart is ~3 s), capped so that a run goes on within
about two seconds of the server coming back."""


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is a transient database fault (see the module docstring)."""
    if isinstance(exc, StoreUnavailableError):
        return True  # the store already decided (it knows the connection the fault happened on)
    if isinstance(exc, (ConnectionError, TimeoutError)):  # refused, reset, aborted; a connect or pool timeout
        return True
    if isinstance(exc, OSError) and exc.errno in _NETWORK_ERRNOS:
        return True  # not every OSError: a full disk is no network fault and stays one
    asyncpg = sys.modules.get("asyncpg")
    if asyncpg is not None and isinstance(exc, asyncpg.PostgresError):
        return _transient_state(getattr(exc, "sqlstate", None))
    sqlalchemy_exc = sys.modules.get("sqlalchemy.exc")
    if sqlalchemy_exc is not None:  # DBOS's system database (SQLAlchemy over psycopg)
        if isinstance(exc, sqlalchemy_exc.TimeoutError):  # pool checkout timed out
            return True
        if isinstance(exc, sqlalchemy_exc.DBAPIError):
            return bool(exc.connection_invalidated) or (exc.orig is not None and is_transient(exc.orig))
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None and isinstance(exc, psycopg.OperationalError):
        state = getattr(exc, "sqlstate", None)
        return state is None or _transient_state(state)  # no SQLSTATE: the connection failed or broke
    return False


def needs_connection_check(exc: BaseException) -> bool:
    """asyncpg's ``InterfaceError`` is a client-side state: a connection the server ended ("connection
    is closed", a proxy detached from the pool) or a misuse of a healthy one. Its type cannot tell; the
    connection can: the store probes it, and only a broken one makes the fault transient.
    (``InternalClientError`` is decided by the store from the connection's protocol state: see
    ``postgres_pool.ConnectionPool.run``.)"""
    asyncpg = sys.modules.get("asyncpg")
    return asyncpg is not None and isinstance(exc, asyncpg.InterfaceError)


def _transient_state(state: str | None) -> bool:
    return state is not None and (state.startswith("08") or state in _STATES)


class _Outage:
    """When the current outage began for one run (None while the database answers). Shared by the
    run's operations, so that its window is counted once per outage, not again for each operation
    that meets it (a run that gave up must not wait a new window to release its thread)."""

    __slots__ = ("since",)

    def __init__(self) -> None:
        self.since: float | None = None


_SCOPE: contextvars.ContextVar[_Outage | None] = contextvars.ContextVar("pes_agent_outage", default=None)


def new_outage_scope() -> None:
    """Begin a run's outage clock (a worker calls it first thing in each execution of a workflow)."""
    _SCOPE.set(_Outage())


async def ride_out(
    operation: Callable[[], Awaitable[T]],
    window_s: float,
    *,
    what: str = "the store",
    advice: str = RUN_ADVICE,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """``operation``, tried again while it fails with a transient fault, until the database has been
    unreachable for ``window_s`` (counted from the outage's first fault in this run). Then
    ``StoreUnavailableError`` with ``unreachable_s`` set, its message saying for how long.
    Any other error is raised at once. ``advice`` ends that message (what to do next); ``clock`` and
    ``sleep`` are seams for tests."""
    outage = _SCOPE.get() or _Outage()
    wait = FIRST_WAIT_S
    attempt = 0
    while True:
        attempt += 1
        try:
            result = await operation()
        except Exception as exc:
            if not is_transient(exc):
                raise
            now = clock()
            if outage.since is None:
                outage.since = now
            down = now - outage.since
            left = window_s - down
            if left <= 0:
                raise StoreUnavailableError(
                    f"{what} was unreachable for {round(down, 1):g} s (`workers.storeOutageS` is "
                    f"{window_s:g} s; "
                    f"last error: {exc}){advice}",
                    unreachable_s=down,
                ) from exc
            pause = min(wait, left)
            logger.warning(
                "%s unreachable for %.1f s (try %d, window %g s), trying again in %.1f s: %s",
                what,
                down,
                attempt,
                window_s,
                pause,
                exc,
            )
            await sleep(pause)
            wait = min(wait * 2, MAX_WAIT_S)
            continue
        outage.since = None
        return result
