"""One definition of a transient database fault (``pes_agent.state.transient``), what the PostgreSQL
store makes of each kind of fault on a real server, and how long a worker rides one out."""

from __future__ import annotations

import asyncio
import errno
import logging
from typing import Any

import pytest
from pg_server import admin, pg_database_dsn, pg_dsn

from pes_agent.errors import ConfigError, PesAgentError, StoreUnavailableError
from pes_agent.state.models import ThreadState
from pes_agent.state.transient import is_transient, new_outage_scope, ride_out

__all__ = ["pg_database_dsn", "pg_dsn"]


def test_a_lost_or_refused_connection_is_transient_a_full_disk_is_not() -> None:
    assert is_transient(ConnectionRefusedError(errno.ECONNREFUSED, "refused"))
    assert is_transient(ConnectionResetError())
    assert is_transient(TimeoutError())  # a connect or pool checkout timed out
    assert is_transient(OSError(errno.EHOSTUNREACH, "no route to host"))
    assert is_transient(StoreUnavailableError("the store decided"))
    assert not is_transient(OSError(errno.ENOSPC, "no space left on device"))
    assert not is_transient(ValueError("a bug"))
    assert not is_transient(PesAgentError("a refusal"))


def test_server_states_decide_for_asyncpg_never_the_message() -> None:
    asyncpg = pytest.importorskip("asyncpg")
    exceptions = asyncpg.exceptions
    for transient in (
        exceptions.AdminShutdownError,
        exceptions.CannotConnectNowError,
        exceptions.CrashShutdownError,
        exceptions.ConnectionDoesNotExistError,
        exceptions.TooManyConnectionsError,
        exceptions.ConnectionFailureError,
    ):
        assert is_transient(transient("the server went away")), transient
    for refusal in (
        exceptions.QueryCanceledError,  # a statement timeout: repeating it would undo the cancel
        exceptions.InvalidPasswordError,
        exceptions.UndefinedTableError,
        exceptions.UniqueViolationError,
        exceptions.DatabaseDroppedError,
    ):
        assert not is_transient(refusal("connection refused (words that must not matter)")), refusal
    # client-side states: decided by the store on the connection they happened on, never by type alone
    assert not is_transient(
        exceptions.InternalClientError("cannot switch to state 15; another operation (2) is in progress")
    )
    assert not is_transient(exceptions.InterfaceError("connection is closed"))


def test_psycopg_and_sqlalchemy_faults_of_the_dbos_system_database() -> None:
    psycopg = pytest.importorskip("psycopg")
    sa_exc = pytest.importorskip("sqlalchemy.exc")
    lost = psycopg.OperationalError("connection failed")  # no SQLSTATE: the connection failed or broke
    assert is_transient(lost)
    assert is_transient(sa_exc.OperationalError("SELECT 1", {}, lost))
    assert is_transient(sa_exc.TimeoutError("QueuePool limit reached"))
    assert is_transient(psycopg.errors.AdminShutdown("terminating connection"))
    assert not is_transient(psycopg.errors.QueryCanceled("canceling statement due to statement timeout"))
    assert not is_transient(sa_exc.ProgrammingError("SELECT", {}, psycopg.errors.UndefinedTable("no table")))


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


async def test_a_fault_is_ridden_out_with_backoff_and_a_warning_per_attempt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock, calls = FakeClock(), []

    async def flaky() -> str:
        calls.append(clock.now)
        if len(calls) < 5:
            raise ConnectionRefusedError(errno.ECONNREFUSED, "refused")
        return "answered"

    new_outage_scope()
    with caplog.at_level(logging.WARNING, logger="pes_agent.store"):
        assert await ride_out(flaky, 60, clock=clock, sleep=clock.sleep) == "answered"
    assert clock.slept == [0.1, 0.2, 0.4, 0.8]
    assert len([r for r in caplog.records if "unreachable" in r.getMessage()]) == 4


async def test_past_the_window_it_says_how_long_and_an_outage_is_counted_once_per_run() -> None:
    clock = FakeClock()

    async def down() -> None:
        raise ConnectionRefusedError(errno.ECONNREFUSED, "refused")

    new_outage_scope()
    with pytest.raises(StoreUnavailableError, match=r"was unreachable for 5 s .*Producer.recover") as info:
        await ride_out(down, 5, what="the store at 'db:5432/pes'", clock=clock, sleep=clock.sleep)
    assert info.value.unreachable_s == pytest.approx(5) and clock.now == pytest.approx(5)
    assert max(clock.slept) <= 2.0
    # the same run's next operation (releasing its thread) does not wait a new window
    with pytest.raises(StoreUnavailableError):
        await ride_out(down, 5, clock=clock, sleep=clock.sleep)
    assert clock.now == pytest.approx(5)


async def test_a_refusal_is_raised_at_once_never_retried() -> None:
    clock, calls = FakeClock(), []

    async def refused() -> None:
        calls.append(1)
        raise PesAgentError("the server refused the operation")

    new_outage_scope()
    with pytest.raises(PesAgentError, match="refused the operation"):
        await ride_out(refused, 60, clock=clock, sleep=clock.sleep)
    assert calls == [1] and clock.slept == []


# -- the PostgreSQL store on a real server ---------------------------------------------------------


async def test_postgres_a_connection_the_server_ended_is_unavailable_then_replaced(
    pg_database_dsn: str,
) -> None:
    from pes_agent.state.postgres import PostgresStore

    store = PostgresStore(pg_database_dsn, min_size=1, max_size=1)
    try:
        await store.save("t1", ThreadState(title="before"), 0)
        pid = await store._run(lambda conn: conn.fetchval("SELECT pg_backend_pid()"))
        await admin(
            pg_database_dsn, "SELECT pg_terminate_backend($1)", pid
        )  # AdminShutdown, as a restart sends
        await asyncio.sleep(0.2)
        try:
            await store.load("t1")  # the pool may notice first and reconnect: fine too
        except StoreUnavailableError as exc:
            assert "Check that the server is up" in str(exc)
        state, _ = await store.load("t1")  # the broken connection was dropped, not handed out again
    finally:
        await store.aclose()
    assert state is not None and state.title == "before"


async def test_postgres_client_side_errors_are_decided_by_the_connection(pg_database_dsn: str) -> None:
    """asyncpg's "cannot switch to state 15; another operation (2) is in progress" means the pooled
    connection's protocol was not idle as the operation began (consuming the server's farewell after a
    restart: measured by benchmarks/db_faults.py, where a probe right after even passed). Nothing was
    sent: transient, and that connection is dropped. An InterfaceError on a connection the server
    ended is transient too; on a healthy connection it is a misuse: a refusal, never retried."""
    asyncpg = pytest.importorskip("asyncpg")
    from pes_agent.state.postgres import PostgresStore

    store = PostgresStore(pg_database_dsn, min_size=1, max_size=1)
    message = "cannot switch to state 15; another operation (2) is in progress"

    async def state_lost(conn: Any) -> None:
        raise asyncpg.InternalClientError(message)

    async def misuse(conn: Any) -> None:
        raise asyncpg.InterfaceError("cannot perform operation: another operation is in progress")

    async def on_ended(conn: Any) -> None:
        await admin(
            pg_database_dsn, "SELECT pg_terminate_backend($1)", await conn.fetchval("SELECT pg_backend_pid()")
        )
        await asyncio.sleep(0.2)
        raise asyncpg.InterfaceError("connection is closed")

    def backend(conn: Any) -> Any:
        return conn.fetchval("SELECT pg_backend_pid()")

    try:
        await store.save("t1", ThreadState(title="kept"), 0)
        before = await store._run(backend)
        with pytest.raises(StoreUnavailableError, match="InternalClientError"):
            await store._run(state_lost)
        assert await store._run(backend) != before  # that connection was dropped
        with pytest.raises(PesAgentError, match="healthy connection") as healthy:
            await store._run(misuse)
        assert not isinstance(healthy.value, StoreUnavailableError)
        with pytest.raises(StoreUnavailableError, match="InterfaceError"):
            await store._run(on_ended)
        state, _ = await store.load("t1")
    finally:
        await store.aclose()
    assert state is not None and state.title == "kept"


async def test_postgres_a_write_that_committed_is_not_failed_by_the_pool_taking_the_connection_back(
    pg_database_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seen in CI after a fast restart: the save committed, then the pool's reset of the connection met
    the server's farewell (InternalClientError) and the run failed on a write that had happened. The
    caller sees the write's outcome; the connection is replaced."""
    asyncpg = pytest.importorskip("asyncpg")
    from pes_agent.state.postgres import PostgresStore

    store = PostgresStore(pg_database_dsn, min_size=1, max_size=1)
    resets: list[str] = []

    async def farewell(self: Any, *, timeout: float | None = None) -> None:
        resets.append("failed")
        raise asyncpg.InternalClientError("cannot switch to state 15; another operation (2) is in progress")

    try:
        before = await store._run(lambda conn: conn.fetchval("SELECT pg_backend_pid()"))
        with monkeypatch.context() as patch:
            patch.setattr(asyncpg.connection.Connection, "reset", farewell)
            version = await store.save("t1", ThreadState(title="committed"), 0)
        assert resets == ["failed"]
        state, loaded_version = await store.load("t1")
        after = await store._run(lambda conn: conn.fetchval("SELECT pg_backend_pid()"))
    finally:
        await store.aclose()
    assert state is not None and state.title == "committed" and loaded_version == version
    assert after != before  # the connection the reset failed on was not handed out again


async def test_postgres_a_database_that_does_not_exist_is_a_config_error_not_an_outage(pg_dsn: str) -> None:
    from urllib.parse import urlsplit, urlunsplit

    from pes_agent.state.postgres import PostgresStore

    missing = urlunsplit(urlsplit(pg_dsn)._replace(path="/pes_no_such_database"))
    store = PostgresStore(missing)
    try:
        with pytest.raises(ConfigError, match="pes_no_such_database"):
            await store.load("t1")
    finally:
        await store.aclose()


async def test_postgres_a_server_that_is_down_when_the_pool_opens_is_an_outage() -> None:
    pytest.importorskip("asyncpg")
    import socket

    from pes_agent.state.postgres import PostgresStore

    with socket.socket() as s:  # a port nobody listens on: connection refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = PostgresStore(f"postgresql://app:s3cret-pw@127.0.0.1:{port}/orders")
    try:
        with pytest.raises(StoreUnavailableError, match=f"127.0.0.1:{port}/orders") as info:
            await store.load("t1")
    finally:
        await store.aclose()
    assert "s3cret-pw" not in str(info.value)
