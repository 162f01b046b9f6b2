"""Crash and resume across real processes: a worker is SIGKILLed mid-run, a new process resumes the
thread, and every tool's side effect happens exactly once (or, when that cannot be known, a person
decides). The child program is ``tests/crash_worker.py``; the stores are a SQLite file in
``tmp_path`` and, when a server is available, a fresh PostgreSQL database."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pg_server import pg_database_dsn, pg_dsn

from pes_agent.config import StorageConfig
from pes_agent.state.factory import open_store
from pes_agent.state.models import ThreadState
from pes_agent.state.store import StateStore

__all__ = ["pg_database_dsn", "pg_dsn"]  # fixtures, imported for pytest to find

REPO = Path(__file__).resolve().parents[1]
WORKER = REPO / "tests" / "crash_worker.py"
TIMEOUT_S = 60
THREAD = "crash-thread"
QUERY = "Write A, then B, then C."
ANSWER_TEXT = "A, B and C were each written once."


# -- scripted replies ---------------------------------------------------------------------------


def plan() -> str:
    steps = [
        {
            "id": f"step_{i}",
            "description": f"write {letter}",
            "stepType": "tool",
            "requiredTools": [f"tool_{letter.lower()}"],
            "dependencies": [f"step_{i - 1}"] if i > 1 else [],
        }
        for i, letter in enumerate("ABC", start=1)
    ]
    body = {
        "title": "Write three lines",
        "intent": "write A, B, C",
        "plan": "one per step",
        "todoList": steps,
    }
    return f"---JSON_OUTPUT_START---\n{json.dumps(body)}\n---JSON_OUTPUT_END---"


def call(letter: str) -> str:
    n = "ABC".index(letter) + 1
    body = {"toolCalls": [{"toolName": f"tool_{letter.lower()}", "arguments": {"n": n}}]}
    return "```json\n" + json.dumps(body) + "\n```"


def done(letter: str) -> str:
    return (
        "```json\n"
        + json.dumps({"content": f"{letter} written", "nextStepDecision": "complete_item"})
        + "\n```"
    )


ANSWER = f"<mainContent>{ANSWER_TEXT}</mainContent>"


# -- the child process ----------------------------------------------------------------------------


async def run_worker(job: dict[str, Any], *, killed: bool = False) -> dict[str, Any]:
    """Runs the worker to its end; `killed` says it must die of SIGKILL, else exit 0 with JSON."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, str(WORKER), json.dumps(job)],
        env=env,
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    where = (
        f"worker {job['mode']!r} exited with {proc.returncode}\n--- stdout\n{proc.stdout}\n--- "
        f"stderr\n{proc.stderr}"
    )
    if killed:
        assert proc.returncode == -signal.SIGKILL, where
        return {}
    assert proc.returncode == 0, where
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["unused_replies"] == 0, where
    return out


@pytest.fixture(params=["sqlite", "postgres"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    """The storage section both processes use; postgres skips without a server."""
    if request.param == "sqlite":
        return {"type": "sqlite", "path": str(tmp_path / "state.db")}
    return {"type": "postgres", "dsn": request.getfixturevalue("pg_database_dsn")}


@pytest.fixture
async def store(storage: dict[str, Any]) -> AsyncIterator[StateStore]:
    """The same store, opened by the test process itself to inspect what the workers left."""
    opened = open_store(StorageConfig.model_validate(storage))
    yield opened
    await opened.aclose()


def job(
    storage: dict[str, Any], tmp_path: Path, mode: str, replies: list[str], **extra: Any
) -> dict[str, Any]:
    return {
        "mode": mode,
        "storage": storage,
        "thread_id": THREAD,
        "query": QUERY,
        "effects": str(tmp_path / "effects.txt"),
        "replies": replies,
        **extra,
    }


def effects(tmp_path: Path) -> list[str]:
    path = tmp_path / "effects.txt"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def steps(calls: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(c["phase"], c["step_id"]) for c in calls]


async def stored(store: StateStore) -> ThreadState:
    state, _ = await store.load(THREAD)
    assert state is not None
    return state


def statuses(state: ThreadState) -> dict[str, str]:
    return {item.id: item.status.value for item in state.todo_list}


# -- crash after step 2's tool completed ----------------------------------------------------------


async def test_killed_after_a_tool_completed_resumes_without_running_it_again(
    storage: dict[str, Any], store: StateStore, tmp_path: Path
) -> None:
    await run_worker(
        job(storage, tmp_path, "process", [plan(), call("A"), done("A"), call("B")], kill="after_step_2"),
        killed=True,
    )
    assert effects(tmp_path) == ["A n=1", "B n=2"]
    dead = await stored(store)
    assert statuses(dead) == {"step_1": "completed", "step_2": "in_progress", "step_3": "pending"}
    assert dead.lease is not None  # the dead run never gave its lease back

    out = await run_worker(job(storage, tmp_path, "recover", [done("B"), call("C"), done("C"), ANSWER]))

    response = out["response"]
    assert response["status"] == "success"
    assert response["response"] == ANSWER_TEXT
    assert effects(tmp_path) == ["A n=1", "B n=2", "C n=3"]
    # No new plan; step_2 continues where it stopped, told that tool_b already ran.
    assert steps(out["calls"]) == [
        ("execution", "step_2"),
        ("execution", "step_3"),
        ("execution", "step_3"),
        ("synthesis", None),
    ]
    resumed_turn = out["calls"][0]["text"]
    assert "This step was interrupted" in resumed_turn and "tool_b" in resumed_turn

    final = await stored(store)
    assert statuses(final) == {"step_1": "completed", "step_2": "completed", "step_3": "completed"}
    assert [[r.tool_name for r in item.tool_results] for item in final.todo_list] == [
        ["tool_a"],
        ["tool_b"],
        ["tool_c"],
    ]
    assert final.lease is None and final.suspension is None
    journal = await store.calls(THREAD)
    assert [(e.item_id, e.tool_name, e.finished) for e in journal] == [
        ("step_1", "tool_a", True),
        ("step_2", "tool_b", True),
        ("step_3", "tool_c", True),
    ]


# -- crash inside a tool: the outcome is unknown --------------------------------------------------


async def _killed_inside_b(storage: dict[str, Any], tmp_path: Path, **extra: Any) -> None:
    await run_worker(
        job(
            storage, tmp_path, "process", [plan(), call("A"), done("A"), call("B")], kill="inside_b", **extra
        ),
        killed=True,
    )
    assert effects(tmp_path) == ["A n=1", "B n=2"]


async def test_killed_inside_a_non_idempotent_tool_asks_before_running_it_again(
    storage: dict[str, Any], store: StateStore, tmp_path: Path
) -> None:
    await _killed_inside_b(storage, tmp_path)
    journal = await store.calls(THREAD, "step_2")
    assert [(e.tool_name, e.finished) for e in journal] == [("tool_b", False)]

    paused = await run_worker(job(storage, tmp_path, "recover", []))

    response = paused["response"]
    assert response["status"] == "suspended"
    assert paused["calls"] == []  # nothing was guessed: no model call, no tool call
    suspension = response["suspension"]
    assert suspension["tool"] == "tool_b" and suspension["step_id"] == "step_2"
    assert "may or may not have taken effect" in suspension["message"]
    assert effects(tmp_path) == ["A n=1", "B n=2"]
    waiting = await stored(store)
    assert waiting.suspension is not None and waiting.suspension.id == suspension["id"]
    assert waiting.lease is None

    approved = await run_worker(
        job(
            storage,
            tmp_path,
            "decide",
            [done("B"), call("C"), done("C"), ANSWER],
            suspension_id=suspension["id"],
            decision={"approved": True},
        )
    )

    assert approved["response"]["status"] == "success"
    assert approved["response"]["response"] == ANSWER_TEXT
    assert effects(tmp_path) == ["A n=1", "B n=2", "B n=2", "C n=3"]  # B again, as the user chose
    final = await stored(store)
    assert statuses(final) == {"step_1": "completed", "step_2": "completed", "step_3": "completed"}
    assert final.suspension is None and final.lease is None
    assert all(e.finished for e in await store.calls(THREAD))


REJECTION_BLOCKED_BY_TAEF = (
    "pes_agent/agent/item_loop.py `ItemLoop.ran`: a rejected call is recorded with status `error`, so "
    "strict TAEF still counts its required tool as missing; the item cannot 'continue without it' as the "
    "suspension message and pes_agent/agent/resume.py promise: the closing reply is met with an "
    "enforcement turn and the item fails, leaving later steps unreached"
)


async def test_rejecting_the_rerun_continues_without_running_the_tool_again(
    storage: dict[str, Any], store: StateStore, tmp_path: Path
) -> None:
    await _killed_inside_b(storage, tmp_path)
    paused = await run_worker(job(storage, tmp_path, "recover", []))
    suspension = paused["response"]["suspension"]

    rejected = await run_worker(
        job(
            storage,
            tmp_path,
            "decide",
            [done("B"), call("C"), done("C"), ANSWER],
            suspension_id=suspension["id"],
            decision={"approved": False, "reason": "it already went out"},
        )
    )

    assert effects(tmp_path) == ["A n=1", "B n=2", "C n=3"]  # B never ran again
    told = rejected["calls"][0]["text"]
    assert "rejected" in told and "it already went out" in told
    assert rejected["response"]["status"] == "success"
    final = await stored(store)
    assert statuses(final) == {"step_1": "completed", "step_2": "completed", "step_3": "completed"}
    assert final.suspension is None and final.lease is None


async def test_killed_inside_an_idempotent_tool_resumes_without_asking(
    storage: dict[str, Any], store: StateStore, tmp_path: Path
) -> None:
    await _killed_inside_b(storage, tmp_path, idempotent_b=True)

    out = await run_worker(
        job(
            storage,
            tmp_path,
            "recover",
            [call("B"), done("B"), call("C"), done("C"), ANSWER],
            idempotent_b=True,
        )
    )

    assert out["response"]["status"] == "success"
    assert out["response"]["suspension"] is None
    assert effects(tmp_path) == ["A n=1", "B n=2", "B n=2", "C n=3"]
    assert steps(out["calls"])[:2] == [("execution", "step_2"), ("execution", "step_2")]
    final = await stored(store)
    assert statuses(final) == {"step_1": "completed", "step_2": "completed", "step_3": "completed"}
    assert all(e.finished for e in await store.calls(THREAD))
