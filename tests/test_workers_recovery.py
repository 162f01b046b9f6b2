"""A worker SIGKILLed inside a tool call, restarted under the same id: DBOS replays the run's
workflow (nothing recorded runs again: no model call, no finished tool call) and the call journal's
rule decides about the call that was running: asked again for an ordinary tool, rerun for an
idempotent one. Real processes (``tests/dbos_worker.py``), SQLite for the store and for DBOS."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos", reason="the `dbos` extra is not installed: pip install -e '.[dbos]'")

from test_crash import ANSWER, ANSWER_TEXT, QUERY, call, done, plan

from pes_agent.config import config_from_dict
from pes_agent.state.factory import open_store
from pes_agent.workers import Producer

REPO = Path(__file__).resolve().parents[1]
CHILD = REPO / "tests" / "dbos_worker.py"
TIMEOUT_S = 60.0


async def start_worker(job: dict[str, Any]) -> asyncio.subprocess.Process:
    """A worker process, once it takes jobs."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(CHILD),
        json.dumps(job),
        cwd=str(REPO),
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), TIMEOUT_S)
    if line.decode().strip() != "READY":
        _, err = await proc.communicate()
        raise AssertionError(f"worker did not start: {line!r}\n{err.decode()[-3000:]}")
    return proc


async def stop_worker(proc: asyncio.subprocess.Process) -> dict[str, Any]:
    out, err = await asyncio.wait_for(proc.communicate(b"stop\n"), TIMEOUT_S)
    assert proc.returncode == 0, err.decode()[-3000:]
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return result


class Setup:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.storage = {"type": "sqlite", "path": str(tmp_path / "state.db")}
        self.system_database = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
        self.config = config_from_dict(
            {"storage": self.storage, "workers": {"systemDatabase": self.system_database}}
        )

    def job(self, replies: list[str], **extra: Any) -> dict[str, Any]:
        return {
            "storage": self.storage,
            "system_database": self.system_database,
            "executor_id": "w1",
            "replies": replies,
            "effects": str(self.tmp_path / "effects.txt"),
            **extra,
        }

    def effects(self) -> list[str]:
        path = self.tmp_path / "effects.txt"
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[tuple[Setup, Producer]]:
    prepared = Setup(tmp_path)
    store = open_store(prepared.config.storage)
    producer = await Producer.open(prepared.config, store=store)
    try:
        yield prepared, producer
    finally:
        await producer.aclose()
        await store.aclose()


async def _killed_inside_b(setup: Setup, producer: Producer, **extra: Any) -> Any:
    proc = await start_worker(setup.job([plan(), call("A"), done("A"), call("B")], kill="inside_b", **extra))
    handle = await producer.enqueue(QUERY, thread_id="t-kill")
    await asyncio.wait_for(proc.wait(), TIMEOUT_S)
    assert proc.returncode == -signal.SIGKILL
    assert setup.effects() == ["A n=1", "B n=2"]
    return handle


async def test_recovered_workflow_asks_before_running_the_interrupted_tool_again(
    setup: tuple[Setup, Producer],
) -> None:
    prepared, producer = setup
    handle = await _killed_inside_b(prepared, producer)

    worker = await start_worker(prepared.job([done("B"), call("C"), done("C"), ANSWER]))
    try:
        paused = await handle.response(timeout_s=TIMEOUT_S)
        assert paused is not None and paused["status"] == "suspended", paused
        assert "may or may not have taken effect" in paused["suspension"]["message"]
        assert paused["suspension"]["tool"] == "tool_b"
        assert prepared.effects() == ["A n=1", "B n=2"]  # nothing ran again on its own

        resumed = await producer.resume("t-kill", paused["suspension"]["id"], {"approved": True})
        final = await resumed.response(timeout_s=TIMEOUT_S)
    finally:
        counts = await stop_worker(worker)

    assert final is not None and final["status"] == "success" and final["response"] == ANSWER_TEXT
    assert prepared.effects() == ["A n=1", "B n=2", "B n=2", "C n=3"]  # B again, as the person chose
    assert counts == {"model_calls": 4, "unused_replies": 0}  # planning and step 1 were not asked again


async def test_recovered_workflow_reruns_an_interrupted_idempotent_tool(
    setup: tuple[Setup, Producer],
) -> None:
    prepared, producer = setup
    handle = await _killed_inside_b(prepared, producer, idempotent_b=True)

    worker = await start_worker(
        prepared.job([call("B"), done("B"), call("C"), done("C"), ANSWER], idempotent_b=True)
    )
    try:
        final = await handle.response(timeout_s=TIMEOUT_S)
    finally:
        counts = await stop_worker(worker)

    assert final is not None and final["status"] == "success", final
    assert prepared.effects() == ["A n=1", "B n=2", "B n=2", "C n=3"]
    assert counts == {"model_calls": 5, "unused_replies": 0}


async def test_a_worker_that_never_returns_has_its_runs_taken_over_by_another(
    setup: tuple[Setup, Producer],
) -> None:
    prepared, producer = setup
    handle = await _killed_inside_b(prepared, producer, idempotent_b=True)

    other = prepared.job([call("B"), done("B"), call("C"), done("C"), ANSWER], idempotent_b=True)
    worker = await start_worker({**other, "executor_id": "w2", "recover": ["w1"]})
    try:
        final = await handle.response(timeout_s=TIMEOUT_S)
    finally:
        counts = await stop_worker(worker)

    assert final is not None and final["status"] == "success", final
    assert prepared.effects() == ["A n=1", "B n=2", "B n=2", "C n=3"]
    assert counts == {"model_calls": 5, "unused_replies": 0}


# -- the two commands ------------------------------------------------------------------------------

DEMO_QUERY = (
    "Find recent articles about the James Webb Space Telescope's discoveries and summarize the key findings."
)


def test_worker_and_enqueue_commands(tmp_path: Path) -> None:
    from pes_agent.cli import main

    config = tmp_path / "workers.yaml"
    config.write_text(
        "providers:\n  demo:\n    adapter: scripted\n"
        f"    script: {REPO / 'pes_agent' / 'demo' / 'jwst_replay.json'}\n"
        "tools:\n  - pes_agent.demo.tools:DEMO_TOOLS\n"
        "storage:\n  type: sqlite\n  path: state.db\n"
        f"workers:\n  systemDatabase: sqlite:///{tmp_path / 'dbos.sqlite'}\n",
        encoding="utf-8",
    )
    import io
    import subprocess

    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pes_agent.cli",
            "worker",
            "--config",
            str(config),
            "--id",
            "w-cli",
            "--concurrency",
            "2",
        ],
        cwd=str(REPO),
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stderr is not None
        started = worker.stderr.readline()
        assert "worker w-cli taking runs, 2 at a time" in started, started + worker.stderr.read()[-2000:]
        out, err = io.StringIO(), io.StringIO()
        code = main(["enqueue", "--config", str(config), "--wait", DEMO_QUERY], out=out, err=err)
        assert code == 0, err.getvalue()
        assert "James Webb" in out.getvalue() or "JWST" in out.getvalue(), out.getvalue()
        assert "status: success" in err.getvalue()
        assert (tmp_path / "state.db").exists()  # the worker anchored the store at the config's folder
    finally:
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(TIMEOUT_S) == 0


def test_enqueue_wait_without_a_worker_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from pes_agent.cli import main
    from pes_agent.workers import cli

    config = tmp_path / "workers.yaml"
    config.write_text(
        "providers:\n  demo:\n    adapter: scripted\n"
        f"    script: {REPO / 'pes_agent' / 'demo' / 'jwst_replay.json'}\n"
        f"workers:\n  systemDatabase: sqlite:///{tmp_path / 'dbos.sqlite'}\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(cli, "WAIT_S", 0.5)
    out, err = io.StringIO(), io.StringIO()
    code = main(["enqueue", "--config", str(config), "--wait", DEMO_QUERY], out=out, err=err)
    said = err.getvalue()
    assert code == 1 and out.getvalue() == ""
    assert "no worker reached the run within 0.5 s; it stays queued (workflow pes-agent:" in said, said
    assert f"is `pes-agent worker --config {config}` running" in said, said
