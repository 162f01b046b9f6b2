"""The suite's own guards: prompt snapshots, the network guard, and runs that must not pass silently."""

from __future__ import annotations

import asyncio
import shutil
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from conftest import NetworkAccessDenied, require_tiktoken
from snapshot_ext import (
    PromptSnapshotExtension,
    count_o200k_tokens,
    mask_token_count,
    render_prompt,
)
from syrupy.assertion import SnapshotAssertion
from syrupy.data import Snapshot, SnapshotCollection

from pes_agent.llm.types import Message, PromptRequest

TESTS_DIR = Path(__file__).resolve().parent

REQUEST = PromptRequest(
    phase="execution",
    step_id="step_1",
    messages=(
        Message(role="system", content="Be terse.\n## not a section\n  keep  spacing"),
        Message(role="user", content="Capital of Peru?"),
    ),
    tools=("webSearch", "fetchPage"),
    response_schema={"type": "object", "required": ["answer"], "properties": {"answer": {"type": "string"}}},
)

RENDERED = """\
# phase: execution · step: step_1 · tools: webSearch, fetchPage · tokens(o200k): 812
## system
Be terse.
## not a section
  keep  spacing
## user
Capital of Peru?
## response_schema
{
  "type": "object",
  "required": [
    "answer"
  ],
  "properties": {
    "answer": {
      "type": "string"
    }
  }
}
"""


# --- the serialized form ---------------------------------------------------------------------------


def test_rendered_prompt_has_header_sections_and_verbatim_contents() -> None:
    assert render_prompt(REQUEST, tokens=812) == RENDERED


def test_missing_step_tools_and_schema_are_shown_as_absent() -> None:
    request = PromptRequest(phase="planning", step_id=None, messages=(Message(role="user", content="Plan."),))
    assert render_prompt(request, tokens=None) == (
        "# phase: planning · step: - · tools: - · tokens(o200k): ?\n## user\nPlan.\n"
    )


def test_masking_hides_only_the_header_count() -> None:
    quoting = PromptRequest(
        phase="synthesis", step_id=None, messages=(Message(role="user", content="tokens(o200k): 5"),)
    )
    assert mask_token_count(render_prompt(REQUEST, tokens=812)) == render_prompt(REQUEST, tokens=None)
    assert mask_token_count(render_prompt(quoting, tokens=9)).endswith("## user\ntokens(o200k): 5\n")


def test_without_the_cache_a_count_difference_is_ignored_but_a_wording_one_is_not(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # empty: no o200k file
    extension = PromptSnapshotExtension()
    received = extension.serialize(REQUEST)

    assert received == render_prompt(REQUEST, tokens=None)
    assert extension.matches(serialized_data=received, snapshot_data=RENDERED)
    assert not extension.matches(serialized_data=received, snapshot_data=RENDERED.replace("Peru", "Chile"))
    assert not any("812" in line for line in extension.diff_lines(received, RENDERED))


def test_with_the_cache_a_changed_count_is_a_mismatch() -> None:
    require_tiktoken()
    extension = PromptSnapshotExtension()
    assert not extension.matches(
        serialized_data=render_prompt(REQUEST, tokens=813), snapshot_data=render_prompt(REQUEST, tokens=812)
    )


def test_count_is_the_o200k_sum_over_message_contents() -> None:
    require_tiktoken()
    request = PromptRequest(
        phase="planning",
        step_id=None,
        messages=(Message(role="system", content="hello world"), Message(role="user", content="hello world")),
        response_schema={"type": "string"},  # the schema is not a message: not counted
    )
    assert count_o200k_tokens(request) == 4
    assert str(PromptSnapshotExtension().serialize(request)).startswith(
        "# phase: planning · step: - · tools: - · tokens(o200k): 4\n"
    )


def test_header_shows_a_count_exactly_when_the_cache_is_available(tiktoken_available: bool) -> None:
    header = str(PromptSnapshotExtension().serialize(REQUEST)).partition("\n")[0]
    assert header.endswith("tokens(o200k): ?") is not tiktoken_available


def test_serializing_anything_but_a_prompt_request_says_which_fixture_to_use() -> None:
    with pytest.raises(TypeError, match=r"`PromptRequest`.*'dict'.*plain `snapshot`"):
        PromptSnapshotExtension().serialize({"role": "user"})


def test_carriage_returns_survive_a_write_and_read(tmp_path: Path) -> None:
    location = str(tmp_path / "prompt.txt")
    collection = SnapshotCollection(location=location)
    collection.add(Snapshot(name="prompt", data="line\r\nother\rend\n"))
    PromptSnapshotExtension.write_snapshot_collection(snapshot_collection=collection)
    read = PromptSnapshotExtension().read_snapshot_data_from_location(
        snapshot_location=location, snapshot_name="prompt", session_id="s"
    )
    assert read == "line\r\nother\rend\n"


def test_prompt_snapshot_file(prompt_snapshot: SnapshotAssertion) -> None:
    request = PromptRequest(
        phase="execution",
        step_id="step_1",
        messages=(
            Message(role="system", content="You run one step of a plan. Use a tool when it helps."),
            Message(role="user", content="Step step_1: find the population of Lima.\nReply in one line."),
        ),
        tools=("webSearch",),
    )
    assert request == prompt_snapshot


# --- the network guard -----------------------------------------------------------------------------


def _tcp_connect() -> None:
    with _tcp_socket() as sock:
        sock.connect(("192.0.2.1", 9))


def _tcp_connect_ex() -> None:
    with _tcp_socket() as sock:
        sock.connect_ex(("192.0.2.1", 9))


def _tcp_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(1)  # bounds a broken guard; a working one answers before any syscall
    return sock


# TEST-NET-1 and IPv6 documentation addresses: never routed, so a guard that let them through would
# show up as a timeout or OSError rather than NetworkAccessDenied.
_OFF_MACHINE: dict[str, Callable[[], object]] = {
    "connect": _tcp_connect,
    "connect_ex": _tcp_connect_ex,
    "create_connection": lambda: socket.create_connection(("192.0.2.1", 9), timeout=1),
    "create_connection_v6": lambda: socket.create_connection(("2001:db8::1", 9), timeout=1),
    "dns_lookup": lambda: socket.getaddrinfo("api.openai.com", 443),
}


@pytest.mark.parametrize("attempt", _OFF_MACHINE.values(), ids=_OFF_MACHINE.keys())
def test_guard_refuses_off_machine_addresses(attempt: Callable[[], object]) -> None:
    with pytest.raises(NetworkAccessDenied, match=r"must not reach the network: .*:\d+ .*PES_AGENT_LIVE=1"):
        attempt()


_ASYNC_OFF_MACHINE: dict[str, Callable[[], Awaitable[object]]] = {
    "ip": lambda: asyncio.open_connection("192.0.2.1", 9),
    "hostname": lambda: asyncio.open_connection("api.openai.com", 443),
}


@pytest.mark.parametrize("attempt", _ASYNC_OFF_MACHINE.values(), ids=_ASYNC_OFF_MACHINE.keys())
async def test_guard_refuses_off_machine_addresses_from_asyncio(
    attempt: Callable[[], Awaitable[object]],
) -> None:
    with pytest.raises(NetworkAccessDenied, match="192.0.2.1:9|api.openai.com:443"):
        await asyncio.wait_for(attempt(), timeout=5)


async def test_guard_allows_a_loopback_server_the_test_started() -> None:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(await reader.readline())
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"ping\n")
        assert await reader.readline() == b"ping\n"
        writer.close()
        await writer.wait_closed()


def test_guard_lets_localhost_resolve() -> None:
    assert socket.getaddrinfo("localhost", 80, type=socket.SOCK_STREAM)


# --- whole runs (a child pytest using copies of this conftest) -------------------------------------


@pytest.fixture
def child(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A project with this suite's conftest, in its own directory, so its snapshots/ is its own."""
    (pytester.path / "tests").mkdir()
    for name in ("conftest.py", "snapshot_ext.py"):
        shutil.copy(TESTS_DIR / name, pytester.path / "tests" / name)
    pytester.makeini("[pytest]\ntestpaths = tests\nasyncio_default_fixture_loop_scope = function\n")
    monkeypatch.setenv("PYTHONPATH", str(TESTS_DIR.parent))  # pes_agent from this checkout
    for variable in ("PES_AGENT_LIVE", "PES_AGENT_SLOW", "PES_AGENT_LOCAL_MODEL", "PES_AGENT_BROWSER"):
        monkeypatch.delenv(variable, raising=False)
    return pytester


def test_real_model_and_browser_tests_run_only_when_asked(
    child: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    (child.path / "tests" / "test_marked.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.local_model\ndef test_model():\n    pass\n\n"
        "@pytest.mark.browser\ndef test_page():\n    pass\n"
    )
    left_out = child.runpytest_subprocess("-rs")
    left_out.assert_outcomes(skipped=2)
    left_out.stdout.fnmatch_lines(["*set PES_AGENT_LOCAL_MODEL=1*", "*set PES_AGENT_BROWSER=1*"])
    monkeypatch.setenv("PES_AGENT_LOCAL_MODEL", "1")
    monkeypatch.setenv("PES_AGENT_BROWSER", "1")
    child.runpytest_subprocess().assert_outcomes(passed=2)


def test_a_run_that_collects_no_tests_fails(child: pytest.Pytester) -> None:
    result = child.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*no tests were collected*"])


_LIVE_TEST = """
import socket

import pytest


@pytest.mark.live
def test_live_may_leave_the_machine():
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.connect(("192.0.2.1", 9))  # a UDP connect sends nothing; only the guard would object
    except OSError:
        pass  # no route in a sandbox: the guard stayed out of the way, which is what is tested
    finally:
        sock.close()
"""


def test_live_tests_skip_by_default_and_run_unguarded_when_enabled(
    child: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    (child.path / "tests" / "test_live.py").write_text(_LIVE_TEST)

    skipped = child.runpytest_subprocess("-rs")
    skipped.assert_outcomes(skipped=1)
    skipped.stdout.fnmatch_lines(["*PES_AGENT_LIVE=1*"])

    monkeypatch.setenv("PES_AGENT_LIVE", "1")
    child.runpytest_subprocess().assert_outcomes(passed=1)


_PROMPT_TESTS = """
import pytest

from pes_agent.llm.types import Message, PromptRequest

REQUEST = PromptRequest(phase="planning", step_id=None, messages=(Message(role="user", content="Plan."),))


def test_plan(prompt_snapshot):
    assert REQUEST == prompt_snapshot(name="planning")


@pytest.mark.slow
def test_slow(prompt_snapshot):
    assert REQUEST == prompt_snapshot
"""


def test_snapshots_live_in_top_level_folder_and_orphans_fail_the_run(
    child: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    (child.path / "tests" / "test_prompts.py").write_text(_PROMPT_TESTS)
    folder = child.path / "snapshots" / "test_prompts"

    monkeypatch.setenv("PES_AGENT_SLOW", "1")
    child.runpytest_subprocess("--snapshot-update").assert_outcomes(passed=2)
    assert sorted(p.name for p in folder.iterdir()) == ["test_plan[planning].txt", "test_slow.txt"]
    assert (folder / "test_slow.txt").read_text(encoding="utf-8").endswith("## user\nPlan.\n")
    assert not (child.path / "tests" / "__snapshots__").exists()

    monkeypatch.delenv("PES_AGENT_SLOW")
    kept = child.runpytest_subprocess()  # a skipped test's snapshot is not "unused"
    kept.assert_outcomes(passed=1, skipped=1)
    assert kept.ret == pytest.ExitCode.OK

    (folder / "test_removed.txt").write_text("# left behind by a deleted test\n", encoding="utf-8")
    orphaned = child.runpytest_subprocess()
    assert orphaned.ret == pytest.ExitCode.TESTS_FAILED
    orphaned.stdout.fnmatch_lines(["*1 snapshot unused*"])
