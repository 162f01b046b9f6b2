"""An API key in a config never reaches what users and operators see or keep.

The key is written literally in one config and read from ``${ENV}`` in another; every surface a run
produces is then searched for it: config reprs, config errors, events, stored thread state, history,
the final response, the raw SQLite file, log records, provider errors and the CLI's output.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import socket
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from pes_agent import (
    AgentFinalResponse,
    ArtInstance,
    ConfigError,
    ProviderError,
    create_art_instance,
    load_config,
)
from pes_agent.cli import main
from pes_agent.config import ProviderConfig
from pes_agent.llm.openai import OpenAIProvider
from pes_agent.llm.types import CallOptions, Message, PromptRequest
from pes_agent.testing import ScriptedProvider
from pes_agent.testing.fake_openai import FakeError, FakeOpenAIServer
from tests.native_servers import NATIVE, fake_for, model_requests, needs_sdk

LITERAL_KEY = "sk-test-SECRET-123"
ENV_KEY = "sk-test-ENVSECRET-456"
ENV_VAR = "PES_TEST_SECRET_KEY"
KEYS = (LITERAL_KEY, ENV_KEY)

REPO = Path(__file__).resolve().parents[1]
REPLAY = json.loads((REPO / "pes_agent" / "demo" / "jwst_replay.json").read_text(encoding="utf-8"))
S1_QUERY: str = REPLAY["query"]
S1_REPLIES: list[str] = [r["text"] for r in REPLAY["replies"]]


def leaks(*texts: str) -> list[str]:
    """The keys found in any of ``texts`` (empty when nothing leaked)."""
    return [key for key in KEYS if any(key in text for text in texts)]


def everything_about(error: BaseException) -> str:
    """All a user could see of an error: text, attributes, traceback, and every linked exception."""
    seen: list[str] = []
    current: BaseException | None = error
    while current is not None and len(seen) < 20:
        seen += [str(current), repr(current), repr(vars(current)), *current.args.__repr__().splitlines()]
        current = current.__cause__ or current.__context__
    return "\n".join([*seen, *traceback.format_exception(error)])


@pytest.fixture(autouse=True)
def _env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, ENV_KEY)
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture(params=["literal", "env"])
def key_text(request: pytest.FixtureRequest) -> str:
    """How the key is written in the config: the key itself, or a reference to the environment."""
    return LITERAL_KEY if request.param == "literal" else f"${{{ENV_VAR}}}"


@pytest.fixture
def captured_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    with caplog.at_level(logging.DEBUG):
        yield caplog


def log_text(caplog: pytest.LogCaptureFixture) -> str:
    """pes-agent's own records at every level, and anyone's at INFO and above (what apps show).

    Third-party DEBUG traces (httpcore prints raw response headers) are the libraries' business.
    """
    return "\n".join(
        record.getMessage()
        for record in caplog.records
        if record.name.startswith("pes_agent") or record.levelno >= logging.INFO
    )


def key_in_use(key_text: str) -> str:
    return LITERAL_KEY if key_text == LITERAL_KEY else ENV_KEY


def config_dict(key_text: str, tmp_path: Path, **provider: Any) -> dict[str, Any]:
    return {
        "providers": {"main": {"adapter": "openai", "model": "gpt-4o-mini", "api_key": key_text, **provider}},
        "storage": {"type": "sqlite", "path": str(tmp_path / "state.db")},
        "threadDefaults": {
            "providerConfig": {"providerName": "main", "adapterOptions": {"apiKey": key_text}}
        },
        "tools": ["pes_agent.demo.tools:DEMO_TOOLS"],
    }


def write_config(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "pes.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


async def surfaces(art: ArtInstance, response: AgentFinalResponse, db: Path) -> dict[str, str]:
    """Everything a run left behind, as text, by where it came from."""
    tid = response.thread_id
    events = await art.get_observations(tid)
    state, _ = await art.store.load(tid)
    history = await art.store.messages(tid)
    thread_config = await art.get_thread_config(tid)
    found = {
        "events": json.dumps([e.to_dict() for e in events], default=str),
        "event reprs": repr(events),
        "thread state": state.model_dump_json() if state else "",
        "thread state repr": repr(state),
        "thread config": repr(thread_config),
        "history": json.dumps([m.model_dump(mode="json") for m in history], default=str),
        "response": json.dumps(response.to_dict(), default=str),
        "response repr": repr(response),
        "instance": repr(art) + repr(art.config) + art.config.model_dump_json(),
    }
    await art.aclose()
    found["sqlite file"] = "".join(
        p.read_bytes().decode("latin-1") for p in db.parent.iterdir() if p.name.startswith(db.name)
    )
    return found


def assert_no_leak(found: dict[str, str]) -> None:
    leaked = {where: leaks(text) for where, text in found.items() if leaks(text)}
    assert leaked == {}, f"the API key leaked into: {sorted(leaked)}"


# --- config ---------------------------------------------------------------------------------------


def test_config_file_reprs_show_no_key(tmp_path: Path, key_text: str) -> None:
    config = load_config(write_config(tmp_path, config_dict(key_text, tmp_path)))
    secret = config.providers["main"].api_key
    assert secret is not None and secret.get_secret_value() in KEYS, "the key must still be usable"
    assert (
        leaks(repr(config), str(config), config.model_dump_json(), repr(config.model_dump()), repr(secret))
        == []
    )


def test_config_errors_show_no_key(tmp_path: Path, key_text: str) -> None:
    data = config_dict(key_text, tmp_path, temperature="hot")
    data["execution"] = {"max_iteratons": 3}
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(tmp_path, data))
    assert "temperature" in str(caught.value) or "max_iteratons" in str(caught.value)
    assert leaks(everything_about(caught.value)) == []


# --- a whole run with the configured provider overridden ------------------------------------------


async def test_a_scripted_run_with_a_keyed_config_leaks_nothing(
    tmp_path: Path, key_text: str, captured_logs: pytest.LogCaptureFixture
) -> None:
    provider = ScriptedProvider(S1_REPLIES, name="main")
    art = await create_art_instance(
        write_config(tmp_path, config_dict(key_text, tmp_path)), providers={"main": provider}
    )
    await art.set_thread_config(
        "t-secret",
        {"providerConfig": {"providerName": "main", "adapterOptions": {"apiKey": key_text, "region": "eu"}}},
    )
    response = await art.process(S1_QUERY, thread_id="t-secret")

    assert response.status == "success", response.error
    provider.assert_complete()
    assert leaks(*(call.text for call in provider.calls)) == [], "the key was sent to the model"
    found = await surfaces(art, response, tmp_path / "state.db")
    assert "region" in found["thread state"], "the thread config was not stored, so not checked"
    found["logs"] = log_text(captured_logs)
    assert_no_leak(found)


# --- a whole run through the OpenAI adapter against a loopback server -----------------------------


async def test_a_run_through_the_openai_adapter_sends_the_key_and_keeps_it_out(
    tmp_path: Path, key_text: str, captured_logs: pytest.LogCaptureFixture
) -> None:
    async with FakeOpenAIServer(S1_REPLIES) as server:
        data = config_dict(key_text, tmp_path, base_url=server.base_url, max_retries=0)
        art = await create_art_instance(write_config(tmp_path, data))
        response = await art.process(S1_QUERY)
        sent = {r.headers.get("authorization") for r in server.requests}
    assert response.status == "success", response.error
    assert sent == {f"Bearer {key_in_use(key_text)}"}, "the key was not used"
    found = await surfaces(art, response, tmp_path / "state.db")
    found["logs"] = log_text(captured_logs)
    assert_no_leak(found)


async def test_a_server_echoing_the_key_in_its_error_leaks_nothing(
    tmp_path: Path, key_text: str, captured_logs: pytest.LogCaptureFixture
) -> None:
    key = key_in_use(key_text)
    echo = FakeError(
        status=401,
        headers={"x-echo": f"Bearer {key}", "x-api-key": key, "x-request-id": "req-1"},
        body={"error": {"message": f"Incorrect API key provided: {key}"}},
    )
    async with FakeOpenAIServer([echo]) as server:
        data = config_dict(key_text, tmp_path, base_url=server.base_url, max_retries=0)
        art = await create_art_instance(write_config(tmp_path, data))
        response = await art.process(S1_QUERY)
    assert response.status == "error"
    assert response.error is not None and "401" in response.error.message
    found = await surfaces(art, response, tmp_path / "state.db")
    found["logs"] = log_text(captured_logs)
    assert_no_leak(found)


# --- the OpenAI adapter's own errors --------------------------------------------------------------


def closed_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens there any more: connecting is refused


async def connection_failure() -> ProviderError:
    config = ProviderConfig(
        base_url=f"http://127.0.0.1:{closed_loopback_port()}/v1",
        model="m",
        api_key=SecretStr(LITERAL_KEY),
        max_retries=0,
        timeout_s=5,
    )
    request = PromptRequest(phase="planning", step_id=None, messages=(Message(role="user", content="hi"),))
    async with OpenAIProvider("main", config) as provider:
        assert leaks(repr(provider)) == []
        with pytest.raises(ProviderError) as caught:
            await provider.complete(request, CallOptions())
    return caught.value


async def test_a_connection_failure_raises_a_provider_error_without_the_key() -> None:
    error = await connection_failure()
    assert "connect" in str(error) and "127.0.0.1" in str(error)
    assert error.retryable
    assert leaks(everything_about(error), repr(error.headers), str(error.headers)) == []


async def test_a_provider_error_keeps_no_sdk_request_reachable() -> None:
    """Error reporters that walk `__context__` (ignoring `__suppress_context__`) must find no key."""
    error = await connection_failure()
    linked = error.__context__
    request = getattr(linked, "request", None)
    assert request is None or leaks(str(dict(request.headers))) == []


# --- the CLI --------------------------------------------------------------------------------------


async def test_cli_json_output_shows_no_key(tmp_path: Path, key_text: str) -> None:
    async with FakeOpenAIServer(S1_REPLIES) as server:
        data = config_dict(key_text, tmp_path, base_url=server.base_url, max_retries=0)
        path = write_config(tmp_path, data)
        out, err = io.StringIO(), io.StringIO()
        # The CLI runs its own event loop: give it a thread, while this loop serves the fake endpoint.
        code = await asyncio.to_thread(
            main, ["run", "--config", str(path), "--json", S1_QUERY], out=out, err=err
        )
        assert server.requests, "the CLI did not reach the configured endpoint"
    assert code == 0, err.getvalue()
    assert json.loads(out.getvalue())["status"] == "success"
    assert leaks(out.getvalue(), err.getvalue()) == []


def test_cli_validate_shows_no_key(tmp_path: Path, key_text: str) -> None:
    path = write_config(tmp_path, config_dict(key_text, tmp_path))
    out, err = io.StringIO(), io.StringIO()
    assert main(["validate", str(path)], out=out, err=err) == 0, err.getvalue()
    assert leaks(out.getvalue(), err.getvalue()) == []


# --- the native adapters (official SDKs) against their loopback fakes -----------------------------


def native_config(adapter: str, key_text: str, tmp_path: Path, base_url: str) -> dict[str, Any]:
    data = config_dict(key_text, tmp_path, base_url=base_url, max_retries=0)
    data["providers"]["main"].update(adapter=adapter, model="fake-model")
    return data


@pytest.mark.parametrize("adapter", NATIVE)
async def test_a_run_through_a_native_adapter_sends_the_key_and_keeps_it_out(
    tmp_path: Path, key_text: str, adapter: str, captured_logs: pytest.LogCaptureFixture
) -> None:
    needs_sdk(adapter)
    async with fake_for(adapter, list(S1_REPLIES)) as server:
        data = native_config(adapter, key_text, tmp_path, server.base_url)
        art = await create_art_instance(write_config(tmp_path, data))
        response = await art.process(S1_QUERY)
        sent = {" ".join(r.headers.values()).count(key_in_use(key_text)) for r in model_requests(server)}
    assert response.status == "success", response.error
    assert sent == {1}, "the key was not sent (once) with every request"
    found = await surfaces(art, response, tmp_path / "state.db")
    found["logs"] = log_text(captured_logs)
    assert_no_leak(found)


@pytest.mark.parametrize("adapter", NATIVE)
async def test_a_native_server_echoing_the_key_in_its_error_leaks_nothing(
    tmp_path: Path, key_text: str, adapter: str, captured_logs: pytest.LogCaptureFixture
) -> None:
    needs_sdk(adapter)
    key = key_in_use(key_text)
    echo = FakeError(
        status=401,
        headers={"x-echo": f"Bearer {key}", "x-api-key": key, "x-goog-api-key": key, "request-id": "req-1"},
        body={"error": {"message": f"invalid x-api-key: {key}"}},
    )
    async with fake_for(adapter, [echo]) as server:
        data = native_config(adapter, key_text, tmp_path, server.base_url)
        art = await create_art_instance(write_config(tmp_path, data))
        response = await art.process(S1_QUERY)
    assert response.status == "error"
    assert response.error is not None and "401" in response.error.message
    found = await surfaces(art, response, tmp_path / "state.db")
    found["logs"] = log_text(captured_logs)
    assert_no_leak(found)
