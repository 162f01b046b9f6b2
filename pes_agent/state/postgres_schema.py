"""The PostgreSQL store's tables and how a database (or one schema of it) is brought up to date.

Applied versions are rows of ``pes_agent_schema``. Migration takes a transaction-scoped advisory
lock first, so workers that start together against an empty database create the tables once; a
database newer than this code is refused rather than written to.
"""

from __future__ import annotations

from typing import Any

from pes_agent.errors import ConfigError

SCHEMA_VERSION = 2
"""Highest row in ``pes_agent_schema``; bump it and add a step to ``MIGRATIONS`` to change tables."""

_MIGRATION_LOCK = 0x7065_7361_6765_6E74  # "pesagent": one advisory lock for schema changes

SCHEMA_V1 = (
    """CREATE TABLE IF NOT EXISTS threads (
        thread_id TEXT PRIMARY KEY,
        version BIGINT NOT NULL,
        state TEXT NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS events (
        seq BIGSERIAL PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        thread_id TEXT NOT NULL,
        type TEXT NOT NULL,
        step_id TEXT,
        trace_id TEXT NOT NULL,
        ts DOUBLE PRECISION NOT NULL,
        data TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS events_thread_seq ON events (thread_id, seq)",
    # A global sequence orders the history: per-thread numbering via MAX(seq) + 1 would race
    # between writers under READ COMMITTED.
    """CREATE TABLE IF NOT EXISTS messages (
        seq BIGSERIAL PRIMARY KEY,
        thread_id TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        trace_id TEXT,
        ts DOUBLE PRECISION NOT NULL,
        metadata TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS messages_thread_seq ON messages (thread_id, seq)",
    # The tool-call journal; a call is finished exactly when it has a result.
    """CREATE TABLE IF NOT EXISTS tool_calls (
        seq BIGSERIAL NOT NULL,
        thread_id TEXT NOT NULL,
        item_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        arguments TEXT NOT NULL,
        result TEXT,
        started_at DOUBLE PRECISION NOT NULL,
        finished_at DOUBLE PRECISION,
        PRIMARY KEY (thread_id, item_id, call_id)
    )""",
)

SCHEMA_V2 = (
    # Thread ownership. The owner lives in the state JSON (saved with its version); this column
    # repeats it so a user's threads can be listed. States written before version 2 have no owner.
    "ALTER TABLE threads ADD COLUMN IF NOT EXISTS owner TEXT",
    "CREATE INDEX IF NOT EXISTS threads_owner ON threads (owner, updated_at)",
)

MIGRATIONS: dict[int, tuple[str, ...]] = {1: SCHEMA_V1, 2: SCHEMA_V2}
"""Statements that take a database from ``version - 1`` to ``version``."""


async def migrate(conn: Any, schema: str | None, where: str) -> None:
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
        if schema is not None:
            await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        await conn.execute("CREATE TABLE IF NOT EXISTS pes_agent_schema (version INTEGER PRIMARY KEY)")
        current = int(await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM pes_agent_schema"))
        if current > SCHEMA_VERSION:
            raise ConfigError(
                f"the PostgreSQL store at {where!r} has schema version {current}, newer than this "
                f"pes-agent understands ({SCHEMA_VERSION}); upgrade pes-agent or use another database.",
                key_path="storage.dsn",
                value=where,
            )
        for version in range(current + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[version]:
                await conn.execute(statement)
            await conn.execute("INSERT INTO pes_agent_schema (version) VALUES ($1)", version)
