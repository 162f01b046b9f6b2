"""The PostgreSQL store: one database that many workers, on many machines, share.

Driver: asyncpg. It is asyncio-native end to end (no thread hop per query, unlike SQLite here), ships
its own connection pool, and its wheels carry the wire protocol themselves, so ``pip install
'pes-agent[postgres]'`` is one package with no system libpq to match. psycopg 3 would also do (libpq
underneath, async API), but needs ``psycopg[binary]`` plus the separate ``psycopg-pool`` for the same
result. asyncpg prepares and caches statements per connection; behind pgbouncer in transaction mode
turn that off with ``pool_options={"statement_cache_size": 0}``.

The driver is imported when a store is built, never when ``pes_agent`` is, so SQLite and memory
users need not install it. State, arguments, results and event data are stored as JSON *text*, not
``jsonb``: text round-trips exactly what SQLite and memory return (``jsonb`` rejects ``\\u0000`` and
reorders keys), and nothing queries inside it. Lost writes are prevented by the same version
compare-and-set as in SQLite, which PostgreSQL's row locks make safe across connections.

The DSN usually holds a password, so it never appears in a repr or an error: those name
``host:port/database`` only, and any driver message is scrubbed of the password before it is shown.

This module holds the store's queries; its connections (the pool, and what each failure on them
means: transient, refused, misconfigured) are ``postgres_pool``'s.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, TypeVar

from pes_agent.errors import ConfigError, VersionConflictError
from pes_agent.events import Event, EventType
from pes_agent.state.journal import (
    CallFinish,
    JournalEntry,
    call_row,
    event_from_row,
    event_row,
    finish_rows,
    make_entry,
    message_from_row,
    message_row,
    not_started_error,
)
from pes_agent.state.memory import check_limit
from pes_agent.state.models import HistoryMessage, ThreadState, ThreadSummary
from pes_agent.state.postgres_dsn import describe_dsn
from pes_agent.state.postgres_pool import ConnectionPool
from pes_agent.state.postgres_schema import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION", "PostgresStore", "describe_dsn"]

T = TypeVar("T")

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")

_CALL_COLUMNS = "thread_id, item_id, call_id, tool_name, arguments, result, started_at, finished_at"


class PostgresStore:
    """``StateStore`` on PostgreSQL, with a small pool (``min_size`` to ``max_size`` connections).

    Nothing connects until first use; the tables (and ``schema``, when given) are created then, once,
    under an advisory lock so workers starting together do not race. ``schema`` puts the tables in
    their own namespace (one per tenant, or per test); without it the server's ``search_path``
    decides. ``pool_options`` go to ``asyncpg.create_pool`` as they are (``ssl``, statement cache).
    ``aclose()`` waits for queries in flight, then closes the pool.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        min_size: int = 1,
        max_size: int = 10,
        command_timeout: float | None = 60.0,
        acquire_timeout_s: float = 30.0,
        pool_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.where = describe_dsn(dsn)
        if schema is not None and not _IDENTIFIER.fullmatch(schema):
            raise ConfigError(
                f"PostgreSQL schema name {schema!r} is not a plain identifier (letters, digits and `_`, "
                "at most 63, not starting with a digit).",
                value=schema,
            )
        self.schema = schema
        self._connections = ConnectionPool(
            dsn,
            where=self.where,
            schema=schema,
            acquire_timeout_s=acquire_timeout_s,
            pool_options={
                "min_size": min_size,
                "max_size": max_size,
                "command_timeout": command_timeout,
                "timeout": 10.0,  # to connect: a host that drops packets is a fault to retry, not a 60 s hang
                **(pool_options or {}),
            },
        )

    def __repr__(self) -> str:
        schema = f", schema={self.schema!r}" if self.schema else ""
        return f"PostgresStore({self.where!r}{schema})"

    # -- state ------------------------------------------------------------------------------

    async def load(self, thread_id: str) -> tuple[ThreadState | None, int]:
        sql = "SELECT state, version FROM threads WHERE thread_id = $1"
        row = await self._run(lambda conn: conn.fetchrow(sql, thread_id))
        if row is None:
            return None, 0
        return ThreadState.model_validate_json(row[0]), int(row[1])

    async def save(self, thread_id: str, state: ThreadState, expected_version: int) -> int:
        """One statement, so no explicit transaction: the compare-and-set is the whole write."""
        raw, owner = state.model_dump_json(), state.owner
        now = time.time()
        return await self._run(lambda conn: _save_state(conn, thread_id, raw, owner, expected_version, now))

    async def threads(self, owner: str | None, *, limit: int = 50) -> list[ThreadSummary]:
        # `owner = $1` rather than IS NOT DISTINCT FROM, which no index serves.
        match = "owner IS NULL AND $1::text IS NULL" if owner is None else "owner = $1"
        sql = (
            f"SELECT thread_id, updated_at, state FROM threads WHERE {match} ORDER BY updated_at DESC "
            "LIMIT $2"
        )
        rows = await self._run(lambda conn: conn.fetch(sql, owner, check_limit(limit)))
        return [ThreadSummary.of(r[0], float(r[1]), ThreadState.model_validate_json(r[2])) for r in rows]

    # -- journal ----------------------------------------------------------------------------

    async def call_started(
        self,
        thread_id: str,
        item_id: str,
        call_id: str,
        tool_name: str,
        arguments: Mapping[str, Any],
    ) -> None:
        """A call already journaled is left exactly as it is (see ``StateStore``)."""
        sql = (
            "INSERT INTO tool_calls (thread_id, item_id, call_id, tool_name, arguments, started_at) "
            "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING"
        )
        args = call_row(thread_id, item_id, call_id, tool_name, arguments, time.time())
        await self._run(lambda conn: conn.execute(sql, *args))

    async def call_finished(
        self, thread_id: str, item_id: str, call_id: str, result: Mapping[str, Any]
    ) -> None:
        rows = finish_rows(thread_id, [CallFinish(item_id, call_id, result)], time.time())
        await self._run(lambda conn: _finish_calls(conn, rows))

    async def finish_calls_and_save(
        self,
        thread_id: str,
        state: ThreadState,
        expected_version: int,
        finished: Sequence[CallFinish],
    ) -> int:
        """The calls, then the state, in one transaction: a conflict rolls back both."""
        raw, owner = state.model_dump_json(), state.owner
        now = time.time()
        rows = finish_rows(thread_id, finished, now)

        async def step(conn: Any) -> int:
            async with conn.transaction():
                await _finish_calls(conn, rows)
                return await _save_state(conn, thread_id, raw, owner, expected_version, now)

        return await self._run(step)

    async def calls(self, thread_id: str, item_id: str | None = None) -> list[JournalEntry]:
        sql = f"SELECT {_CALL_COLUMNS} FROM tool_calls WHERE thread_id = $1"
        params: list[Any] = [thread_id]
        if item_id is not None:
            sql += " AND item_id = $2"
            params.append(item_id)
        rows = await self._run(lambda conn: conn.fetch(sql + " ORDER BY seq", *params))
        return [make_entry(*row) for row in rows]

    # -- events and history -----------------------------------------------------------------

    async def append_events(self, events: Sequence[Event]) -> None:
        """Appends in one transaction; an event id already stored is skipped, so a retry is safe."""
        if not events:
            return
        sql = (
            "INSERT INTO events (id, thread_id, type, step_id, trace_id, ts, data) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING"
        )
        rows = [event_row(ev) for ev in events]

        async def insert(conn: Any) -> None:
            async with conn.transaction():
                await conn.executemany(sql, rows)

        await self._run(insert)

    async def events(
        self,
        thread_id: str,
        types: Collection[EventType] | None = None,
        since: float | None = None,
    ) -> list[Event]:
        sql = "SELECT id, type, thread_id, trace_id, step_id, ts, data FROM events WHERE thread_id = $1"
        params: list[Any] = [thread_id]
        if since is not None:
            params.append(since)
            sql += f" AND ts > ${len(params)}"
        if types is not None:
            wanted = sorted({EventType(t).value for t in types})
            if not wanted:
                return []
            params.append(wanted)
            sql += f" AND type = ANY(${len(params)}::text[])"
        rows = await self._run(lambda conn: conn.fetch(sql + " ORDER BY seq", *params))
        return [event_from_row(row) for row in rows]

    async def append_message(self, thread_id: str, message: HistoryMessage) -> None:
        sql = (
            "INSERT INTO messages (thread_id, role, content, trace_id, ts, metadata) "
            "VALUES ($1, $2, $3, $4, $5, $6)"
        )
        args = message_row(thread_id, message)
        await self._run(lambda conn: conn.execute(sql, *args))

    async def messages(self, thread_id: str, limit: int | None = None) -> list[HistoryMessage]:
        """The last ``limit`` messages (all when None), oldest first."""
        columns = "seq, role, content, trace_id, ts, metadata"
        if limit is not None and check_limit(limit) == 0:
            return []
        if limit is None:
            sql = f"SELECT {columns} FROM messages WHERE thread_id = $1 ORDER BY seq"
            params: tuple[Any, ...] = (thread_id,)
        else:
            sql = (
                f"SELECT * FROM (SELECT {columns} FROM messages WHERE thread_id = $1 "
                "ORDER BY seq DESC LIMIT $2) AS last ORDER BY seq"
            )
            params = (thread_id, limit)
        rows = await self._run(lambda conn: conn.fetch(sql, *params))
        return [message_from_row(row) for row in rows]

    async def aclose(self) -> None:
        """Closes the pool once queries in flight are done; calling it twice is harmless."""
        await self._connections.aclose()

    async def _run(self, job: Callable[[Any], Awaitable[T]]) -> T:
        """``job`` on a pooled connection, its failures classified (see ``postgres_pool``)."""
        return await self._connections.run(job)


# -- statements -------------------------------------------------------------------------------


async def _save_state(
    conn: Any, thread_id: str, raw: str, owner: str | None, expected: int, now: float
) -> int:
    """``owner`` repeats the state's, as a column `threads` can filter on."""
    if expected == 0:
        # DO NOTHING rather than a plain INSERT: a racing first save must surface as a version
        # conflict, not as a unique violation.
        status = await conn.execute(
            "INSERT INTO threads (thread_id, version, state, updated_at, owner) VALUES ($1, 1, $2, $3, $4) "
            "ON CONFLICT (thread_id) DO NOTHING",
            thread_id,
            raw,
            now,
            owner,
        )
    else:
        # A concurrent writer holds the row lock until it commits; this UPDATE then re-checks the
        # version against the committed row, so exactly one writer per version wins.
        status = await conn.execute(
            "UPDATE threads SET version = version + 1, state = $2, updated_at = $3, owner = $5 "
            "WHERE thread_id = $1 AND version = $4",
            thread_id,
            raw,
            now,
            expected,
            owner,
        )
    if _rowcount(status) != 1:
        actual = await conn.fetchval("SELECT version FROM threads WHERE thread_id = $1", thread_id)
        raise VersionConflictError(thread_id, expected, int(actual or 0))
    return expected + 1


async def _finish_calls(conn: Any, rows: list[tuple[Any, ...]]) -> None:
    """Rows are ``(result, finished_at, thread, item, call)``; run inside the caller's transaction."""
    for row in rows:
        status = await conn.execute(
            "UPDATE tool_calls SET result = $1, finished_at = $2 "
            "WHERE thread_id = $3 AND item_id = $4 AND call_id = $5",
            *row,
        )
        if _rowcount(status) != 1:
            raise not_started_error(*row[2:])


def _rowcount(status: str) -> int:
    """asyncpg returns the command tag (``UPDATE 1``, ``INSERT 0 1``); the count is its last word."""
    return int(status.rsplit(" ", 1)[-1])
