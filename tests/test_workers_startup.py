"""``pes-agent worker`` whose database cannot be reached: it waits ``workers.storeOutageS``, then says
so in one line naming ``host:port/database`` (never the password), exits 75, and shows no traceback."""

from __future__ import annotations

import io
import socket
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("dbos", reason="the `dbos` extra is not installed: pip install -e '.[dbos]'")

from pes_agent.cli import main
from pes_agent.workers.readiness import EXIT_UNREACHABLE


def free_port() -> int:
    with socket.socket() as s:  # nobody listens once it is closed: connection refused
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_worker(tmp_path: Path, storage: str, system_database: str) -> subprocess.CompletedProcess[str]:
    """The CLI's ``main`` in this process (what the console script runs; a child process would spend
    seconds importing): its exit status and what it wrote."""
    config = tmp_path / "workers.yaml"
    config.write_text(
        f"storage: {storage}\nworkers:\n  systemDatabase: {system_database}\n  storeOutageS: 0.5\n",
        encoding="utf-8",
    )
    out, err = io.StringIO(), io.StringIO()
    code = main(["worker", "--config", str(config), "--id", "w-start"], out=out, err=err)
    return subprocess.CompletedProcess([], code, out.getvalue(), err.getvalue())


def assert_one_line_naming(done: subprocess.CompletedProcess[str], where: str) -> None:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == EXIT_UNREACHABLE, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "s3cret" not in done.stderr + done.stdout
    pes_lines = [line for line in lines if line.startswith("pes-agent:")]
    assert len(pes_lines) == 1 and where in pes_lines[0] and "cannot start" in pes_lines[0], lines
    assert "taking runs" not in done.stderr


def test_a_worker_whose_system_database_is_down_says_so_in_one_line(tmp_path: Path) -> None:
    port = free_port()
    done = run_worker(
        tmp_path,
        f"{{type: sqlite, path: {tmp_path / 'state.db'}}}",
        f"postgresql://app:s3cret@127.0.0.1:{port}/pes_dbos",
    )
    assert_one_line_naming(done, f"127.0.0.1:{port}/pes_dbos")


def test_a_worker_whose_store_is_down_says_so_in_one_line(tmp_path: Path) -> None:
    pytest.importorskip(
        "asyncpg", reason="the `postgres` extra is not installed: pip install -e '.[postgres]'"
    )
    port = free_port()
    done = run_worker(
        tmp_path,
        f"{{type: postgres, dsn: 'postgresql://app:s3cret@127.0.0.1:{port}/pes'}}",
        f"sqlite:///{tmp_path / 'dbos.sqlite'}",
    )
    assert_one_line_naming(done, f"127.0.0.1:{port}/pes")
