"""What every native adapter (official SDK: anthropic, gemini) does alike, against its loopback fake:
the one retry policy, the one error taxonomy, keys from the environment, the SDK imported lazily."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pes_agent.config import ProviderConfig
from pes_agent.errors import ConfigError, ProviderError
from pes_agent.llm.failures import failure_of
from pes_agent.llm.providers import build_provider
from pes_agent.llm.retry import is_retryable
from pes_agent.llm.types import CallOptions, Message, PromptRequest
from pes_agent.testing.fake_actions import FakeDisconnect, FakeError, FakeHang, FakeMalformed, FakeReply
from tests.native_servers import NATIVE, Sleeps, model_requests, needs_sdk, serving

REQUEST = PromptRequest(
    phase="planning",
    step_id=None,
    messages=(Message(role="system", content="You plan."), Message(role="user", content="hello world")),
)

pytestmark = pytest.mark.parametrize("adapter", NATIVE)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


async def test_429_waits_as_long_as_retry_after_says_then_succeeds(adapter: str, sleeps: Sleeps) -> None:
    replies = [FakeError(status=429, headers={"Retry-After": "2"}), FakeReply(text="done")]
    async with serving(adapter, replies, sleeps) as served:
        out = await served.provider.complete(REQUEST, CallOptions())
    assert (out.text, sleeps, len(served.bodies)) == ("done", [2.0], 2)


async def test_5xx_and_dropped_connections_are_retried_with_backoff(adapter: str, sleeps: Sleeps) -> None:
    async with serving(adapter, [FakeError(status=503), FakeDisconnect(), "recovered"], sleeps) as served:
        out = await served.provider.complete(REQUEST, CallOptions())
    assert out.text == "recovered" and len(served.bodies) == 3
    assert len(sleeps) == 2 and 0.5 <= sleeps[0] <= 0.625 and 1.0 <= sleeps[1] <= 1.25


async def test_persistent_5xx_raises_after_one_plus_max_retries_requests(
    adapter: str, sleeps: Sleeps
) -> None:
    async with serving(adapter, [FakeError(status=500)] * 3, sleeps, max_retries=2) as served:
        with pytest.raises(ProviderError) as info:
            await served.provider.complete(REQUEST, CallOptions())
    err = info.value
    assert (err.status, err.retryable, err.provider) == (500, True, "native")
    assert len(served.bodies) == 3, "SDK retries are off: exactly 1 + max_retries requests"
    assert "HTTP 500" in str(err) and "after 3 attempts" in str(err) and "'fake-model'" in str(err)


async def test_a_refusal_fails_at_once_with_the_servers_words(adapter: str, sleeps: Sleeps) -> None:
    async with serving(adapter, [FakeError(status=400)], sleeps) as served:
        with pytest.raises(ProviderError) as info:
            await served.provider.complete(REQUEST, CallOptions())
    assert (info.value.status, info.value.retryable) == (400, False)
    assert len(served.bodies) == 1 and sleeps == []
    assert "fake error 400" in str(info.value), "the server's own message is passed on"


async def test_a_hanging_server_times_out_is_retried_then_fails(adapter: str, sleeps: Sleeps) -> None:
    async with serving(adapter, [FakeHang(), FakeHang()], sleeps, max_retries=1) as served:
        with pytest.raises(ProviderError) as info:
            await served.provider.complete(REQUEST, CallOptions(timeout_s=0.2))
    assert (info.value.status, info.value.retryable) == (None, True)
    assert "no answer within 0.2s" in str(info.value)
    assert len(served.bodies) == 2 and len(sleeps) == 1


async def test_a_body_that_is_not_the_apis_is_an_error_and_not_retried(adapter: str, sleeps: Sleeps) -> None:
    async with serving(adapter, [FakeMalformed(body='{"unexpected": true}')], sleeps) as served:
        with pytest.raises(ProviderError) as info:
            await served.provider.complete(REQUEST, CallOptions())
    assert info.value.status in (200, None) and not info.value.retryable  # google-genai hides the status
    assert len(served.bodies) == 1 and f"the {adapter} API" in str(info.value)


async def test_the_key_comes_from_the_adapters_variable(
    adapter: str, sleeps: Sleeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    variable = {"anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}[adapter]
    monkeypatch.setenv(variable, "key-from-env-42")
    async with serving(adapter, ["ok"], sleeps, api_key=None) as served:
        await served.provider.complete(REQUEST, CallOptions())
    (request,) = model_requests(served.server)
    assert "key-from-env-42" in " ".join(request.headers.values())
    monkeypatch.delenv(variable)
    async with serving(adapter, [], sleeps, api_key=None) as served:
        with pytest.raises(ProviderError) as info:
            await served.provider.complete(REQUEST, CallOptions())
    assert variable in str(info.value) and served.bodies == []


def test_without_the_sdk_building_the_provider_names_the_extra(
    adapter: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    module = {"anthropic": "anthropic", "gemini": "google.genai"}[adapter]
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a)
    )
    with pytest.raises(ConfigError) as info:
        build_provider("p", ProviderConfig.model_validate({"adapter": adapter, "model": "m"}))
    assert f"pip install 'pes-agent[{adapter}]'" in str(info.value)
    assert info.value.key_path == "providers.p.adapter"


def test_importing_pes_agent_and_the_adapter_imports_no_sdk(adapter: str) -> None:
    needs_sdk(adapter)  # the fakes import nothing, but the adapter module is checked with its SDK present
    code = (
        f"import sys, pes_agent, pes_agent.llm.{adapter}, pes_agent.testing.fake_{adapter}; "
        "print([m for m in ('anthropic', 'google.genai') if m in sys.modules])"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("kind", "status", "retried"), [("overloaded_error", 529, True), ("invalid_request_error", 200, False)]
)
def test_an_error_event_inside_a_stream_counts_as_its_status(
    adapter: str, kind: str, status: int, retried: bool
) -> None:
    """Anthropic sends `event: error` after HTTP 200 (overloaded_error is 529 outside a stream)."""
    if adapter != "anthropic":
        pytest.skip("only the Messages API reports errors inside a stream")
    needs_sdk(adapter)
    import anthropic
    import httpx2

    response = httpx2.Response(200, request=httpx2.Request("POST", "http://127.0.0.1/v1/messages"))
    body = {"type": "error", "error": {"type": kind, "message": "Overloaded"}}
    error = anthropic.APIStatusError("Overloaded", response=response, body=body)
    failure = failure_of(error)
    assert failure is not None and failure.status == status
    assert is_retryable(error) is retried


FIRST_PIECE = {"anthropic": 3, "gemini": 1}
"""Events up to and including the first piece of text: Anthropic's message_start, content_block_start
and first text delta; Gemini's first chunk."""


async def test_a_stream_cut_after_its_first_piece_is_an_error_and_not_retried(
    adapter: str, sleeps: Sleeps
) -> None:
    cut = FakeReply(text="Hello there, general.", chunk_chars=5, cut_after=FIRST_PIECE[adapter])
    pieces: list[tuple[str, str]] = []
    async with serving(adapter, [cut], sleeps) as served:
        with pytest.raises(ProviderError) as info:
            await served.provider.complete(
                REQUEST, CallOptions(), on_token=lambda k, t: pieces.append((k, t))
            )
    assert pieces == [("answer", "Hello")]
    assert len(served.bodies) == 1 and sleeps == []
    assert "not retried" in str(info.value) and "connection was lost mid-reply" in str(info.value)


async def test_a_stream_cut_before_any_piece_is_retried(adapter: str, sleeps: Sleeps) -> None:
    cut = FakeReply(text="lost", cut_after=FIRST_PIECE[adapter] - 1)
    async with serving(adapter, [cut, "whole"], sleeps) as served:
        out = await served.provider.complete(REQUEST, CallOptions(), on_token=lambda k, t: None)
    assert out.text == "whole" and len(served.bodies) == 2 and len(sleeps) == 1
