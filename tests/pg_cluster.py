"""A PostgreSQL cluster of a test's own, to restart and stop at will: the database fault tests.

The server ``PES_AGENT_PG_DSN`` names is shared by every test, so no test may take it down. This one
is made the way ``.ci/run`` makes that one (``initdb`` with trust auth, listening on 127.0.0.1 only,
a free port; as the ``postgres`` account when run as root) in a temporary directory, and removed at
the end. Without PostgreSQL's binaries the tests that need it skip, naming what is missing.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

SKIP_REASON = "no PostgreSQL binaries (initdb, pg_ctl) to run a cluster of the test's own; see .ci/run"


def find_bin() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: [int(x) for x in p.split("/")[4].split(".") if x.isdigit()],
    )
    initdb = found[-1] if found else shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class Cluster:
    """A throwaway cluster: ``start()``, then ``dsn(database)``; ``restart()`` (``-m fast``), ``stop()``
    and ``start()`` again for an outage; ``remove()`` at the end."""

    def __init__(self) -> None:
        bin_dir = find_bin()
        if bin_dir is None:
            raise FileNotFoundError(SKIP_REASON)
        self.bin = bin_dir
        self.user = "postgres" if os.geteuid() == 0 else None
        self.dir = Path(tempfile.mkdtemp(prefix="pes-agent-pg-fault."))
        if self.user is not None:
            shutil.chown(self.dir, self.user)
        self.data = self.dir / "data"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale"
        )

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.dir} "
            "-c max_connections=200 -c fsync=off"
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.dir / "server.log"),
            "-w",
            "-t",
            "60",
            "-o",
            options,
            "start",
        )

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every connection is ended, the server is back within seconds."""
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.dir / "server.log"),
            "-m",
            "fast",
            "-w",
            "-t",
            "60",
            "restart",
        )

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")

    def create_database(self, name: str) -> str:
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)
        return self.dsn(name)

    def remove(self) -> None:
        if (self.data / "postmaster.pid").exists():
            subprocess.run(
                self._command("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop"),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
                timeout=120,
            )
        shutil.rmtree(self.dir, ignore_errors=True)

    def _command(self, tool: str, *args: str) -> list[str]:
        command = [str(self.bin / tool), *args]
        return ["runuser", "-u", self.user, "--", *command] if self.user else command

    def _run(self, tool: str, *args: str) -> None:
        """Output to a file, not a pipe: a server ``pg_ctl`` starts would hold a pipe open for ever."""
        log = self.dir / f"{tool}.log"
        with log.open("ab") as out:
            done = subprocess.run(
                self._command(tool, *args), stdout=out, stderr=out, check=False, timeout=120
            )
        if done.returncode != 0:
            tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise RuntimeError(f"{tool} failed ({done.returncode}): {tail}")
