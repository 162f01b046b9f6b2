"""An instance served as an A2A agent (``pes_agent.serving.a2a``, ``pes-agent serve-a2a``), against
real servers on 127.0.0.1: in this process with uvicorn and as a child process, called by a second
instance that delegates to it (the helpers are test_a2a.py's)."""

from __future__ import annotations

import asyncio
import importlib.util
import io
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_a2a import caller, delegate, free_port, wait_for_port
from turns import call, content, plan

from pes_agent import create_art_instance, tool
from pes_agent.cli import main
from pes_agent.instance import ArtInstance
from pes_agent.testing import ScriptedProvider
from tests.tools_for_loading import multiply

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("a2a") is None or importlib.util.find_spec("uvicorn") is None,
    reason="the `a2a` extra is not installed (pip install -e '.[a2a]')",
)


def remote_thread(thread_id: str, agent_id: str) -> str:
    """The served instance's thread for a caller's thread (imported here: the module must import
    without the `a2a` extra, whose absence skips every test)."""
    from pes_agent.tools.a2a_connection import context_for

    return f"a2a-{context_for(thread_id, agent_id)}"


@asynccontextmanager
async def serving(art: ArtInstance, tokens: dict[str, str] | None = None) -> AsyncIterator[str]:
    """``art`` served over A2A by uvicorn in this event loop, on a free loopback port."""
    import uvicorn

    from pes_agent.serving.a2a import a2a_app

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    server = uvicorn.Server(
        uvicorn.Config(a2a_app(art, url=url, tokens=tokens), host="127.0.0.1", port=port, log_level="warning")
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    try:
        yield url
    finally:
        server.should_exit = True
        await task


SENT: list[tuple[str, float]] = []


@tool(requires_approval=True, side_effects=True)
def send_invoice(customer: str, amount: float) -> str:
    """Send an invoice to a customer."""
    SENT.append((customer, amount))
    return f"invoice of {amount:g} sent to {customer}"


async def served_instance(replies: Sequence[Any], *tools: Any) -> tuple[ArtInstance, ScriptedProvider]:
    provider = ScriptedProvider(list(replies))
    cfg = {"storage": {"type": "memory"}, "persona": {"name": "Calc"}}
    art = await create_art_instance(cfg, providers={"scripted": provider}, tools=list(tools or [multiply]))
    return art, provider


def multiplying(a: float, b: float, answer: str) -> list[str]:
    """What the served instance's model says for one task: plan, call, close, answer."""
    return [
        plan("multiply"),
        call("multiply", {"a": a, "b": b}),
        content(f"{a:g} x {b:g}"),
        f"<mainContent>{answer}</mainContent>",
    ]


# --- a pes-agent instance served, called by a second one ----------------------------------------


async def test_a_served_instance_becomes_a_tool_described_by_its_card() -> None:
    served, _ = await served_instance([])
    async with served, serving(served) as url:
        art, _ = await caller([{"id": "calc", "url": url}])
        async with art:
            spec = art.registry.get("agent_calc")
            assert spec is not None
            assert spec.summary.startswith("Delegate a task to the remote agent Calc:")
            assert spec.capabilities == ("multiply",)
            assert "Skill multiply: Multiply two numbers." in spec.description
            assert art.tool_sources["agent_calc"] == "a2a:calc"
            assert list(spec.input_schema["required"]) == ["task"]


async def test_a_run_delegates_a_step_and_synthesis_sees_the_remote_answer() -> None:
    served, served_model = await served_instance(multiplying(6, 7, "6 times 7 is 42."))
    async with served, serving(served) as url:
        replies = [
            plan("agent_calc"),
            call("agent_calc", {"task": "Multiply 6 by 7."}),
            content("The calculator agent says 42."),
            "<mainContent>42</mainContent>",
        ]
        art, model = await caller([{"id": "calc", "url": url}], replies)
        async with art:
            response = await art.process("What is 6 times 7? Ask the calculator agent.")
    assert response.status == "success", response.error
    assert response.response == "42"
    step = response.todo_list[0]
    assert step.tool_results[0].output == {"answer": "6 times 7 is 42.", "data": []}
    assert "6 times 7 is 42." in model.calls[2].text  # the closing turn of the step sees the answer
    assert served_model.calls[0].text.count("Multiply 6 by 7.") >= 1  # the remote planner got the task
    served_model.assert_complete()
    model.assert_complete()


async def test_a_threads_tasks_to_one_agent_share_one_remote_thread() -> None:
    follow_up = json.loads(plan("multiply", "multiply").split("\n")[1])
    follow_up["todoList"][0]["status"] = "completed"  # the follow-up keeps the first step, adds one
    refined = f"---JSON_OUTPUT_START---\n{json.dumps(follow_up)}\n---JSON_OUTPUT_END---"
    served, _ = await served_instance([*multiplying(2, 3, "6"), refined, *multiplying(6, 2, "12")[1:]])
    async with served, serving(served) as url:
        art, _ = await caller([{"id": "calc", "url": url}])
        async with art:
            first = await delegate(art, "agent_calc", "Multiply 2 by 3.", thread_id="mine")
            second = await delegate(art, "agent_calc", "Now double it.", thread_id="mine")
            other = await delegate(art, "agent_calc", "Anything", thread_id="someone-else")
        assert (first.output["answer"], second.output["answer"]) == ("6", "12")
        assert other.status == "error"  # the served model has no replies left
        mine = await served.get_thread_state(remote_thread("mine", "calc"))
        theirs = await served.get_thread_state(remote_thread("someone-else", "calc"))
    assert mine is not None and mine.run_count == 2
    assert theirs is not None and theirs.run_count == 1


async def test_a_clarification_is_asked_as_input_required_and_answered_in_the_same_context() -> None:
    from a2a.client import ClientConfig, create_client
    from a2a.helpers import get_artifact_text, new_text_message
    from a2a.types import a2a_pb2 as a2a

    replies = [
        plan("multiply"),
        call("multiply", {}),
        '{"a": null, "b": null}',
        '{"a": 4, "b": 5}',
        content("4 x 5"),
        "<mainContent>20</mainContent>",
    ]
    served, _ = await served_instance(replies)
    async with served, serving(served) as url:
        client = await create_client(url.rstrip("/"), client_config=ClientConfig(streaming=False))
        try:
            first = [
                e
                async for e in client.send_message(
                    a2a.SendMessageRequest(message=new_text_message("Multiply", role=a2a.ROLE_USER))
                )
            ]
            task = first[-1].task
            assert task.status.state == a2a.TASK_STATE_INPUT_REQUIRED, task.status
            answer = new_text_message(
                "4 and 5", context_id=task.context_id, task_id=task.id, role=a2a.ROLE_USER
            )
            second = [e async for e in client.send_message(a2a.SendMessageRequest(message=answer))]
        finally:
            await client.close()
    done = second[-1].task
    assert done.status.state == a2a.TASK_STATE_COMPLETED, done.status
    assert get_artifact_text(done.artifacts[-1]) == "20"


async def test_approval_pauses_the_task_and_a_data_part_decision_resumes_it() -> None:
    from a2a.client import ClientConfig, create_client
    from a2a.helpers import get_artifact_text, get_data_parts, new_data_part, new_text_message
    from a2a.types import a2a_pb2 as a2a

    SENT.clear()
    replies = [
        plan("send_invoice"),
        call("send_invoice", {"customer": "ACME", "amount": 120}),
        content("sent"),
        "<mainContent>The invoice went out.</mainContent>",
    ]
    served, _ = await served_instance(replies, send_invoice)
    async with served, serving(served) as url:
        client = await create_client(url.rstrip("/"), client_config=ClientConfig(streaming=True))
        try:
            request = a2a.SendMessageRequest(message=new_text_message("Invoice ACME 120", role=a2a.ROLE_USER))
            first = [e async for e in client.send_message(request)]
            paused = first[-1].status_update
            assert paused.status.state == a2a.TASK_STATE_INPUT_REQUIRED
            asked = get_data_parts(list(paused.status.message.parts))[0]
            assert asked["tool"] == "send_invoice" and asked["arguments"] == {
                "customer": "ACME",
                "amount": 120,
            }
            words_only = new_text_message(
                "yes", context_id=paused.context_id, task_id=paused.task_id, role=a2a.ROLE_USER
            )
            refused = [e async for e in client.send_message(a2a.SendMessageRequest(message=words_only))]
            assert refused[-1].status_update.status.state == a2a.TASK_STATE_FAILED
            assert "answer with a data part" in str(refused[-1].status_update.status.message)
            lenient = a2a.Message(
                message_id="m2b",
                context_id=paused.context_id,
                role=a2a.ROLE_USER,
                parts=[new_data_part({"approved": "false"})],
            )
            bad = [e async for e in client.send_message(a2a.SendMessageRequest(message=lenient))]
            assert bad[-1].status_update.status.state == a2a.TASK_STATE_FAILED  # not read as an approval
            assert "`decision.approved` must be true or false" in str(bad[-1].status_update.status.message)
            assert SENT == []
            decision = a2a.Message(
                message_id="m3",
                context_id=paused.context_id,
                role=a2a.ROLE_USER,
                parts=[new_data_part({"approved": True})],
            )
            done = [e async for e in client.send_message(a2a.SendMessageRequest(message=decision))]
        finally:
            await client.close()
    artifacts = [e.artifact_update.artifact for e in done if e.HasField("artifact_update")]
    assert get_artifact_text(artifacts[-1]) == "The invoice went out."
    assert done[-1].status_update.status.state == a2a.TASK_STATE_COMPLETED
    assert SENT == [("ACME", 120)]  # once, after the proper decision


# --- the command line: serve-a2a in a child process, tools listing --------------------------------


@pytest.fixture
def served_by_cli(tmp_path: Path) -> Iterator[str]:
    """`pes-agent serve-a2a` on a config whose model replays one multiplication."""
    script = tmp_path / "replies.json"
    script.write_text(json.dumps({"replies": multiplying(6, 7, "42, computed remotely.")}), encoding="utf-8")
    config = tmp_path / "served.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "providers": {"replay": {"adapter": "scripted", "script": str(script)}},
                "storage": {"type": "memory"},
                "persona": {"name": "Calc"},
                "tools": ["tests.tools_for_loading:multiply"],
            }
        ),
        encoding="utf-8",
    )
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "pes_agent.cli",
        "serve-a2a",
        "--config",
        str(config),
        "--port",
        str(port),
    ]
    child = subprocess.Popen(command, stderr=subprocess.PIPE, cwd=Path(__file__).resolve().parents[1])
    try:
        wait_for_port(port, child, "pes-agent serve-a2a")
        yield f"http://127.0.0.1:{port}"
    finally:
        child.terminate()
        child.wait(timeout=10)


async def test_serve_a2a_serves_a_config_that_a_second_instance_delegates_to(served_by_cli: str) -> None:
    art, _ = await caller([{"id": "calc", "url": served_by_cli, "timeoutS": 20}])
    async with art:
        result = await delegate(art, "agent_calc", "Multiply 6 by 7.")
    assert (result.status, result.output) == ("success", {"answer": "42, computed remotely.", "data": []})


def test_cli_tools_lists_agents_with_their_source(served_by_cli: str, tmp_path: Path) -> None:
    config = tmp_path / "caller.yaml"
    config.write_text(
        yaml.safe_dump({"storage": {"type": "memory"}, "agents": [{"id": "calc", "url": served_by_cli}]}),
        encoding="utf-8",
    )
    out, err = io.StringIO(), io.StringIO()
    assert main(["tools", "--config", str(config)], out=out, err=err) == 0, err.getvalue()
    assert " ".join(out.getvalue().split()) == (
        "a2a:calc agent_calc Delegate a task to the remote agent Calc: A plan-execute agent with 1 tool(s); "
        "send a task in words, get an answer."
    )


@pytest.mark.local_model
def test_two_local_model_instances_delegate_over_a2a(tmp_path: Path) -> None:
    """The README's A2A example as shipped: config/local.yaml served, config/a2a-local.yaml calling it."""
    pytest.importorskip("llama_cpp")
    repo = Path(__file__).resolve().parents[1]
    served = yaml.safe_load((repo / "config" / "local.yaml").read_text(encoding="utf-8"))
    served["storage"] = {"type": "memory"}
    served_file = tmp_path / "served.yaml"
    served_file.write_text(yaml.safe_dump(served), encoding="utf-8")
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "pes_agent.cli",
        "serve-a2a",
        "--config",
        str(served_file),
        "--port",
        str(port),
    ]
    child = subprocess.Popen(command, stderr=subprocess.DEVNULL, cwd=repo)
    try:
        wait_for_port(port, child, "pes-agent serve-a2a on the local model")
        caller_cfg = yaml.safe_load((repo / "config" / "a2a-local.yaml").read_text(encoding="utf-8"))
        caller_cfg["storage"] = {"type": "memory"}
        caller_cfg["agents"][0]["url"] = f"http://127.0.0.1:{port}"
        caller_file = tmp_path / "caller.yaml"
        caller_file.write_text(yaml.safe_dump(caller_cfg), encoding="utf-8")
        out, err = io.StringIO(), io.StringIO()
        code = main(
            ["run", "--config", str(caller_file), "Ask the helper agent to compute 12 * 7."], out=out, err=err
        )
    finally:
        child.terminate()
        child.wait(timeout=10)
    assert code == 0, err.getvalue()
    assert "step_1: agent_helper -> success" in err.getvalue()
    assert "84" in out.getvalue()


# --- who may call: bearer tokens mapped to users ---------------------------------------------------

TOKENS = {"tok-ana-5551": "ana", "tok-ben-7772": "ben"}


async def test_with_tokens_calls_need_one_and_a_conversation_stays_its_users() -> None:
    import httpx

    served, _ = await served_instance([*multiplying(2, 3, "6")])
    async with served, serving(served, TOKENS) as url:
        async with httpx.AsyncClient() as http:
            card = (await http.get(f"{url}.well-known/agent-card.json")).json()  # the card stays public
            refused = await http.post(
                url, json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}}
            )
            wrong = await http.post(url, json={}, headers={"Authorization": "Bearer tok-nobody"})
        assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
        assert (refused.status_code, refused.headers["www-authenticate"]) == (401, "Bearer")
        assert "Authorization: Bearer <token>" in refused.json()["error"]
        assert wrong.status_code == 401 and "tok-nobody" not in wrong.text

        ana, _ = await caller(
            [{"id": "calc", "url": url, "headers": {"Authorization": "Bearer tok-ana-5551"}}]
        )
        ben, _ = await caller(
            [{"id": "calc", "url": url, "headers": {"Authorization": "Bearer tok-ben-7772"}}]
        )
        async with ana, ben:
            first = await delegate(ana, "agent_calc", "Multiply 2 by 3.", thread_id="shared-name")
            # ben's instance derives the same context id for the same thread name: ana's conversation
            taken = await delegate(ben, "agent_calc", "Now double it.", thread_id="shared-name")
        state = await served.get_thread_state(remote_thread("shared-name", "calc"), user_id="ana")
    assert first.output == {"answer": "6", "data": []}
    assert taken.status == "error" and "the task failed" in (taken.error or "")
    assert "ana" not in (taken.error or "")  # the refusal never names the owner
    assert state is not None and state.owner == "ana" and state.run_count == 1


def test_serve_a2a_refuses_an_open_non_loopback_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PES_AGENT_TOKENS", raising=False)
    config = tmp_path / "served.yaml"
    config.write_text(yaml.safe_dump({"storage": {"type": "memory"}}), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["serve-a2a", "--config", str(config), "--host", "0.0.0.0", "--port", str(free_port())],
        out=out,
        err=err,
    )
    assert code == 2
    assert "set PES_AGENT_TOKENS=token:user,... or pass --open" in err.getvalue()


def test_malformed_tokens_are_a_config_error_that_shows_no_token() -> None:
    from pes_agent.errors import ConfigError
    from pes_agent.serving.a2a_auth import parse_tokens

    assert parse_tokens(" tok-a:ana , tok:b:ben ,") == {"tok-a": "ana", "tok:b": "ben"}
    with pytest.raises(ConfigError, match="entry 2 of PES_AGENT_TOKENS is not `token:user`") as caught:
        parse_tokens("tok-a:ana,secret-without-user")
    assert "secret-without-user" not in str(caught.value)
