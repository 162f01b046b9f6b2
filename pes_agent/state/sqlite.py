"""The default store: one SQLite file that several instances and processes can share.

Every statement runs on one worker thread owned by the store. That keeps blocking file I/O off the
event loop and satisfies sqlite3's rule that a connection stays on the thread that made it, while
also serialising this process's writers. Writers in *other* processes are handled by WAL, a busy
timeout and ``BEGIN IMMEDIATE``; lost writes are prevented by the version compare-and-set in
``save``, not by locks held across awaits.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from pes_agent.errors import ConfigError, PesAgentError, VersionConflictError
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
from pes_agent.state.sqlite_schema import SCHEMA_VERSION, migrate, write_transaction

__all__ = ["SCHEMA_VERSION", "SQLiteStore"]

T = TypeVar("T")


class SQLiteStore:
    """``StateStore`` on a SQLite file (or ``":memory:"``, private to this store).

    The connection opens lazily on first use, so constructing a store never touches the disk and
    a bad path is reported where the store is first needed, with the path in the message.
    """

    def __init__(self, path: str, *, busy_timeout: float = 10.0) -> None:
        self.path = path
        self._busy_timeout = busy_timeout
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pes-agent-sqlite")
        self._conn: sqlite3.Connection | None = None  # only ever touched on the worker thread
        self._closed = False

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    # -- StateStore -------------------------------------------------------------------------

    async def load(self, thread_id: str) -> tuple[ThreadState | None, int]:
        return await self._run(lambda conn: _load_state(conn, thread_id))

    async def save(self, thread_id: str, state: ThreadState, expected_version: int) -> int:
        """Compare-and-set on the version.

        A save whose caller is cancelled mid-await may still commit (the worker finishes the job);
        the caller's next save then conflicts rather than overwriting, so no write is lost.
        """
        # Serialised here, not on the worker, so a caller mutating `state` after the await
        # starts cannot change what gets written.
        raw, owner = state.model_dump_json(), state.owner
        now = time.time()
        return await self._run(
            lambda conn: _in_write(conn, _save_state, thread_id, raw, owner, expected_version, now)
        )

    async def threads(self, owner: str | None, *, limit: int = 50) -> list[ThreadSummary]:
        return await self._run(lambda conn: _select_threads(conn, owner, check_limit(limit)))

    async def call_started(
        self,
        thread_id: str,
        item_id: str,
        call_id: str,
        tool_name: str,
        arguments: Mapping[str, Any],
    ) -> None:
        """A call already journaled is left exactly as it is (see ``StateStore``)."""
        row = call_row(thread_id, item_id, call_id, tool_name, arguments, time.time())
        await self._run(lambda conn: _insert_call(conn, row))

    async def call_finished(
        self, thread_id: str, item_id: str, call_id: str, result: Mapping[str, Any]
    ) -> None:
        rows = finish_rows(thread_id, [CallFinish(item_id, call_id, result)], time.time())
        await self._run(lambda conn: _in_write(conn, _finish_calls, rows))

    async def finish_calls_and_save(
        self,
        thread_id: str,
        state: ThreadState,
        expected_version: int,
        finished: Sequence[CallFinish],
    ) -> int:
        """The calls first, then the state, in one transaction: a conflict rolls back both."""
        raw, owner = state.model_dump_json(), state.owner
        now = time.time()
        rows = finish_rows(thread_id, finished, now)

        def step(conn: sqlite3.Connection) -> int:
            _finish_calls(conn, rows)
            return _save_state(conn, thread_id, raw, owner, expected_version, now)

        return await self._run(lambda conn: _in_write(conn, step))

    async def calls(self, thread_id: str, item_id: str | None = None) -> list[JournalEntry]:
        return await self._run(lambda conn: _select_calls(conn, thread_id, item_id))

    async def append_events(self, events: Sequence[Event]) -> None:
        """Appends in one transaction; an event id already stored is skipped, so a retry is safe."""
        if not events:
            return
        rows = [event_row(ev) for ev in events]
        await self._run(lambda conn: _insert_events(conn, rows))

    async def events(
        self,
        thread_id: str,
        types: Collection[EventType] | None = None,
        since: float | None = None,
    ) -> list[Event]:
        wanted = sorted({EventType(t).value for t in types}) if types is not None else None
        if wanted == []:
            return []
        return await self._run(lambda conn: _select_events(conn, thread_id, wanted, since))

    async def append_message(self, thread_id: str, message: HistoryMessage) -> None:
        row = message_row(thread_id, message)
        await self._run(lambda conn: _insert_message(conn, row))

    async def messages(self, thread_id: str, limit: int | None = None) -> list[HistoryMessage]:
        """The last ``limit`` messages (all when None), oldest first."""
        if limit is not None and check_limit(limit) == 0:
            return []
        return await self._run(lambda conn: _select_messages(conn, thread_id, limit))

    async def aclose(self) -> None:
        """Closes the connection, then the worker; calling it twice is harmless."""
        if self._closed:
            return
        self._closed = True
        # Queued behind any job already submitted, so those finish on an open connection.
        await asyncio.get_running_loop().run_in_executor(self._executor, self._close_connection)
        self._executor.shutdown(wait=True)  # the worker is idle by now: this join is immediate

    # -- worker plumbing --------------------------------------------------------------------

    async def _run(self, job: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise PesAgentError(
                f"SQLite store {self.path!r} is closed; open a new store (or instance) to use it again."
            )
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._on_worker, job)

    def _on_worker(self, job: Callable[[sqlite3.Connection], T]) -> T:
        try:
            return job(self._conn if self._conn is not None else self._open())
        except sqlite3.Error as exc:
            raise PesAgentError(
                f"SQLite store {self.path!r}: {exc}. Check that the file is writable and that no "
                f"other process holds a write lock for longer than {self._busy_timeout:g}s."
            ) from exc

    def _open(self) -> sqlite3.Connection:
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: no implicit transactions; the jobs say where each one starts.
            # `timeout` is sqlite's busy timeout: wait for another process's lock, don't fail.
            conn = sqlite3.connect(self.path, timeout=self._busy_timeout, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(
                f"cannot open the SQLite store at {self.path!r} ({exc}); point `storage.path` at a "
                "writable location.",
                key_path="storage.path",
                value=self.path,
            ) from exc
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            migrate(conn, self.path)
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        return conn

    def _close_connection(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


# -- jobs (run on the worker thread) ----------------------------------------------------------


def _load_state(conn: sqlite3.Connection, thread_id: str) -> tuple[ThreadState | None, int]:
    row = conn.execute("SELECT state, version FROM threads WHERE thread_id = ?", (thread_id,)).fetchone()
    if row is None:
        return None, 0
    return ThreadState.model_validate_json(row[0]), int(row[1])


def _select_threads(conn: sqlite3.Connection, owner: str | None, limit: int) -> list[ThreadSummary]:
    rows = conn.execute(
        "SELECT thread_id, updated_at, state FROM threads WHERE owner IS ? ORDER BY updated_at DESC LIMIT ?",
        (owner, limit),
    ).fetchall()
    return [ThreadSummary.of(tid, float(at), ThreadState.model_validate_json(raw)) for tid, at, raw in rows]


def _in_write(conn: sqlite3.Connection, job: Callable[..., T], *args: Any) -> T:
    with write_transaction(conn):
        return job(conn, *args)


def _save_state(
    conn: sqlite3.Connection, thread_id: str, raw: str, owner: str | None, expected: int, now: float
) -> int:
    """Inside a write transaction: the version compare-and-set. ``owner`` repeats the state's, as a
    column `threads` can filter on."""
    if expected == 0:
        # DO NOTHING rather than a plain INSERT: a racing first save must surface as a
        # version conflict, not as an IntegrityError.
        cur = conn.execute(
            "INSERT INTO threads (thread_id, version, state, updated_at, owner) VALUES (?, 1, ?, ?, ?) "
            "ON CONFLICT (thread_id) DO NOTHING",
            (thread_id, raw, now, owner),
        )
    else:
        cur = conn.execute(
            "UPDATE threads SET version = version + 1, state = ?, updated_at = ?, owner = ? "
            "WHERE thread_id = ? AND version = ?",
            (raw, now, owner, thread_id, expected),
        )
    if cur.rowcount != 1:
        row = conn.execute("SELECT version FROM threads WHERE thread_id = ?", (thread_id,)).fetchone()
        raise VersionConflictError(thread_id, expected, int(row[0]) if row else 0)
    return expected + 1


def _insert_call(conn: sqlite3.Connection, row: tuple[Any, ...]) -> None:
    conn.execute(
        "INSERT INTO tool_calls (thread_id, item_id, call_id, tool_name, arguments, started_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        row,
    )


def _finish_calls(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Inside a write transaction; rows are ``(result, finished_at, thread, item, call)``."""
    for row in rows:
        cur = conn.execute(
            "UPDATE tool_calls SET result = ?, finished_at = ? "
            "WHERE thread_id = ? AND item_id = ? AND call_id = ?",
            row,
        )
        if cur.rowcount != 1:
            raise not_started_error(*row[2:])


def _select_calls(conn: sqlite3.Connection, thread_id: str, item_id: str | None) -> list[JournalEntry]:
    sql = (
        "SELECT thread_id, item_id, call_id, tool_name, arguments, result, started_at, finished_at "
        "FROM tool_calls WHERE thread_id = ?"
    )
    params: tuple[str, ...] = (thread_id,)
    if item_id is not None:
        sql += " AND item_id = ?"
        params += (item_id,)
    return [make_entry(*row) for row in conn.execute(sql + " ORDER BY rowid", params)]


def _insert_events(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    with write_transaction(conn):
        conn.executemany(
            "INSERT INTO events (id, thread_id, type, step_id, trace_id, ts, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
            rows,
        )


def _select_events(
    conn: sqlite3.Connection, thread_id: str, types: list[str] | None, since: float | None
) -> list[Event]:
    sql = "SELECT id, type, thread_id, trace_id, step_id, ts, data FROM events WHERE thread_id = ?"
    params: list[Any] = [thread_id]
    if since is not None:
        sql += " AND ts > ?"
        params.append(since)
    if types is not None:
        sql += f" AND type IN ({', '.join('?' * len(types))})"
        params.extend(types)
    sql += " ORDER BY rowid"  # append order, across processes too
    return [event_from_row(row) for row in conn.execute(sql, params)]


def _insert_message(conn: sqlite3.Connection, row: tuple[Any, ...]) -> None:
    # One statement, so numbering and insert are atomic even against other processes.
    conn.execute(
        "INSERT INTO messages (thread_id, seq, role, content, trace_id, ts, metadata) "
        "SELECT ?1, COALESCE(MAX(seq), 0) + 1, ?2, ?3, ?4, ?5, ?6 FROM messages WHERE thread_id = ?1",
        row,
    )


def _select_messages(conn: sqlite3.Connection, thread_id: str, limit: int | None) -> list[HistoryMessage]:
    columns = "seq, role, content, trace_id, ts, metadata"
    if limit is None:
        sql = f"SELECT {columns} FROM messages WHERE thread_id = ? ORDER BY seq"
        params: tuple[Any, ...] = (thread_id,)
    else:
        sql = (
            f"SELECT * FROM (SELECT {columns} FROM messages WHERE thread_id = ? "
            "ORDER BY seq DESC LIMIT ?) ORDER BY seq"
        )
        params = (thread_id, limit)
    return [message_from_row(row) for row in conn.execute(sql, params)]
