"""Tools from MCP servers, against a real server (`pes_agent.testing.mcp_server`: the SDK's MCPServer on
mcp 2.x, FastMCP on 1.x): over stdio as a child process the instance starts, and over streamable HTTP on
127.0.0.1. `.ci/run` runs this file on both SDK majors."""

from __future__ import annotations

import asyncio
import importlib.util
import io
import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import require_tiktoken
from turns import call, content, plan

from pes_agent import create_art_instance
from pes_agent.cli import main
from pes_agent.config import config_from_dict
from pes_agent.errors import ConfigError
from pes_agent.instance import ArtInstance
from pes_agent.testing import ScriptedProvider
from pes_agent.tools.executor import ToolExecutor
from pes_agent.tools.spec import ToolCall, ToolContext, ToolResult

needs_mcp = pytest.mark.skipif(
    importlib.util.find_spec("mcp") is None,
    reason="the `mcp` extra is not installed (pip install -e '.[mcp]')",
)
SERVER = [sys.executable, "-m", "pes_agent.testing.mcp_server"]
SECRET = "tok-3141592653-secret"


def stdio_server(server_id: str = "t", **extra: Any) -> dict[str, Any]:
    return {"id": server_id, "transport": "stdio", "command": SERVER[0], "args": SERVER[1:], **extra}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def serve_http(*extra: str) -> Iterator[str]:
    """The test server over streamable HTTP: a child process on a free loopback port."""
    if importlib.util.find_spec("mcp") is None:
        pytest.skip("the `mcp` extra is not installed")
    port = free_port()
    child = subprocess.Popen([*SERVER, "--port", str(port), *extra], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if child.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the MCP test server did not start on port {port}")
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        child.terminate()
        child.wait(timeout=10)


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    yield from serve_http()


@pytest.fixture(scope="module")
def dynamic_http_url() -> Iterator[str]:
    yield from serve_http("--dynamic")


@pytest.fixture(params=["stdio", "http"])
def server(request: pytest.FixtureRequest) -> dict[str, Any]:
    """One server entry of `mcp.servers`, id `t`, for each transport."""
    if request.param == "stdio":
        return stdio_server(timeoutS=1.5)
    url = request.getfixturevalue("http_url")
    return {
        "id": "t",
        "transport": "streamable-http",
        "url": url,
        "headers": {"X-Token": SECRET},
        "timeoutS": 1.5,
    }


def children() -> set[int]:
    """Child processes of this test process (from /proc)."""
    me, found = os.getpid(), set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            ppid = next((line.split()[1] for line in status.splitlines() if line.startswith("PPid:")), None)
            if ppid == str(me):
                found.add(int(entry.name))
    return found


async def make(
    servers: list[dict[str, Any]], replies: Sequence[Any] = (), **kwargs: Any
) -> tuple[ArtInstance, ScriptedProvider]:
    provider = ScriptedProvider(list(replies))
    cfg = {"storage": {"type": "memory"}, "mcp": {"servers": servers}}
    art = await create_art_instance(cfg, providers={"scripted": provider}, **kwargs)
    return art, provider


async def execute(art: ArtInstance, name: str, arguments: dict[str, Any]) -> ToolResult:
    context = ToolContext(thread_id="th", trace_id="tr", step_id="step_1", call_id="c1")
    call = ToolCall(call_id="c1", tool_name=name, arguments=arguments)
    return await ToolExecutor(art.registry).execute(call, allowed=[name], context=context)


# --- names and listing -------------------------------------------------------------------------


def test_tool_names_are_sanitised_and_cut_to_64() -> None:
    pytest.importorskip("mcp")
    from pes_agent.tools.mcp import mcp_tool_name

    assert mcp_tool_name("files", "read_file") == "mcp_files_read_file"
    assert mcp_tool_name("gh", "repos/get.contents v2") == "mcp_gh_repos_get_contents_v2"
    assert mcp_tool_name("files", "read_file", prefix="") == "read_file"
    assert mcp_tool_name("files", "read.file", prefix="fs-") == "fs-read_file"
    long = mcp_tool_name("server", "x" * 100)
    assert len(long) == 64 and long.startswith("mcp_server_xxx")


@needs_mcp
async def test_tools_are_listed_named_and_described_by_their_first_line(server: dict[str, Any]) -> None:
    art, _ = await make([{**server, "exclude": ["crash"]}])
    async with art:
        names = art.registry.names()
        assert names == ["mcp_t_convert_currency", "mcp_t_echo", "mcp_t_refuse", "mcp_t_sleep"]
        assert {art.tool_sources[n] for n in names} == {"mcp:t"}
        assert art.registry.manifesto_lines(["mcp_t_convert_currency"]) == [
            "- mcp_t_convert_currency: Convert an amount of money to US dollars."
        ]
        schema = art.registry.get("mcp_t_convert_currency").input_schema  # type: ignore[union-attr]
        assert schema["properties"]["currency"]["enum"] == ["EUR", "GBP", "USD"]  # the server's inputSchema


@needs_mcp
async def test_a_declared_output_schema_becomes_the_tools_output_schema(server: dict[str, Any]) -> None:
    art, _ = await make([server])
    async with art:
        declared = art.registry.get("mcp_t_convert_currency")
        assert declared is not None and declared.output_schema is not None  # the server's outputSchema
        assert declared.output_schema["type"] == "object"
        assert set(declared.output_schema["properties"]) == {"amount", "currency", "usd"}
        assert set(declared.output_schema["required"]) == {"amount", "currency", "usd"}
        plain = art.registry.get("mcp_t_echo")  # `structured_output=False`: no outputSchema declared
        assert plain is not None and plain.output_schema is None


@needs_mcp
async def test_include_keeps_only_the_named_tools_and_warns_of_names_the_server_lacks(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="pes_agent.tools.mcp"):
        art, _ = await make([stdio_server(include=["echo", "refuse", "ecko"])])
    async with art:
        assert art.registry.names() == ["mcp_t_echo", "mcp_t_refuse"]
    [warning] = [r.getMessage() for r in caplog.records]
    assert "MCP server 't'" in warning and "has no tool 'ecko'" in warning


def test_a_relative_cwd_is_taken_from_the_config_files_folder(tmp_path: Path) -> None:
    (tmp_path / "servers").mkdir()
    config = tmp_path / "agent.yaml"
    config.write_text(yaml.safe_dump({"mcp": {"servers": [stdio_server(cwd="servers")]}}), encoding="utf-8")
    from pes_agent.config import load_config

    assert load_config(config).mcp.servers[0].cwd == str(tmp_path / "servers")
    config.write_text(yaml.safe_dump({"mcp": {"servers": [stdio_server(cwd="nowhere")]}}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"mcp.servers\[0\].cwd.*does not exist"):
        load_config(config)


@needs_mcp
async def test_an_unusable_schema_leaves_that_tool_out_and_odd_names_are_sanitised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = stdio_server(args=[*SERVER[1:], "--odd-tools"], include=["broken", "lookup.v2/beta", "echo"])
    with caplog.at_level(logging.WARNING, logger="pes_agent.tools.mcp"):
        art, _ = await make([server])
    async with art:
        assert art.registry.names() == ["mcp_t_lookup_v2_beta", "mcp_t_echo"]
        result = await execute(art, "mcp_t_lookup_v2_beta", {"key": "k"})  # called by its own name
        assert (result.status, result.output) == ("success", {"result": "value of k"})
    [warning] = [r.getMessage() for r in caplog.records]
    assert "tool 'broken' of MCP server 't'" in warning and "input schema" in warning


@needs_mcp
async def test_planning_with_200_mcp_tools_costs_the_prefix_and_without_it_meets_the_budget() -> None:
    """Issue 15's token target: the catalogue of 200 tools served by MCP plans within 8 % of the
    original's planning prompt (60,306 tokens) as the same tools in Python do. With retrieval (the
    `retrieval` extra) the planner sees 30 tools described and the rest by name, within the target
    with the prefix; without it, the
    `mcp_<id>_` prefix costs about 3.5 tokens a tool, just over the target at 200 tools, and
    `toolPrefix: ""` meets it, token for token the Python figure."""
    require_tiktoken()
    from pes_agent.llm.tokens import count_messages
    from pes_agent.tools.decorators import tool_from_schema

    catalog = Path(__file__).parent / "fixtures" / "catalogs" / "catalog_N200.json"
    query = (
        "Find recent articles about the James Webb Space Telescope's discoveries and summarize the key "
        "findings."
    )

    async def planning_tokens(config: dict[str, Any], tools: Sequence[Any] = ()) -> int:
        art = await create_art_instance({"storage": {"type": "memory"}, **config}, tools=list(tools))
        async with art:
            assert len(art.registry) == 200
            count = count_messages(art.planning_prompt(query).messages)
        assert count.source == "tiktoken"
        return count.tokens

    entries = json.loads(catalog.read_text(encoding="utf-8"))["tools"]
    python = await planning_tokens(
        {},
        [tool_from_schema(t["name"], t["description"], t["inputSchema"], lambda **_: None) for t in entries],
    )
    served = stdio_server("c", args=[*SERVER[1:], "--catalog", str(catalog)])
    prefixed = await planning_tokens({"mcp": {"servers": [served]}})
    bare = await planning_tokens({"mcp": {"servers": [{**served, "toolPrefix": ""}]}})
    budget = 0.08 * 60_306
    assert bare == python <= budget
    if importlib.util.find_spec("bm25s") is not None:  # retrieval on: 30 described, the rest by name
        assert prefixed <= budget
    else:
        assert 0 < prefixed - python <= 4 * 200  # only the names differ


# --- calls ---------------------------------------------------------------------------------------


@needs_mcp
async def test_a_run_calls_an_mcp_tool_through_the_gate_and_synthesis_sees_the_result(
    server: dict[str, Any],
) -> None:
    answer = "<mainContent>12.5 EUR is 13.5 USD.</mainContent>"
    replies = [
        plan("mcp_t_convert_currency"),
        call("mcp_t_convert_currency", {"amount": "12.5", "currency": "eur"}),  # the gate repairs both
        content("12.5 EUR = 13.5 USD"),
        answer,
    ]
    art, provider = await make([server], replies)
    async with art:
        response = await art.process("How much is 12.5 euros in dollars?")
    assert response.status == "success", response.error
    assert response.response == "12.5 EUR is 13.5 USD."
    assert [c.phase for c in provider.calls] == ["planning", "execution", "execution", "synthesis"]
    assert '"usd": 13.5' in provider.calls[2].text or '"usd":13.5' in provider.calls[2].text
    provider.assert_complete()


@needs_mcp
async def test_text_content_is_the_output_when_there_is_no_structured_content(server: dict[str, Any]) -> None:
    art, _ = await make([server])
    async with art:
        result = await execute(art, "mcp_t_echo", {"text": "hello"})
    assert (result.status, result.output) == ("success", "hello")


@needs_mcp
async def test_is_error_becomes_a_tool_error_the_model_sees(server: dict[str, Any]) -> None:
    art, _ = await make([server])
    async with art:
        result = await execute(art, "mcp_t_refuse", {"reason": "closed on Sundays"})
    assert result.status == "error"
    assert "MCP server 't', tool 'refuse'" in (result.error or "")
    assert "refused: closed on Sundays" in (result.error or "")


@needs_mcp
async def test_a_timeout_is_a_tool_error_and_the_next_call_works(server: dict[str, Any]) -> None:
    art, _ = await make([server])
    async with art:
        started = time.monotonic()
        result = await execute(art, "mcp_t_sleep", {"seconds": 10})
        assert time.monotonic() - started < 8
        assert result.status == "error" and "no answer within 1.5s" in (result.error or "")
        again = await execute(art, "mcp_t_echo", {"text": "still here"})
        assert (again.status, again.output) == ("success", "still here")


@needs_mcp
async def test_a_dropped_connection_is_a_tool_error_and_the_next_call_reconnects() -> None:
    base = children()  # e.g. the HTTP server of other tests
    art, _ = await make([stdio_server(timeoutS=5)])
    async with art:
        before = children() - base
        assert len(before) == 1
        crashed = await execute(art, "mcp_t_crash", {})
        assert crashed.status == "error" and "the next call reconnects" in (crashed.error or "")
        again = await execute(art, "mcp_t_echo", {"text": "back"})
        assert (again.status, again.output) == ("success", "back")
        after = children() - base
        assert len(after) == 1 and after != before  # a new server process
    assert children() == base


@needs_mcp
async def test_aclose_leaves_no_child_process() -> None:
    base = children()
    art, _ = await make([stdio_server("a"), stdio_server("b")])
    assert len(children() - base) == 2
    await art.aclose()
    assert children() == base


@needs_mcp
async def test_concurrent_calls_share_one_session() -> None:
    art, _ = await make([stdio_server()])
    async with art:
        base = children()
        results = await asyncio.gather(*(execute(art, "mcp_t_echo", {"text": str(i)}) for i in range(8)))
        assert [r.output for r in results] == [str(i) for i in range(8)]
        assert children() == base  # no second server process


@needs_mcp
async def test_servers_start_together_and_register_in_config_order() -> None:
    base = children()
    art, _ = await make([stdio_server("b", include=["echo"]), stdio_server("a", include=["refuse", "echo"])])
    async with art:
        assert art.registry.names() == ["mcp_b_echo", "mcp_a_echo", "mcp_a_refuse"]
    assert children() == base


@needs_mcp
async def test_an_instance_built_in_one_task_closes_from_another() -> None:
    """The SDK's transports are task groups that must be left by the task that entered them; the
    instance's connections are held by tasks of their own, so a service may close it anywhere."""
    base = children()
    art, _ = await asyncio.create_task(make([stdio_server()]))
    assert (await execute(art, "mcp_t_echo", {"text": "x"})).output == "x"
    await asyncio.create_task(art.aclose())
    assert children() == base


async def until(condition: Callable[[], bool]) -> None:
    """Wait for something another task does (bounded, so a bug fails instead of hanging)."""
    async with asyncio.timeout(10):
        while not condition():
            await asyncio.sleep(0.01)


@needs_mcp
async def test_a_changed_tool_list_adds_and_removes_tools_while_the_instance_runs(
    server: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    dynamic = {**server, "exclude": ["crash", "sleep"]}
    if server["transport"] == "stdio":
        dynamic["args"] = [*SERVER[1:], "--dynamic"]
    else:
        dynamic["url"] = request.getfixturevalue("dynamic_http_url")
    art, _ = await make([dynamic])
    async with art:
        assert "mcp_t_extra" not in art.registry
        assert (await execute(art, "mcp_t_grow", {"name": "extra"})).output == "added extra"
        await until(lambda: "mcp_t_extra" in art.registry)
        assert art.tool_sources["mcp_t_extra"] == "mcp:t"
        planning = "".join(m.content for m in art.planning_prompt("q").messages)
        assert "- mcp_t_extra: Echo the text, prefixed with extra." in planning
        result = await execute(art, "mcp_t_extra", {"text": "hi"})
        assert (result.status, result.output) == ("success", {"result": "extra: hi"})
        assert (await execute(art, "mcp_t_shrink", {"name": "extra"})).output == "removed extra"
        await until(lambda: "mcp_t_extra" not in art.registry)
        assert "mcp_t_extra" not in art.tool_sources
        assert "mcp_t_echo" in art.registry


# --- start-up problems ---------------------------------------------------------------------------


@needs_mcp
async def test_a_server_slower_to_start_than_connect_timeout_is_left_out_naming_the_setting(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Starting is bounded by connectTimeoutS, apart from the calls' timeoutS: a short call timeout no
    longer makes a slowly starting server (npx, a busy machine) unreachable."""
    caplog.set_level(logging.WARNING, logger="pes_agent.tools.mcp")
    silent = {
        "id": "slow",
        "transport": "stdio",
        "command": "sh",
        "args": ["-c", "sleep 30"],
        "connectTimeoutS": 0.5,
        "timeoutS": 60,
    }
    base = children()
    started = time.monotonic()
    art, _ = await make([silent, stdio_server(timeoutS=0.5)])
    async with art:
        assert time.monotonic() - started < 20
        assert "mcp_slow_echo" not in art.registry and "mcp_t_echo" in art.registry
    assert (
        "MCP server 'slow' (stdio: `sh -c sleep 30`) did not answer within 0.5s (`connect_timeout_s`)"
        in caplog.text
    )
    assert children() == base


@needs_mcp
async def test_a_server_down_at_start_is_logged_and_the_others_still_serve(
    caplog: pytest.LogCaptureFixture,
) -> None:
    down = {
        "id": "down",
        "transport": "streamable-http",
        "url": f"http://127.0.0.1:{free_port()}/mcp",
        "headers": {"Authorization": f"Bearer {SECRET}"},
        "timeoutS": 3,
    }
    missing = {"id": "nocmd", "transport": "stdio", "command": "/nonexistent/mcp-server", "timeoutS": 3}
    with caplog.at_level(logging.INFO, logger="pes_agent.tools.mcp"):
        art, _ = await make([down, missing, stdio_server(include=["echo"])])
        async with art:
            assert art.registry.names() == ["mcp_t_echo"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("MCP server 'down'" in w and "could not be reached" in w for w in warnings)
    assert any("MCP server 'nocmd'" in w and "/nonexistent/mcp-server" in w for w in warnings)
    assert SECRET not in caplog.text


@needs_mcp
async def test_a_name_collision_is_a_config_error_naming_both() -> None:
    from pes_agent import tool

    @tool(name="mcp_t_echo")
    def local_echo(text: str) -> str:
        """A Python tool that takes the MCP tool's name."""
        return text

    before = children()
    with pytest.raises(ConfigError) as caught:
        await make([stdio_server()], tools=[local_echo])
    message = str(caught.value)
    assert "'mcp_t_echo'" in message and "tool 'echo' of MCP server 't'" in message
    assert children() == before  # the server started for listing was stopped


def test_an_unknown_transport_or_a_missing_command_is_a_clear_config_error() -> None:
    with pytest.raises(ConfigError, match=r"mcp.servers\[0\].transport.*allowed: stdio, streamable-http"):
        config_from_dict({"mcp": {"servers": [{"id": "x", "transport": "sse", "url": "http://h/mcp"}]}})
    with pytest.raises(ConfigError, match=r"mcp.servers\[0\].command.*needs the command"):
        config_from_dict({"mcp": {"servers": [{"id": "x", "transport": "stdio"}]}})
    for url in ("h/mcp", "ftp://h/mcp", "http://h:99999/mcp", "http://h:port/mcp", "http:///mcp"):
        with pytest.raises(ConfigError, match=r"mcp.servers\[0\].url.*http\(s\) URL"):
            config_from_dict({"mcp": {"servers": [{"id": "x", "transport": "streamable-http", "url": url}]}})
    with pytest.raises(ConfigError, match=r"mcp.servers\[0\].url.*belongs to transport 'streamable-http'"):
        config_from_dict(
            {"mcp": {"servers": [{"id": "x", "transport": "stdio", "command": "c", "url": "http://h"}]}}
        )
    with pytest.raises(ConfigError, match=r"mcp.servers\[1\].id.*used twice"):
        config_from_dict({"mcp": {"servers": [stdio_server("x"), stdio_server("x")]}})
    with pytest.raises(ConfigError, match=r"mcp.servers\[0\].toolPrefix.*only letters, digits"):
        config_from_dict({"mcp": {"servers": [stdio_server("x", toolPrefix="my tools.")]}})
    with pytest.raises(ConfigError, match=r"mcp.servers\[0\].id.*cannot be part of a tool name"):
        config_from_dict({"mcp": {"servers": [stdio_server("my server")]}})


def test_header_and_env_values_are_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_TOKEN", SECRET)
    cfg = config_from_dict(
        {
            "mcp": {
                "servers": [
                    {
                        "id": "h",
                        "transport": "streamable-http",
                        "url": "http://h/mcp",
                        "headers": {"Authorization": "${MCP_TOKEN}"},
                    },
                    stdio_server("s", env={"API_TOKEN": "${MCP_TOKEN}"}),
                ]
            }
        }
    )
    assert cfg.mcp.servers[0].headers["Authorization"].get_secret_value() == SECRET
    dumped = json.dumps(cfg.model_dump(mode="json"))
    assert SECRET not in dumped and SECRET not in repr(cfg) and "${MCP_TOKEN}" in dumped
    with pytest.raises(ConfigError) as caught:  # a bad value elsewhere in the same server entry
        config_from_dict(
            {
                "mcp": {
                    "servers": [
                        {
                            "id": "h",
                            "transport": "streamable-http",
                            "url": "h/mcp",
                            "headers": {"Authorization": SECRET},
                        }
                    ]
                }
            }
        )
    assert SECRET not in str(caught.value)


def card(**extra: Any) -> dict[str, Any]:
    """A server card of the original's `art_mcp_config.json`."""
    return {
        "id": "tavily",
        "type": "streamable-http",
        "enabled": True,
        "displayName": "Tavily",
        "description": "web search",
        "connection": {
            "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": f"Bearer {SECRET}"},
        },
        "timeout": 15000,
        "tools": [],
        "resources": [],
        "resourceTemplates": [],
        **extra,
    }


def test_the_originals_mcp_config_and_server_cards_load() -> None:
    cfg = config_from_dict({"mcpConfig": {"enabled": True, "mcpServers": {"tavily": card()}}})
    [server] = cfg.mcp.servers
    assert (server.id, server.transport, server.url, server.timeout_s, server.enabled) == (
        "tavily",
        "streamable-http",
        "https://mcp.example.com/mcp",
        15.0,
        True,
    )
    assert server.headers["Authorization"].get_secret_value() == f"Bearer {SECRET}"
    off = config_from_dict({"mcpConfig": {"mcpServers": {"tavily": card()}}})  # the original's default
    assert off.mcp.servers[0].enabled is False


@pytest.mark.parametrize(
    ("mcp_config", "where", "says"),
    [
        (
            {"enabled": True, "discoveryEndpoint": "https://d"},
            "mcpConfig.discoveryEndpoint",
            "discovery is not",
        ),
        ({"mcpServers": {"tavily": card(type="stdio")}}, "mcpConfig.mcpServers.tavily.type", "mcp.servers"),
        ({"mcpServers": {"tavily": card(timeout=-1)}}, "mcpConfig.mcpServers.tavily.timeout", "milliseconds"),
        (
            {"mcpServers": {"tavily": card(id="other")}},
            "mcpConfig.mcpServers.tavily.id",
            "differs from its key",
        ),
        (
            {"mcpServers": {"tavily": card(connection={"url": "https://h/mcp", "oauth": {"type": "pkce"}})}},
            "mcpConfig.mcpServers.tavily.connection.oauth",
            "`connection.headers`",
        ),
        (
            {"mcpServers": {"tavily": card(connection={"url": "h/mcp", "headers": {"A": SECRET}})}},
            "mcpConfig.mcpServers.tavily.connection.url",
            "http(s) URL",
        ),
    ],
)
def test_the_originals_shape_is_refused_clearly_where_it_cannot_be_served(
    mcp_config: dict[str, Any], where: str, says: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        config_from_dict({"mcpConfig": mcp_config})
    message = str(caught.value)
    assert f"`{where}`" in message and says in message
    assert SECRET not in message


@needs_mcp
async def test_a_server_card_of_the_original_serves_its_tools(http_url: str) -> None:
    cards = {"test": card(id="test", connection={"url": http_url}, timeout=5000)}
    provider = ScriptedProvider([])
    art = await create_art_instance(
        {"storage": {"type": "memory"}, "mcpConfig": {"enabled": True, "mcpServers": cards}},
        providers={"scripted": provider},
    )
    async with art:
        assert "mcp_test_echo" in art.registry.names()
        result = await execute(art, "mcp_test_echo", {"text": "from a card"})
    assert (result.status, result.output) == ("success", "from a card")


def test_without_the_extra_an_mcp_section_asks_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "pes_agent.tools.mcp", raising=False)
    monkeypatch.delitem(sys.modules, "pes_agent.tools.mcp_connection", raising=False)
    with pytest.raises(ConfigError, match=r"pes-agent\[mcp\]"):
        asyncio.run(make([stdio_server()]))


# --- pes-agent tools -----------------------------------------------------------------------------


@needs_mcp
def test_cli_tools_lists_python_and_mcp_tools_with_source_and_one_line(tmp_path: Path) -> None:
    base = children()
    config = tmp_path / "agent.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "storage": {"type": "memory"},
                "tools": ["tests.tools_for_loading:echo"],
                "mcp": {"servers": [stdio_server(exclude=["crash", "sleep"])]},
            }
        ),
        encoding="utf-8",
    )
    out, err = io.StringIO(), io.StringIO()
    assert main(["tools", "--config", str(config)], out=out, err=err) == 0, err.getvalue()
    lines = [" ".join(line.split()) for line in out.getvalue().splitlines()]
    assert lines == [
        "python:tests.tools_for_loading echo Return the text unchanged.",
        "mcp:t mcp_t_convert_currency Convert an amount of money to US dollars.",
        "mcp:t mcp_t_echo Repeat the text back.",
        "mcp:t mcp_t_refuse Always fails, with the reason given.",
    ]
    assert children() == base


@needs_mcp
def test_the_mcp_demo_config_runs_a_query_through_the_server(tmp_path: Path) -> None:
    """config/mcp-demo.yaml as shipped, but with this interpreter as `python` and the script absolute."""
    repo = Path(__file__).resolve().parents[1]
    raw = yaml.safe_load((repo / "config" / "mcp-demo.yaml").read_text(encoding="utf-8"))
    raw["providers"]["demo"]["script"] = str((repo / "config" / raw["providers"]["demo"]["script"]).resolve())
    raw["mcp"]["servers"][0]["command"] = sys.executable
    config = tmp_path / "mcp-demo.yaml"
    config.write_text(yaml.safe_dump(raw), encoding="utf-8")
    base = children()
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", "--config", str(config), "How much is 12.5 euros in US dollars?"], out=out, err=err)
    assert code == 0, err.getvalue()
    assert "13.50 US dollars" in out.getvalue()
    assert "step_1: mcp_demo_convert_currency -> success" in err.getvalue()
    assert children() == base
