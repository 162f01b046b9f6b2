"""The native adapters with their loopback fakes, for tests that hold for every adapter alike."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from pes_agent.config import ProviderConfig
from pes_agent.llm.anthropic import AnthropicProvider
from pes_agent.llm.sdk_adapter import SdkAdapter
from pes_agent.testing._http import RecordedRequest
from pes_agent.testing._server import FakeServer
from pes_agent.testing.fake_anthropic import FakeAnthropicServer

API_KEY = "sk-native-0123456789"
NATIVE = ["anthropic"]
"""Adapters on an official SDK of their own (``sdk_adapter``)."""


class Sleeps(list[float]):
    """The injected sleep: records what the retry policy asked for and returns at once."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def fake_for(adapter: str, replies: list[Any]) -> FakeServer:
    return {"anthropic": FakeAnthropicServer}[adapter](replies)


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
    return {"anthropic": AnthropicProvider}[adapter]


@asynccontextmanager
async def serving(adapter: str, replies: list[Any], sleeps: Sleeps, **config: Any) -> AsyncIterator[Served]:
    async with fake_for(adapter, replies) as server:
        base = server.base_url
        settings = {"adapter": adapter, "model": "fake-model", "api_key": API_KEY, "max_retries": 2, **config}
        cfg = ProviderConfig.model_validate({"base_url": base, **settings})
        provider = _provider_class(adapter)("native", cfg, sleep=sleeps)
        try:
            yield Served(server=server, provider=provider)
        finally:
            await provider.aclose()
