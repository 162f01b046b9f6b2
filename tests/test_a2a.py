"""Delegation to remote A2A agents (``agents`` in the config, ``pes_agent.tools.a2a``) against the
SDK-built test agent `pes_agent.testing.a2a_agent` in a child process on 127.0.0.1: config errors,
answers streamed, blocking or polled, failures, timeouts, agents down at start-up, secrets. An instance
served over A2A is tested in test_a2a_serving.py."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest

from pes_agent import create_art_instance, tool
from pes_agent.config import config_from_dict
from pes_agent.errors import ConfigError
from pes_agent.instance import ArtInstance
from pes_agent.testing import ScriptedProvider
from pes_agent.tools.executor import ToolExecutor
from pes_agent.tools.spec import ToolCall, ToolContext, ToolResult

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("a2a") is None or importlib.util.find_spec("uvicorn") is None,
    reason="the `a2a` extra is not installed (pip install -e '.[a2a]')",
)
AGENT = [sys.executable, "-m", "pes_agent.testing.a2a_agent"]
SECRET = "tok-2718281828-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for_port(port: int, child: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if child.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{what} did not start on port {port}")
            time.sleep(0.05)


def start_agent(extra: Sequence[str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    child = subprocess.Popen([*AGENT, "--port", str(port), *extra], stderr=subprocess.DEVNULL)
    wait_for_port(port, child, "the A2A test agent")
    return child, f"http://127.0.0.1:{port}"


@asynccontextmanager
async def scripted_agent(*extra: str) -> AsyncIterator[str]:
    """The SDK-built test agent as a child process; yields its base URL."""
    child, url = await asyncio.to_thread(start_agent, extra)
    try:
        yield url
    finally:
        child.terminate()
        await asyncio.to_thread(child.wait, 10)


async def caller(
    agents: list[dict[str, Any]], replies: Sequence[Any] = ()
) -> tuple[ArtInstance, ScriptedProvider]:
    provider = ScriptedProvider(list(replies))
    cfg = {"storage": {"type": "memory"}, "agents": agents}
    return await create_art_instance(cfg, providers={"scripted": provider}), provider


async def delegate(art: ArtInstance, name: str, task: str, thread_id: str = "th") -> ToolResult:
    context = ToolContext(thread_id=thread_id, trace_id="tr", step_id="step_1", call_id="c1")
    call_ = ToolCall(call_id="c1", tool_name=name, arguments={"task": task})
    return await ToolExecutor(art.registry).execute(call_, allowed=[name], context=context)


# --- config ------------------------------------------------------------------------------------


def test_agents_load_and_bad_entries_are_clear_config_errors() -> None:
    cfg = config_from_dict({"agents": [{"id": "calc", "url": "http://127.0.0.1:9100", "timeoutS": 5}]})
    assert (cfg.agents[0].id, cfg.agents[0].timeout_s, cfg.agents[0].card_path) == (
        "calc",
        5.0,
        "/.well-known/agent-card.json",
    )
    cases = [
        ({"agents": [{"id": "calc", "url": "ftp://x"}]}, "agents[0].url", "http(s) base URL"),
        (
            {"agents": [{"id": "no spaces", "url": "http://a"}]},
            "agents[0].id",
            "cannot be part of a tool name",
        ),
        (
            {"agents": [{"id": "a", "url": "http://a"}, {"id": "a", "url": "http://b"}]},
            "agents[1].id",
            "used twice",
        ),
        (
            {"agents": [{"id": "a", "url": "http://a", "cardPath": "x.json"}]},
            "agents[0].cardPath",
            "starting with `/`",
        ),
        ({"execution": {"enableA2ADelegation": True}}, "execution.enableA2ADelegation", "no enabled agent"),
        (
            {"execution": {"enableA2ADelegation": False}, "agents": [{"id": "a", "url": "http://a"}]},
            "execution.enableA2ADelegation",
            "delegation is off but agents are listed",
        ),
        (
            {"threadDefaults": {"execution": {"enableA2ADelegation": True}}},
            "threadDefaults.execution.enableA2ADelegation",
            "set for the instance",
        ),
        (
            {"a2aConfig": {"discoveryEndpoint": "http://x"}},
            "a2aConfig",
            "list the remote agents under `agents`",
        ),
    ]
    for raw, where, says in cases:
        with pytest.raises(ConfigError) as caught:
            config_from_dict(raw)
        assert caught.value.key_path == where, raw
        assert says in str(caught.value), raw
    with_switch = {"execution": {"enableA2ADelegation": True}, "agents": [{"id": "a", "url": "http://a"}]}
    assert config_from_dict(with_switch).execution.enable_a2a_delegation is True


def test_header_values_are_secrets_in_dumps_and_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TOKEN", SECRET)
    raw = {"agents": [{"id": "a", "url": "http://a", "headers": {"Authorization": "Bearer ${AGENT_TOKEN}"}}]}
    cfg = config_from_dict(raw)
    assert cfg.agents[0].headers["Authorization"].get_secret_value() == f"Bearer {SECRET}"
    assert SECRET not in repr(cfg) and SECRET not in json.dumps(cfg.model_dump(mode="json"))
    with pytest.raises(ConfigError) as caught:
        config_from_dict({"agents": [{**raw["agents"][0], "url": "nope"}]})
    assert SECRET not in str(caught.value)


# --- the SDK-built test agent in a child process --------------------------------------------------


@pytest.mark.parametrize("how", ["streaming", "blocking", "polling"])
async def test_answers_and_data_parts_come_back_streamed_blocking_or_polled(how: str) -> None:
    extra = ("--no-streaming",) if how == "blocking" else ()  # a card without streaming: one request
    async with scripted_agent(*extra) as url:
        art, _ = await caller([{"id": "t", "url": url, "timeoutS": 10, "streaming": how != "polling"}])
        async with art:
            echoed = await delegate(art, "agent_t", "echo hello there")
            data = await delegate(art, "agent_t", "data four")
    assert (echoed.status, echoed.output) == ("success", {"answer": "hello there", "data": []})
    assert data.output == {"answer": "four", "data": [{"length": 4.0}]}


async def test_failed_and_input_required_tasks_are_tool_errors_naming_the_agent() -> None:
    async with scripted_agent() as url:
        art, _ = await caller([{"id": "t", "url": url, "timeoutS": 10}])
        async with art:
            failed = await delegate(art, "agent_t", "fail the ledger is locked")
            asked = await delegate(art, "agent_t", "ask which ledger?")
    assert failed.status == "error"
    assert f"agent 't' (http://127.0.0.1:{url.rsplit(':', 1)[1]})" in (failed.error or "")
    assert "the task failed: the ledger is locked" in (failed.error or "")
    assert asked.status == "error" and "needs more input to go on: which ledger?" in (asked.error or "")


async def test_a_task_past_the_timeout_is_cancelled_and_the_next_one_works() -> None:
    async with scripted_agent() as url:
        art, _ = await caller([{"id": "t", "url": url, "timeoutS": 1}])
        async with art:
            started = time.monotonic()
            slow = await delegate(art, "agent_t", "sleep 30")
            took = time.monotonic() - started
            quick = await delegate(art, "agent_t", "echo still here")
    assert slow.status == "error" and "no answer within 1s (`timeoutS`)" in (slow.error or "").replace(
        "timeout_s", "timeoutS"
    )
    assert took < 15  # far below the 30 s the agent would have worked
    assert quick.output == {"answer": "still here", "data": []}


async def test_an_agent_dying_mid_task_is_a_tool_error() -> None:
    async with scripted_agent() as url:
        art, _ = await caller([{"id": "t", "url": url, "timeoutS": 10}])
        async with art:
            result = await delegate(art, "agent_t", "crash")
    assert result.status == "error"
    assert "agent 't'" in (result.error or "") and "the call failed" in (result.error or "")


async def test_unreachable_or_bad_card_agents_are_left_out_and_the_others_serve(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="pes_agent.tools.a2a")
    down = f"http://127.0.0.1:{free_port()}"
    async with scripted_agent() as good, scripted_agent("--bad-card") as bad:
        agents = [
            {"id": "down", "url": down, "timeoutS": 5, "headers": {"Authorization": SECRET}},
            {"id": "bad", "url": bad, "timeoutS": 5},
            {"id": "good", "url": good, "timeoutS": 5},
        ]
        art, _ = await caller(agents)
        async with art:
            assert [n for n in art.registry.names() if n.startswith("agent_")] == ["agent_good"]
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "agent 'down'" in logged and "could not be read" in logged
    assert "agent 'bad'" in logged
    assert SECRET not in logged


async def test_a_url_password_and_a_header_an_agent_echoes_are_masked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="pes_agent.tools.a2a")
    down = f"http://ana:{SECRET}@127.0.0.1:{free_port()}/base"  # the SDK quotes the URL it was given
    async with scripted_agent() as good:
        agents = [
            {"id": "down", "url": down, "timeoutS": 5},
            {"id": "good", "url": good, "timeoutS": 5, "headers": {"Authorization": f"Bearer {SECRET}"}},
        ]
        art, _ = await caller(agents)
        async with art:
            echoed = await delegate(art, "agent_good", f"fail invalid token {SECRET}")  # its reason quotes it
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "agent 'down' (http://127.0.0.1:" in logged and "could not be read" in logged
    assert SECRET not in logged
    assert echoed.status == "error" and "the task failed: invalid token **********" in (echoed.error or "")


async def test_an_agent_whose_tool_name_is_taken_is_a_config_error() -> None:
    @tool
    def agent_t(task: str) -> str:
        """A local tool already named like the agent's."""
        return task

    async with scripted_agent() as url:
        with pytest.raises(ConfigError, match="agent 't' would be the tool 'agent_t'"):
            await create_art_instance(
                {"storage": {"type": "memory"}, "agents": [{"id": "t", "url": url}]},
                providers={"scripted": ScriptedProvider([])},
                tools=[agent_t],
            )


def test_without_the_extra_an_agents_section_asks_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in sys.modules if n == "a2a" or n.startswith("a2a.")] or ["a2a"]:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    monkeypatch.delitem(sys.modules, "pes_agent.tools.a2a", raising=False)
    monkeypatch.delitem(sys.modules, "pes_agent.tools.a2a_connection", raising=False)
    with pytest.raises(ConfigError, match=r"pip install 'pes-agent\[a2a\]'"):
        asyncio.run(
            create_art_instance({"storage": {"type": "memory"}, "agents": [{"id": "t", "url": "http://a"}]})
        )


def test_a_guided_step_sends_the_steps_request_whole_to_an_agent() -> None:
    """A small model picks among grounded values; for a delegated task the only right one is the
    whole request (a quoted span or a number picked out of it would lose what to do)."""
    from pes_agent.guided.arguments import guided_arguments_schema
    from pes_agent.tools.a2a import TASK_SCHEMA

    part = "Ask the helper to count the words in 'the answer is 84'"
    schema = guided_arguments_schema(TASK_SCHEMA, part, f"{part}, then say hi.", [])
    assert schema["properties"]["task"]["enum"] == [part]
