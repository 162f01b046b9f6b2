"""Before a worker says it takes runs: both of its databases answer, or one clear line says which not.

A worker needs the store (threads, journal, events) and DBOS's system database (the queues). Either
may be down when the worker starts (a machine booting, a failover): the worker waits for each within
``workers.storeOutageS``, as runs do. One still unreachable then is ``StoreUnavailableError`` naming
``host:port/database`` (never the user or password) and what to check; the CLI prints that one line
and exits with ``EXIT_UNREACHABLE``. A database that refuses the credentials is a ``ConfigError`` at
once: no wait mends a wrong password.
"""

from __future__ import annotations

import re
from typing import Any

from pes_agent.errors import ConfigError, PesAgentError, StoreUnavailableError
from pes_agent.state.postgres_dsn import describe_dsn, secret_parts
from pes_agent.state.store import StateStore
from pes_agent.state.transient import is_transient, new_outage_scope, ride_out

__all__ = ["EXIT_UNREACHABLE", "describe_system_database", "store_answers", "system_database_answers"]

EXIT_UNREACHABLE = 75
"""``pes-agent worker``'s exit status when a database cannot be reached at start (EX_TEMPFAIL of
sysexits.h: try again later). A supervisor restarts on it; a configuration error exits 2."""

PROBE_THREAD = "pes-agent:readiness-probe"
"""A thread id no run uses: loading it opens the pool and creates the tables, and reads no row."""

CONNECT_TIMEOUT_S = 10.0

_ADVICE = "; check that PostgreSQL runs at that address and accepts connections from this host"


async def store_answers(store: StateStore, window_s: float) -> None:
    """Wait (up to ``window_s``) until the store answers a read."""
    where = getattr(store, "where", None)
    what = f"the store at {where!r}" if where else "the store"
    new_outage_scope()
    await ride_out(lambda: store.load(PROBE_THREAD), window_s, what=what, advice=_ADVICE)


async def system_database_answers(url: str, window_s: float) -> None:
    """Wait (up to ``window_s``) until DBOS's system database accepts a connection. SQLite needs no
    server. A database that does not exist yet answers: DBOS creates it at launch."""
    if not re.match(r"postgres(ql)?(\+\w+)?://", url):
        return
    dsn = re.sub(r"^postgres(ql)?\+\w+://", "postgresql://", url)
    where = describe_system_database(url)
    secrets = secret_parts(dsn)
    new_outage_scope()

    async def connect() -> None:
        try:
            await _connect_once(dsn)
        except Exception as exc:
            if is_transient(exc):
                raise
            if _missing_database(exc):
                return
            text = f"{type(exc).__name__}: {exc}"
            for secret in secrets:
                text = text.replace(secret, "**********")
            raise ConfigError(  # not chained: a driver's message may echo the URL
                f"the DBOS system database at {where!r} refused the connection ({text}); check "
                "`workers.systemDatabase` (host, port, database, user, password)",
                key_path="workers.systemDatabase",
                value=where,
            ) from None

    await ride_out(connect, window_s, what=f"the DBOS system database at {where!r}", advice=_ADVICE)


def describe_system_database(url: str) -> str:
    """``host:port/database`` of the system database URL (``sqlite:///…`` is shown as is)."""
    if not re.match(r"postgres(ql)?(\+\w+)?://", url):
        return url.split("?", 1)[0]
    return describe_dsn(re.sub(r"^postgres(ql)?\+\w+://", "postgresql://", url))


def unreachable_at_launch(url: str, exc: Exception) -> PesAgentError:
    """What DBOS's launch raised, as the one error the CLI prints: transient or not, without the URL's
    password."""
    where = describe_system_database(url)
    text = type(exc).__name__
    if is_transient(exc):
        return StoreUnavailableError(
            f"the DBOS system database at {where!r} could not be reached while DBOS started ({text}){_ADVICE}"
        )
    return PesAgentError(
        f"DBOS could not start on its system database at {where!r} ({text}); the worker's log has the "
        "details: check `workers.systemDatabase` and that its user may create tables there"
    )


async def _connect_once(dsn: str) -> None:
    try:
        import asyncpg
    except ImportError:  # the dbos extra alone: its own driver
        import psycopg

        conn: Any = await psycopg.AsyncConnection.connect(dsn, connect_timeout=int(CONNECT_TIMEOUT_S))
        await conn.close()
        return
    conn = await asyncpg.connect(dsn, timeout=CONNECT_TIMEOUT_S)
    await conn.close()


def _missing_database(exc: Exception) -> bool:
    return getattr(exc, "sqlstate", None) == "3D000"  # invalid_catalog_name: DBOS creates it
