"""The PostgreSQL store's connections, and what each failure on them means.

The driver (asyncpg) is imported when a store is built; the pool opens on first use and the tables
are created then (``postgres_schema.migrate``). Every operation runs on a pooled connection through
``ConnectionPool.run``, which classifies how it failed: a transient fault (``pes_agent.state.transient``,
or an ambiguous driver error on a connection a probe finds broken) is ``StoreUnavailableError`` and
expires the pool's idle connections; a refusal by the server or the driver is a ``PesAgentError`` saying
nothing was applied; a server that refuses the DSN at connect is the ``ConfigError`` it stays. No
message shows the DSN's password (``_scrub``). The queries themselves are ``postgres.PostgresStore``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from pes_agent.errors import ConfigError, PesAgentError, StoreUnavailableError
from pes_agent.state.postgres_dsn import secret_parts
from pes_agent.state.postgres_schema import migrate
from pes_agent.state.transient import is_transient, needs_connection_check

T = TypeVar("T")

PROBE_TIMEOUT_S = 2.0
"""How long the probe of a suspect connection may take before it counts as broken."""


class ConnectionPool:
    """A store's asyncpg pool, opened once on first use and closed by ``aclose``."""

    def __init__(
        self,
        dsn: str,
        *,
        where: str,
        schema: str | None,
        acquire_timeout_s: float,
        pool_options: Mapping[str, Any],
    ) -> None:
        self.where = where
        self.schema = schema
        self._dsn = dsn
        self._secrets = secret_parts(dsn)
        self._driver = import_driver()
        self._acquire_timeout_s = acquire_timeout_s
        self._pool_options = dict(pool_options)
        self._pool: Any = None
        self._pool_lock = asyncio.Lock()
        self._closed = False

    async def aclose(self) -> None:
        """Closes the pool once queries in flight are done; calling it twice is harmless."""
        self._closed = True
        async with self._pool_lock:  # waits for a pool being opened right now
            pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def run(self, job: Callable[[Any], Awaitable[T]]) -> T:
        """``job`` on a pooled connection. A transient fault (``pes_agent.state.transient``) is
        ``StoreUnavailableError``, and the pool's idle connections are expired with it: after a server
        restart each of them is dead, and would otherwise fail the next operation that takes it."""
        pool = None
        try:
            pool = await self._ready_pool()
            conn = await pool.acquire(timeout=self._acquire_timeout_s)
            try:
                try:
                    return await job(conn)
                except Exception as exc:
                    # asyncpg's InternalClientError ("cannot switch to state 15; another operation (2)
                    # is in progress") means the connection's protocol was not idle as this operation
                    # began: after a restart, pooled connections still consume the server's farewell
                    # for a few seconds (measured: benchmarks/db_faults.py), so a probe right after
                    # may even pass. It is raised before anything is sent, so nothing was applied and
                    # another connection may take the operation: the connection is dropped, the fault
                    # is transient. An InterfaceError is transient only on a connection a probe finds
                    # broken; on a healthy one it is a misuse, which no retry mends.
                    if isinstance(exc, self._driver.InternalClientError) or (
                        needs_connection_check(exc) and await _broken(conn)
                    ):
                        with contextlib.suppress(Exception):  # already detached: nothing to drop
                            conn.terminate()  # dropped: the pool opens a new one in its place
                        raise _BrokenConnection() from exc
                    raise
            finally:
                await _give_back(pool, conn)
        except PesAgentError:
            raise
        except Exception as exc:
            cause = exc.__cause__ if isinstance(exc, _BrokenConnection) else exc
            if not isinstance(exc, (_BrokenConnection, OSError)) and not is_transient(exc):
                if isinstance(
                    exc, self._driver.PostgresError
                ):  # the server refused it: trying again won't help
                    raise PesAgentError(
                        f"PostgreSQL store at {self.where!r}: the server refused the operation: "
                        f"{self._scrub(exc)}. Nothing was applied; check the database user's rights and the "
                        "schema."
                    ) from exc
                if isinstance(exc, self._driver.InterfaceError):
                    raise PesAgentError(  # on a healthy connection (see `_broken`): a misuse, not an outage
                        f"PostgreSQL store at {self.where!r}: the driver refused the operation on a healthy "
                        f"connection: {self._scrub(exc)}. Nothing was applied; this is a bug to report."
                    ) from exc
                raise
            if pool is not None:
                await pool.expire_connections()
            # Chained: a query's error comes from the server, which never sees the DSN.
            raise StoreUnavailableError(
                f"PostgreSQL store at {self.where!r}: {self._scrub(cause or exc)}. Check that the server is "
                "up "
                "and reachable; the operation was not applied unless the server committed it."
            ) from exc

    async def _ready_pool(self) -> Any:
        if self._closed:
            raise PesAgentError(
                f"PostgreSQL store at {self.where!r} is closed; open a new store (or instance) to use it "
                "again."
            )
        if self._pool is None:
            async with self._pool_lock:
                if self._pool is None and not self._closed:
                    self._pool = await self._open_pool()
        if self._pool is None:  # closed while this call waited for the lock
            return await self._ready_pool()
        return self._pool

    async def _open_pool(self) -> Any:
        """Connects and creates the tables; a connection error is not chained (it may echo the DSN).
        A server that is down or starting is ``StoreUnavailableError`` (a worker waits for it); one
        that refuses the DSN (a wrong password or database) is the ``ConfigError`` it stays."""
        settings = {"application_name": "pes-agent"}
        if self.schema is not None:
            settings["search_path"] = self.schema
        errors = (OSError, TimeoutError, ValueError, self._driver.PostgresError, self._driver.InterfaceError)
        reason, transient = None, False
        try:
            pool = await self._driver.create_pool(
                dsn=self._dsn, server_settings=settings, **self._pool_options
            )
        except errors as exc:
            reason, transient = self._scrub(exc), isinstance(exc, OSError) or is_transient(exc)
        if reason is not None and transient:  # raised outside the handler: the driver's error is not attached
            raise StoreUnavailableError(
                f"cannot connect to the PostgreSQL store at {self.where!r} ({reason}); check that the server "
                "is running and reachable from here."
            )
        if reason is not None:
            raise ConfigError(
                f"cannot connect to the PostgreSQL store at {self.where!r} ({reason}); check `storage.dsn` "
                "(host, port, database, user, password) and that the server is running.",
                key_path="storage.dsn",
                value=self.where,
            )
        try:
            async with pool.acquire() as conn:
                await migrate(conn, self.schema, self.where)
        except BaseException:
            pool.terminate()
            raise  # a migration error comes from the server (see `_run`) or is already ours
        return pool

    def _scrub(self, exc: BaseException) -> str:
        """The driver's message with the DSN and its password masked, prefixed by the error type."""
        text = f"{type(exc).__name__}: {exc}"
        for secret in self._secrets:
            text = text.replace(secret, "**********")
        return text


class _BrokenConnection(Exception):
    """Internal: an ambiguous driver error (``needs_connection_check``) on a connection that is broken."""


async def _give_back(pool: Any, conn: Any) -> None:
    """Returns ``conn`` to the pool; a failure there never replaces the operation's own outcome.

    The pool resets a connection it takes back, and right after a server restart that reset can meet
    the server's farewell still being read (asyncpg's ``InternalClientError``, "another operation is in
    progress"): measured in CI as a run failed *after* its write had committed. The operation's result
    (or its own error) is what the caller must see; the pool has terminated the connection and opens a
    new one in its place, so nothing is left to do here."""
    with contextlib.suppress(Exception):
        await pool.release(conn)


async def _broken(conn: Any) -> bool:
    """Whether a connection that raised an ambiguous client-side error is broken. A probe that cannot
    run (the connection closed, its protocol stuck after the server ended it) says so; one that
    answers shows the error was a misuse of a healthy connection, which no retry would mend."""
    try:
        # A connection the server ended may already be detached from the pool's proxy, whose every
        # method then raises InterfaceError: that too is a broken connection.
        if conn.is_closed():
            return True
        await asyncio.wait_for(conn.fetchval("SELECT 1"), PROBE_TIMEOUT_S)
    except Exception:  # noqa: BLE001 -- any failure of the probe is what "broken" means here
        return True
    return False


def import_driver() -> Any:
    try:
        return importlib.import_module("asyncpg")
    except ImportError as exc:
        raise ConfigError(
            "`storage.type: postgres` needs the asyncpg driver, which is not installed; run "
            "`pip install 'pes-agent[postgres]'`.",
            key_path="storage.type",
            value="postgres",
        ) from exc
