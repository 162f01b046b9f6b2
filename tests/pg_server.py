"""The PostgreSQL server the store tests run against: the one named by ``PES_AGENT_PG_DSN``.

``.ci/run`` starts a throwaway cluster on a loopback port and sets the variable; on a machine without
one, every PostgreSQL test skips with ``SKIP_REASON``. Import the fixtures into a test module
(``from pg_server import pg_dsn, pg_schema``) to use them. Each test gets its own schema (or its own
database, for code that only takes a DSN), dropped afterwards, so tests never see each other's rows.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

DSN_VARIABLE = "PES_AGENT_PG_DSN"
SKIP_REASON = "PostgreSQL not available: set PES_AGENT_PG_DSN or install postgresql; see .ci/run"


@pytest.fixture(scope="session")
def pg_dsn() -> str:
    """The server's DSN; skips the requesting test when there is none."""
    dsn = os.environ.get(DSN_VARIABLE, "").strip()
    if not dsn:
        pytest.skip(SKIP_REASON)
    pytest.importorskip(
        "asyncpg",
        reason="a PostgreSQL server is set but its driver is not installed: pip install -e '.[postgres]'",
    )
    return dsn


@pytest.fixture
async def pg_schema(pg_dsn: str) -> AsyncIterator[str]:
    """A schema name no other test uses; ``PostgresStore(dsn, schema=...)`` creates it on first use."""
    schema = unique_name()
    yield schema
    await admin(pg_dsn, f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
async def pg_database_dsn(pg_dsn: str) -> AsyncIterator[str]:
    """A DSN to a new, empty database: for code that builds its store from a DSN alone (a config)."""
    async with new_database(pg_dsn) as dsn:
        yield dsn


@asynccontextmanager
async def new_database(pg_dsn: str) -> AsyncIterator[str]:
    """A new, empty database on the server, dropped on leaving (for a test that needs a second one)."""
    name = unique_name()
    await admin(pg_dsn, f'CREATE DATABASE "{name}"')
    try:
        yield with_database(pg_dsn, name)
    finally:
        await admin(pg_dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def unique_name() -> str:
    return f"pes_test_{uuid.uuid4().hex[:16]}"


def with_database(dsn: str, database: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit(parts._replace(path="/" + database))


async def admin(dsn: str, sql: str, *args: Any) -> Any:
    """One statement on a connection of its own (outside any store), returning the first value."""
    import asyncpg  # the tests that reach this have a server, so the extra is installed

    conn = await asyncpg.connect(dsn)
    try:
        return await conn.fetchval(sql, *args)
    finally:
        await conn.close()
