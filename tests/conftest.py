"""Suite-wide guards: offline token counts, no network, no silently empty runs, prompt snapshots."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Before any test imports tiktoken: point it at the checked-out offline cache so it never downloads.
_SHARED_TIKTOKEN = Path(__file__).resolve().parents[1].parent / "shared" / "tiktoken"
if "TIKTOKEN_CACHE_DIR" not in os.environ and _SHARED_TIKTOKEN.is_dir():
    os.environ["TIKTOKEN_CACHE_DIR"] = str(_SHARED_TIKTOKEN)

from snapshot_ext import PromptSnapshotExtension, o200k_cache_present
from syrupy.assertion import SnapshotAssertion

pytest_plugins = ("pytester",)

_OPT_IN_MARKERS = {
    "live": "PES_AGENT_LIVE",
    "slow": "PES_AGENT_SLOW",
    "local_model": "PES_AGENT_LOCAL_MODEL",
    "browser": "PES_AGENT_BROWSER",
}
"""Marker -> environment variable that must be ``1`` for tests carrying it to run. The real model and the
browser take most of a run's time (minutes on 2 cores), so the default run leaves them out; `.ci/run` sets
all but `live`."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "live: reaches real endpoints; runs only with PES_AGENT_LIVE=1 and only then unguarded"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for marker, variable in _OPT_IN_MARKERS.items():
            if item.get_closest_marker(marker) and os.environ.get(variable) != "1":
                item.add_marker(pytest.mark.skip(reason=f"`{marker}` test: set {variable}=1 to run it"))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """pytest's exit code 5 must not pass silently: a typo in a path or `-k` would look green in CI."""
    session.config.stash[_EXIT_STATUS] = int(exitstatus)
    if exitstatus != pytest.ExitCode.NO_TESTS_COLLECTED:
        return
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
    message = "no tests were collected (pytest exit code 5): failing the run; check the paths, `-k` and `-m`"
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(message, red=True, bold=True)
    else:
        print(message, file=sys.stderr)


_EXIT_STATUS = pytest.StashKey[int]()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """End the test process even if a stopped DBOS worker left workflow threads behind.

    ``DBOS.destroy`` does not end the workflows a worker is running; a run still waiting for an
    approval (several tests leave one, on purpose) wakes after its wait in DBOS's executor thread
    and takes a step. In a test, the step's database was dropped at teardown, so DBOS retries the
    connection forever and Python's exit, which joins executor threads, never returns: CI hung once
    that way after every test had passed. Said on stderr, with the threads, never silently."""
    if "dbos" not in sys.modules:
        return
    lingering = [t.name for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if not lingering:
        return
    print(
        f"tests/conftest.py: {len(lingering)} non-daemon threads left by stopped DBOS workers "
        f"({', '.join(lingering[:5])}); exiting without waiting for them",
        file=sys.stderr,
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(config.stash.get(_EXIT_STATUS, int(pytest.ExitCode.INTERNAL_ERROR)))


# --- offline tiktoken -----------------------------------------------------------------------------


def require_tiktoken() -> None:
    """Skip the calling test when exact o200k counts cannot be computed offline."""
    if not o200k_cache_present():
        pytest.skip(
            "exact token counts need the o200k cache: set TIKTOKEN_CACHE_DIR (../shared/tiktoken not found)"
        )


@pytest.fixture
def tiktoken_available() -> bool:
    return o200k_cache_present()


# --- network guard (as pydantic-ai's ALLOW_MODEL_REQUESTS) ----------------------------------------


class NetworkAccessDenied(RuntimeError):
    """Raised in place of a connection attempt; not an OSError, so clients do not treat it as retryable."""


_network_allowed = False
"""True only while a `live` test runs; a module global because resolvers run in other threads."""

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_create_connection = socket.create_connection
_real_getaddrinfo = socket.getaddrinfo


def _host_text(host: object) -> str:
    return host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)


def _as_ip(host: object) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(_host_text(host).split("%", 1)[0])  # drop an IPv6 zone ("%eth0")
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _is_loopback(host: object) -> bool:
    ip = _as_ip(host)
    return ip.is_loopback if ip is not None else _host_text(host).lower().rstrip(".") == "localhost"


def _refuse_unless_loopback(host: object, port: object) -> None:
    if not _network_allowed and not _is_loopback(host):
        raise NetworkAccessDenied(
            f"tests must not reach the network: {_host_text(host)}:{port} "
            "(mark the test `live` and set PES_AGENT_LIVE=1)"
        )


def _check_socket_address(sock: socket.socket, address: Any) -> None:
    # AF_UNIX paths and other families never leave the machine; malformed tuples fail in connect.
    if sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple) and len(address) >= 2:
        _refuse_unless_loopback(address[0], address[1])


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check_socket_address(self, address)
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check_socket_address(self, address)
    return _real_connect_ex(self, address)


def _guarded_create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
    _refuse_unless_loopback(address[0], address[1])
    return _real_create_connection(address, *args, **kwargs)


def _guarded_getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
    # Resolving a name is itself a network request (DNS), so names are refused here, before connect.
    # IP literals resolve locally and pass; connecting to them is checked by `connect`.
    if host not in (None, "", b"") and _as_ip(host) is None:
        _refuse_unless_loopback(host, port)
    return _real_getaddrinfo(host, port, *args, **kwargs)


@pytest.fixture(autouse=True, scope="session")
def _network_guard() -> Iterator[None]:
    """Session-wide, so session- and module-scoped fixtures are guarded too.

    asyncio needs no patch of its own: `loop.sock_connect` calls `sock.connect` and
    `loop.getaddrinfo` calls `socket.getaddrinfo`, both looked up at call time.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", _guarded_connect)
        patch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
        patch.setattr(socket, "create_connection", _guarded_create_connection)
        patch.setattr(socket, "getaddrinfo", _guarded_getaddrinfo)
        yield


@pytest.fixture(autouse=True)
def _live_tests_may_use_the_network(request: pytest.FixtureRequest) -> Iterator[None]:
    """Lift the guard for a `live` test (it only runs at all with PES_AGENT_LIVE=1)."""
    global _network_allowed
    if request.node.get_closest_marker("live") is None:
        yield
        return
    _network_allowed = True
    try:
        yield
    finally:
        _network_allowed = False


# --- prompt snapshots ------------------------------------------------------------------------------


@pytest.fixture
def prompt_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """`assert request == prompt_snapshot` or `== prompt_snapshot(name="planning")`; files in snapshots/."""
    return snapshot.use_extension(PromptSnapshotExtension)


@pytest.fixture(autouse=True)
def _servers_dialects_forgotten() -> Iterator[None]:
    """The `openai` adapter remembers each server's structured-output dialect for the life of the
    process (`pes_agent.llm.dialects`); in tests a loopback port may serve another fake later."""
    from pes_agent.llm.dialects import forget_dialects

    forget_dialects()
    yield
    forget_dialects()
