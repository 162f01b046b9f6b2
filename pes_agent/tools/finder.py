"""One instance's tool index, kept in step with its registry, ranked by words and by meaning.

The BM25 index is built again when the registry's version moves (a tool registered or removed, an
MCP server's list changed), on the next search, not on the change: a burst of changes costs one
build. The catalogue's vectors are computed then too (only the tools whose text is new,
``semantic.ToolVectors``): by default with the built-in meaning table (``meaning``, in process);
with an endpoint under ``retrieval.embeddings``, fetched, and each planning call embeds its query
(and each ``findTools`` ask its phrases) in one request.

An endpoint failing does not fail the run when it may pass later (timeouts, 5xx, a connection
refused, after the provider's retries), or when a run's own texts are refused (a query too long
for the model): the run plans with BM25 alone, and says so (a warning once per outage, and the
reason in the ``TOOLS_OFFERED`` event). A refusal for good (a wrong key, an unknown model) is an
``EmbeddingsRefusedError`` naming the setting to fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pes_agent.config import ProviderConfig, RetrievalConfig
from pes_agent.errors import EmbeddingsRefusedError, ProviderError
from pes_agent.llm.embeddings import OpenAIEmbeddings, embeddings_error
from pes_agent.tools import index as lexical_index
from pes_agent.tools.index import EXTRA_HINT, ToolIndex, logger
from pes_agent.tools.meaning import BuiltinEmbedder
from pes_agent.tools.registry import ToolRegistry
from pes_agent.tools.semantic import Searcher, SemanticIndex, ToolVectors

__all__ = ["INPUT_REFUSED", "ToolFinder", "finder_for"]

INPUT_REFUSED = (400, 413, 422)
"""Statuses that refuse a request's input. For a run's texts, after the catalogue was embedded with
the same key and model, that is the text (a query longer than the model's context), not the config:
the run plans with BM25 and says why."""


def finder_for(
    registry: ToolRegistry, retrieval: RetrievalConfig, providers: Mapping[str, ProviderConfig]
) -> ToolFinder:
    """The finder of an instance: the built-in table by default, an embeddings client when
    ``retrieval.embeddings`` names a provider (checked at config load to exist and speak the OpenAI
    API), words alone when it is ``off``."""
    if not retrieval.enabled or retrieval.embeddings == "off":
        return ToolFinder(registry)
    chosen = retrieval.endpoint
    if chosen is None:
        return ToolFinder(registry, BuiltinEmbedder())
    return ToolFinder(registry, OpenAIEmbeddings(chosen.provider, providers[chosen.provider], chosen))


class ToolFinder:
    """The index of one registry; ``None`` from ``index`` when ``bm25s`` is not installed."""

    def __init__(
        self, registry: ToolRegistry, embedder: OpenAIEmbeddings | BuiltinEmbedder | None = None
    ) -> None:
        self._registry = registry
        self._index: ToolIndex | None = None
        self._version = -1
        self._available: bool | None = None
        self.warned = False
        """Whether the missing-extra warning was logged (once per instance)."""
        self.embedder = embedder
        self._vectors = ToolVectors(embedder) if embedder is not None else None
        self._semantic: SemanticIndex | None = None
        self._semantic_version = -1
        self._outage = False
        """Embeddings failed and that was logged; reset when they work again."""

    def index(self) -> ToolIndex | None:
        if self._available is None:  # looked up once: it reads the file system
            self._available = lexical_index.index_available()
        if not self._available:
            return None
        if self._index is None or self._version != self._registry.version:
            try:
                self._index = lexical_index.ToolIndex.of(self._registry)
            except ImportError as exc:  # installed but broken (a numpy built for another Python)
                logger.warning("tool retrieval is installed but cannot be imported (%s): %s", exc, EXTRA_HINT)
                self._available = False
                return None
            self._version = self._registry.version
        return self._index

    def preview(self, texts: Sequence[str]) -> Searcher | None:
        """What ``planning_prompt`` (a synchronous preview) shows: as a run ranks with the built-in
        table, BM25 alone with an endpoint (a preview sends no request)."""
        index = self.index()
        if index is None:
            return None
        if not isinstance(self.embedder, BuiltinEmbedder) or self._vectors is None:
            return Searcher(index=index)
        semantic = self._semantic
        if semantic is None or self._semantic_version != self._registry.version:
            version, specs = self._registry.version, self._registry.specs()  # the version these specs have
            semantic = self._vectors.index_now(specs, self.embedder.vectors)
            self._semantic, self._semantic_version = semantic, version
        wanted = list(dict.fromkeys(texts))
        return Searcher(
            index=index,
            semantic=semantic,
            vectors=dict(zip(wanted, self.embedder.vectors(wanted), strict=True)),
            meaning=self.embedder.label,
        )

    async def searcher(self, texts: Sequence[str]) -> Searcher | None:
        """A searcher for ``texts`` (the query and its parts, or ``findTools`` phrases): fused with
        their embeddings when configured and reachable, else BM25 with a ``note`` saying why."""
        index = self.index()
        if index is None:
            return None
        if self._vectors is None or self.embedder is None:
            return Searcher(index=index)
        try:
            semantic = await self._semantic_index()
        except ProviderError as exc:
            return Searcher(index=index, note=self._fell_back(self._passing(exc)))
        try:
            vectors = await self.embedder.embed(list(dict.fromkeys(texts)))
        except ProviderError as exc:
            if exc.status not in INPUT_REFUSED:  # refused input is this text, not the config
                self._passing(exc)
            return Searcher(index=index, note=self._fell_back(exc))
        if any(len(v) != semantic.dimensions for v in vectors):
            return Searcher(index=index, note=self._mismatch(semantic.dimensions, vectors))
        self._outage = False
        return Searcher(
            index=index,
            semantic=semantic,
            vectors=dict(zip(dict.fromkeys(texts), vectors, strict=True)),
            meaning=self.embedder.label,
        )

    def _mismatch(self, dimensions: int, vectors: Sequence[Sequence[float]]) -> str:
        """Vectors of another length than the catalogue's: the model behind the endpoint changed.
        This run plans by words; the catalogue is embedded again on the next build."""
        assert self._vectors is not None
        self._semantic = None
        self._vectors.forget()
        got = sorted({len(v) for v in vectors} - {dimensions})
        reason = (
            f"the embeddings endpoint answered {got[0]}-dimensional vectors for the query but "
            f"{dimensions}-dimensional ones for the tools (did the model behind "
            "`retrieval.embeddings.model` change?), so tools were ranked by their words alone (BM25); "
            "the tools are embedded again for the next run"
        )
        logger.warning("%s", reason)
        return reason

    async def _semantic_index(self) -> SemanticIndex:
        assert self._vectors is not None
        if self._semantic is None or self._semantic_version != self._registry.version:
            version = self._registry.version
            self._semantic = await self._vectors.index(self._registry.specs())
            self._semantic_version = version
        return self._semantic

    def _passing(self, exc: ProviderError) -> ProviderError:
        """``exc`` when it may pass (retried already); else the config is wrong:
        ``EmbeddingsRefusedError``."""
        if not exc.retryable:
            assert isinstance(self.embedder, OpenAIEmbeddings)  # the built-in table sends no request
            raise EmbeddingsRefusedError(embeddings_error(exc, self.embedder)) from None
        return exc

    def _fell_back(self, exc: ProviderError) -> str:
        reason = f"embeddings failed, so tools were ranked by their words alone (BM25): {exc}"
        if not self._outage:
            self._outage = True
            logger.warning("%s; runs try the embeddings again and plan with BM25 until they answer", reason)
        return reason

    async def aclose(self) -> None:
        """Close the embeddings client's connections on this loop."""
        if self.embedder is not None:
            await self.embedder.aclose()

    def warn_once(self, total: int) -> None:
        if not self.warned:
            self.warned = True
            logger.warning(
                "%d tools are enabled, but tool retrieval is not installed, so every planning prompt "
                "lists all of them; %s (or set `retrieval.enabled: false` to silence this)",
                total,
                EXTRA_HINT,
            )
