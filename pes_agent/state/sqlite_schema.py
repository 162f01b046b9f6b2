"""The SQLite store's tables and how a file is brought up to date with them.

The version lives in ``PRAGMA user_version`` and is checked whenever a connection opens. An older
file is migrated under the same ``BEGIN IMMEDIATE`` write lock every writer takes, so processes
opening it together migrate it exactly once; a file newer than this code is refused, not written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from pes_agent.errors import ConfigError

SCHEMA_VERSION = 3
"""Stored in ``PRAGMA user_version``; bump it and add a step to ``MIGRATIONS`` to change tables."""

SCHEMA_V1 = (
    """CREATE TABLE IF NOT EXISTS threads (
        thread_id TEXT PRIMARY KEY,
        version INTEGER NOT NULL,
        state TEXT NOT NULL,
        updated_at REAL NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS events (
        id TEXT PRIMARY KEY,
        thread_id TEXT NOT NULL,
        type TEXT NOT NULL,
        step_id TEXT,
        trace_id TEXT NOT NULL,
        ts REAL NOT NULL,
        data TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS events_thread_ts ON events (thread_id, ts)",
    """CREATE TABLE IF NOT EXISTS messages (
        thread_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        trace_id TEXT,
        ts REAL NOT NULL,
        metadata TEXT NOT NULL,
        PRIMARY KEY (thread_id, seq)
    )""",
)

SCHEMA_V2 = (
    # The tool-call journal. No state column: a call is finished exactly when it has a result.
    """CREATE TABLE IF NOT EXISTS tool_calls (
        thread_id TEXT NOT NULL,
        item_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        arguments TEXT NOT NULL,
        result TEXT,
        started_at REAL NOT NULL,
        finished_at REAL,
        PRIMARY KEY (thread_id, item_id, call_id)
    )""",
)

SCHEMA_V3 = (
    # Thread ownership. The owner lives in the state JSON (saved with its version); this column
    # repeats it so a user's threads can be listed. States written before version 3 have no owner.
    "ALTER TABLE threads ADD COLUMN owner TEXT",
    "CREATE INDEX IF NOT EXISTS threads_owner ON threads (owner, updated_at)",
)

MIGRATIONS: dict[int, tuple[str, ...]] = {1: SCHEMA_V1, 2: SCHEMA_V2, 3: SCHEMA_V3}
"""Statements that take a database from ``version - 1`` to ``version``."""


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """Takes the write lock up front so a read inside the transaction cannot go stale."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:  # some errors (disk full, I/O) already rolled it back
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def migrate(conn: sqlite3.Connection, path: str) -> None:
    if _user_version(conn) == SCHEMA_VERSION:
        return  # the common case: no write lock taken just to open
    with write_transaction(conn):
        current = _user_version(conn)  # re-read: another process may have migrated meanwhile
        if current > SCHEMA_VERSION:
            raise ConfigError(
                f"the SQLite store at {path!r} has schema version {current}, newer than this "
                f"pes-agent understands ({SCHEMA_VERSION}); upgrade pes-agent or use another file.",
                key_path="storage.path",
                value=path,
            )
        for version in range(current + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])
