"""The service example with `workers.enabled`: a message posted over HTTP runs on a worker process,
and the thread's event stream (served by the web process) delivers that run's events, read from
the store the worker writes."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos", reason="the `dbos` extra is not installed: pip install -e '.[dbos]'")

from service_harness import BOB, SETTINGS, Client, service, uvicorn_serving
from test_crash import ANSWER, ANSWER_TEXT, QUERY, call, done, plan
from test_workers_recovery import start_worker, stop_worker

from pes_agent import ArtInstance, create_art_instance

SCRIPT = [plan(), call("A"), done("A"), call("B"), done("B"), call("C"), done("C"), ANSWER]


@contextmanager
def web_and_worker(
    tmp_path: Path, replies: list[str] = SCRIPT, worker: dict[str, Any] | None = None, **app_options: Any
) -> Iterator[tuple[Client, dict[str, Any]]]:
    """A worker process replaying ``SCRIPT`` and the service (no model, no tools: runs go to the
    worker) on one SQLite store and DBOS database; yields the client and, once both have stopped,
    the worker's counts."""
    storage = {"type": "sqlite", "path": str(tmp_path / "state.db")}
    system_database = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    job = {
        "storage": storage,
        "system_database": system_database,
        "executor_id": "w1",
        "replies": replies,
        "effects": str(tmp_path / "effects.txt"),
        **(worker or {}),
    }
    loop = asyncio.new_event_loop()
    process = loop.run_until_complete(start_worker(job))
    counts: dict[str, Any] = {}

    async def factory() -> ArtInstance:
        return await create_art_instance(
            {"storage": storage, "workers": {"enabled": True, "systemDatabase": system_database}}
        )

    try:
        app = service.create_app(art_factory=factory, settings=SETTINGS, **app_options)
        with uvicorn_serving(app) as client:
            yield client, counts
    finally:
        counts.update(loop.run_until_complete(stop_worker(process)))
        loop.close()


def test_a_run_on_a_worker_streams_its_events_to_the_web_process(tmp_path: Path) -> None:
    with web_and_worker(tmp_path) as (client, counts):
        posted: dict[str, Any] = {}
        with client.stream("/threads/t-w/events") as events:
            assert events.frame().comments  # subscribed
            sender = threading.Thread(
                target=lambda: posted.update(reply=client.post("/threads/t-w/messages", {"query": QUERY}))
            )
            sender.start()
            frames = events.events_until("FINAL_RESPONSE")
            sender.join(30)
        status, body = posted["reply"]

    assert status == 200 and body["status"] == "success" and body["response"] == ANSWER_TEXT
    executed = [f.data["data"]["tool_name"] for f in frames if f.event == "TOOL_EXECUTION" and f.data]
    assert executed == ["tool_a", "tool_b", "tool_c"]
    assert {f.data["trace_id"] for f in frames if f.data} == {body["trace_id"]}
    assert frames[-1].data is not None and frames[-1].data["data"]["response"] == ANSWER_TEXT
    assert counts["unused_replies"] == 0
    assert (tmp_path / "effects.txt").read_text(encoding="utf-8").splitlines() == ["A n=1", "B n=2", "C n=3"]


def test_a_stream_opened_before_another_users_run_on_a_worker_ends_without_it(tmp_path: Path) -> None:
    with (
        web_and_worker(tmp_path, keepalive_s=0.2) as (client, _),
        client.stream("/threads/taken/events") as watch,
    ):
        assert watch.frame().comments  # subscribed
        status, body = client.as_user(BOB).post("/threads/taken/messages", {"query": QUERY})
        assert status == 200 and body["status"] == "success"
        with pytest.raises(AssertionError, match="the event stream ended"):
            for _ in range(150):  # keep-alives every 0.2 s, then the end: never an event of bob's
                assert watch.frame().event is None


def test_a_decision_the_worker_acks_too_late_is_still_answered_200_with_its_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker takes the decision at once but acks it after the producer stopped waiting: the
    client is answered with the run's outcome, not a 409 for a resume that did take effect."""
    import pes_agent.workers.producer

    monkeypatch.setattr(pes_agent.workers.producer, "ACK_WAIT_S", 0.2)
    script = [plan(), call("A"), done("A"), call("B"), done("B"), call("C"), done("C"), ANSWER]
    with web_and_worker(tmp_path, script, {"approval": "B", "ack_delay_s": 1.5}) as (client, counts):
        status, paused = client.post("/threads/t-ack/messages", {"query": QUERY})
        assert status == 200 and paused["status"] == "suspended", paused
        decision = {"suspension_id": paused["suspension"]["id"], "decision": {"approved": True}}
        status, body = client.post("/threads/t-ack/resume", decision)

    assert status == 200, body
    assert body["status"] == "success" and body["response"] == ANSWER_TEXT
    assert counts["unused_replies"] == 0
    assert (tmp_path / "effects.txt").read_text(encoding="utf-8").splitlines() == ["A n=1", "B n=2", "C n=3"]
