"""The native adapters with their loopback fakes, for tests that hold for every adapter alike."""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from pes_agent.config import ProviderConfig
from pes_agent.llm.anthropic import AnthropicProvider
from pes_agent.llm.gemini import GeminiProvider
from pes_agent.llm.sdk_adapter import SdkAdapter
from pes_agent.testing._http import RecordedRequest
from pes_agent.testing._server import FakeServer
from pes_agent.testing.fake_anthropic import FakeAnthropicServer
from pes_agent.testing.fake_gemini import FakeGeminiServer

API_KEY = "sk-native-0123456789"
NATIVE = ["anthropic", "gemini"]
"""Adapters on an official SDK of their own (``sdk_adapter``)."""


class Sleeps(list[float]):
    """The injected sleep: records what the retry policy asked for and returns at once."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


SDK_MODULES = {"anthropic": "anthropic", "gemini": "google.genai"}


def needs_sdk(adapter: str) -> None:
    """Skip, naming the extra, when the adapter's SDK is not installed (``pip install -e '.[test]'``)."""
    module = SDK_MODULES.get(adapter)
    if module is None:
        return
    try:
        found = importlib.util.find_spec(module) is not None
    except ImportError:  # `google.genai` without `google` raises instead of answering None
        found = False
    if not found:
        pytest.skip(f"the `{adapter}` extra is not installed (pip install -e '.[{adapter}]')")


def fake_for(adapter: str, replies: list[Any]) -> FakeServer:
    servers: dict[str, type[FakeServer]] = {"anthropic": FakeAnthropicServer, "gemini": FakeGeminiServer}
    return servers[adapter](replies)


def model_requests(server: FakeServer) -> list[RecordedRequest]:
    """The requests that asked the model for a reply (not listings or probes of other routes)."""
    return [r for r in server.requests if r.method == "POST"]


@dataclass
class Served:
    server: FakeServer
    provider: SdkAdapter[Any]

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r.json for r in model_requests(self.server)]


def _provider_class(adapter: str) -> type[SdkAdapter[Any]]:
    classes: dict[str, type[SdkAdapter[Any]]] = {"anthropic": AnthropicProvider, "gemini": GeminiProvider}
    return classes[adapter]


@asynccontextmanager
async def serving(adapter: str, replies: list[Any], sleeps: Sleeps, **config: Any) -> AsyncIterator[Served]:
    needs_sdk(adapter)
    async with fake_for(adapter, replies) as server:
        base = server.base_url
        settings = {"adapter": adapter, "model": "fake-model", "api_key": API_KEY, "max_retries": 2, **config}
        cfg = ProviderConfig.model_validate({"base_url": base, **settings})
        provider = _provider_class(adapter)("native", cfg, sleep=sleeps)
        try:
            yield Served(server=server, provider=provider)
        finally:
            await provider.aclose()
