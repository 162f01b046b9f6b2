"""`benchmarks/local_model.py --base-url`: the same tasks through a server, beside the in-process
figures, judged against issue 28's targets. Model-free: a fake OpenAI-compatible server (first
options everywhere, `pes_agent.testing.first_option`) stands in for the model's server, writing the
lines llama-cpp-python's server logs, and the in-process figures come from a saved run
(`--in-process-from`). The real comparison needs the model and minutes: see benchmarks/results/.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from benchmarks import local_model
from benchmarks.local_server import compare, read_server_log, server_provider
from benchmarks.local_tasks import TASKS, crashed
from pes_agent.testing.fake_openai import FakeOpenAIServer
from pes_agent.testing.first_option import first_option_reply

HIT = "Llama.generate: 30 prefix-match hit, remaining 10 prompt tokens to eval\n"


@pytest.fixture
def server_log(tmp_path: Path) -> Path:
    log = tmp_path / "server.log"
    log.write_text("an earlier run's line: parse: error parsing grammar\n", encoding="utf-8")
    return log


@pytest.fixture
def fake_server(server_log: Path) -> Iterator[FakeOpenAIServer]:
    """A fake server on its own loop and thread: the benchmark's children reach it over loopback."""

    def answer(body: dict[str, Any]) -> str:
        with server_log.open("a", encoding="utf-8") as log:
            log.write(HIT)
        return first_option_reply(body, free_text="The result is 84.")

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = FakeOpenAIServer(handler=answer)
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(timeout=10)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)


def saved_in_process(tmp_path: Path, task_ids: list[str]) -> Path:
    outcomes = [
        asdict(crashed(t, "plans", "stand-in", 2.0)) | {"crash": None, "right": True} for t in task_ids
    ]
    path = tmp_path / "in-process.json"
    path.write_text(json.dumps({"model": "SmolLM2 (saved)", "outcomes": outcomes}), encoding="utf-8")
    return path


def test_the_tasks_run_through_the_server_beside_the_in_process_figures(
    tmp_path: Path, fake_server: FakeOpenAIServer, server_log: Path
) -> None:
    ids = [t.id for t in TASKS[:2]]
    argv = ["--settings", "plans", "--tasks", "2", "--base-url", fake_server.base_url]
    argv += ["--in-process-from", str(saved_in_process(tmp_path, ids)), "--server-log", str(server_log)]
    assert local_model.main([*argv, "--out-dir", str(tmp_path), "--label", "t"]) == 0

    (saved,) = tmp_path.glob("local_model-*-t.json")
    run = json.loads(saved.read_text(encoding="utf-8"))
    assert run["settings"] == ["plans", "plans@server"]
    served = [o for o in run["outcomes"] if o["setting"] == "plans@server"]
    assert [o["task"] for o in served] == ids and all(o["crash"] is None for o in served)
    assert not any("provider_error" in o["status"] for o in served)
    assert run["server"]["provider"]["guided"] is True and run["server"]["provider"]["adapter"] == "openai"
    assert run["server"]["log"]["parse_failures"] == [], "only what the server logged during this run"
    answered = (
        len(fake_server.chat_requests) - fake_server.refused
    )  # the grammar probe: refused, as OpenAI does
    assert run["server"]["log"]["requests"] == answered > 0
    report = (tmp_path / saved.name.replace(".json", ".md")).read_text(encoding="utf-8")
    assert "server target" in report and "provider errors" in report and "x (" in report
    assert "SERVER plans: fully right, server vs in-process" in report
    assert "prompt tokens (75%) reused" in report
    bodies = fake_server.chat_requests
    assert any("response_format" in b for b in bodies), "the run's replies were constrained"


def test_the_targets_are_judged_as_the_issue_states_them(server_log: Path) -> None:
    def outcome(right: bool, seconds: float, status: str = "success") -> dict[str, Any]:
        return {"right": right, "seconds": seconds, "status": status, "crash": None}

    in_process = [outcome(True, 4.0), outcome(True, 4.0), outcome(False, 4.0)]
    close = compare("plans", in_process, [outcome(True, 6.0), outcome(False, 6.0), outcome(False, 6.0)], 0)
    assert (close.right_server, close.right_in_process, close.wall_server) == (1, 2, 6.0)
    from benchmarks.local_server import CHECKS

    assert [c.met(close) for c in CHECKS] == [True, True, True, True]
    worse = compare("plans", in_process, [outcome(False, 7.0, "error:provider_error")] * 3, None)
    assert [c.met(worse) for c in CHECKS] == [False, False, False, False]
    assert read_server_log(server_log).parse_failures == [
        "an earlier run's line: parse: error parsing grammar"
    ]
    assert server_provider({"temperature": 0, "maxTokens": 512, "modelPackage": "x"}, "u", "m") == {
        "adapter": "openai",
        "baseUrl": "u",
        "model": "m",
        "guided": True,
        "temperature": 0,
        "maxTokens": 512,
    }
