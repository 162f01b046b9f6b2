"""Embeddings from an OpenAI-compatible ``/v1/embeddings``: the vectors tool retrieval ranks by meaning.

``OpenAIEmbeddings`` is the ``openai`` adapter pointed at another route: the same provider settings
(``base_url``, key variable, ``max_retries``, ``timeout_s``), the same client per event loop and the
same single retry layer (``sdk_adapter``): 429, 5xx, timeouts and connection failures are retried,
any other refusal (401, 404 for an unknown model, 400) fails at once. The body is read raw and
checked here, so a server that answers with something else says so instead of failing later.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from typing import Any

from pes_agent.config import ProviderConfig
from pes_agent.config.retrieval import EmbeddingsConfig
from pes_agent.errors import ProviderError
from pes_agent.llm.openai import OpenAIProvider

__all__ = ["OpenAIEmbeddings"]


class OpenAIEmbeddings(OpenAIProvider):
    """The embedding model ``embeddings.model`` at provider ``name``'s endpoint."""

    label = "embeddings"
    """How ``TOOLS_OFFERED`` names the ranking: ``bm25+embeddings``."""

    def __init__(
        self, name: str, config: ProviderConfig, embeddings: EmbeddingsConfig, **kwargs: Any
    ) -> None:
        super().__init__(name, config, **kwargs)
        self.embeddings = embeddings
        self.requests = 0
        """Requests sent (each batch, each retry): what a cache saves shows here."""

    def _path(self, model: str, *, stream: bool) -> str:
        return "/embeddings"

    def where(self) -> str:
        """The request as errors show it: provider, route and model, never the key."""
        return self._where(self.embeddings.model)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order, ``batch_size`` texts per request."""
        model = self.embeddings.model
        timeout = self.embeddings.timeout_s or self.config.timeout_s
        vectors: list[list[float]] = []
        size = self.embeddings.batch_size
        for start in range(0, len(texts), size):
            batch = list(texts[start : start + size])
            send = partial(self._send_batch, batch, model, timeout)
            vectors += await self._with_retries(send, model=model, timeout=timeout)
        return vectors

    async def _send_batch(self, texts: list[str], model: str, timeout: float) -> list[list[float]]:
        self.requests += 1
        raw = await self._client().embeddings.with_raw_response.create(
            model=model, input=texts, encoding_format="float", timeout=timeout
        )
        vectors = _vectors(raw.content, len(texts))
        if vectors is None:
            start = raw.content[:120].decode("utf-8", "replace")
            raise self._unusable(
                model,
                f"holds no {len(texts)} embeddings (`data[].embedding`), starting {start!r}",
                status=raw.status_code,
            )
        return vectors


def _vectors(content: bytes, count: int) -> list[list[float]] | None:
    """``data[].embedding`` in ``index`` order, or None when the body is not that (or vectors differ
    in length: one model gives one dimension)."""
    try:
        body = json.loads(content)
        items = sorted(body["data"], key=lambda item: int(item.get("index", 0)))
        vectors = [_pooled(item["embedding"]) for item in items]
    except (ValueError, KeyError, TypeError, AttributeError, ZeroDivisionError):
        return None
    if len(vectors) != count or len({len(v) for v in vectors}) > 1 or not vectors[0]:
        return None
    return vectors


def _pooled(embedding: list[Any]) -> list[float]:
    """One vector. llama-cpp-python's server answers a model without a pooling layer (a chat model)
    with one vector per token; their mean is what a mean-pooling server would have sent."""
    if embedding and isinstance(embedding[0], list):
        return [sum(column) / len(embedding) for column in zip(*embedding, strict=True)]
    return [float(x) for x in embedding]


def embeddings_error(exc: ProviderError, client: OpenAIEmbeddings) -> str:
    """What to tell a user whose endpoint refused the embeddings request for good."""
    name = client.name
    if exc.status in (401, 403):
        fix = f"check the key of provider {name!r} (`providers.{name}.api_key` or its key variable)"
    elif exc.status == 404:
        fix = (
            f"check `retrieval.embeddings.model` ({client.embeddings.model!r}): the endpoint does not know "
            "it, "
            f"or `providers.{name}.base_url` serves no `/v1/embeddings`"
        )
    else:
        fix = (
            f"check `retrieval.embeddings.model` ({client.embeddings.model!r}) and that the server serves "
            "embeddings (llama.cpp's server needs `--embedding`)"
        )
    said = f" ({exc.server_message})" if exc.server_message else ""
    unusable = exc.status is None or exc.status < 400
    status = "an answer that holds no embeddings" if unusable else f"HTTP {exc.status}"
    return (
        f"{client.where()} failed with {status}{said}; {fix}, or remove `retrieval.embeddings` to find "
        "tools by their words alone"
    )
