"""The ``retrieval`` section: finding the tools a query needs before planning.

On by default: an instance with more than ``threshold`` enabled tools shows the planner only the
``k`` that best match the query, described, and the next ``names`` by name only, so the planning
prompt stays under a fixed size at 200 tools or 1,000. Tools are ranked by their words (BM25,
``pes_agent.tools.index``) fused with their meaning: by default the meaning table shipped in the
package (``pes_agent.tools.meaning``), or an OpenAI-compatible ``/v1/embeddings`` of a configured
provider (``embeddings``). The index needs the ``retrieval`` extra; where it is not installed, the
planner sees every tool as before, and a warning (logged once, and in every ``TOOLS_OFFERED``
event) says what to install.

Figures below: ``python benchmarks/retrieval.py`` at 1,000 tools and 267 labelled queries
(``benchmarks/results/``; the endpoint figures with ``--embeddings-url ... --embeddings-model
all-MiniLM-L6-v2``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from pes_agent.config.base import ConfigModel, problem

DEFAULT_K = 30
"""Chosen with ``benchmarks/retrieval.py`` at 1,000 tools: where recall over the labelled queries
levels off (0.51 at 10, 0.58 at 20, 0.63 at 30, 0.66 at 50, 0.67 at 100; 0.67 of the needed tools
share a word with their query at all, the most BM25 can find), at about 850 planning-prompt tokens,
a fifth of the local model's context (1,090 at 50, 2,010 at 100). Kept when ranking by meaning:
there the names-only tier, not a larger ``k``, buys recall at a few tokens a tool (with an endpoint,
30 + 200 named: 0.972; 50 + 150: 0.965, for more tokens)."""

DEFAULT_THRESHOLD = 100
"""Below it, every tool is shown: lexical retrieval shows the planner only about two thirds of the
tools a query needs (recall@30 0.65 at 50 tools, 0.68 at 100, ``benchmarks/retrieval.py``), while
100 tools' lines cost about 2,000 tokens, within the 3,000-token budget and half the local model's
context. Above it the list would outgrow both (3,700 tokens at 200 tools, 16,700 at 1,000)."""


DEFAULT_NAMES = 200
"""The names-only tier with an embeddings endpoint. Chosen on the even half of the labelled queries, checked
on the odd half (all-MiniLM-L6-v2): 30 described reach 0.830 of the needed tools, 30 + 100 named
0.945, 30 + 150 0.962, 30 + 200 **0.972** (0.972 on either half; 30 + 270: 0.983), and the largest
planning prompt at 1,000 tools is 1,858 tokens (1,673 at 200: flat), under the 3,000 budget.

With ``embeddings: off`` the tier is off by default: BM25 names only tools that share a word with the
query, so 200 names take recall from 0.630 to its lexical cap of 0.671 (12 of 289 needed tools) for
up to 700 more tokens, and the prompt then grows with the catalogue (702 max at 200 tools, 1,568 at
1,000) instead of staying flat (703, 853)."""

BUILTIN_NAMES = 340
"""The names-only tier with the built-in meaning table (the default ranking). Chosen on the even half
of the labelled queries, checked on the odd half: 30 described + 340 named is the first size where
the tuning half reaches 0.95 (0.959; held-out half 0.972; 30 + 200: 0.890 / 0.931). The table ranks
less sharply than an embedding model, so it needs more names for the same recall; they cost about
1,600 tokens at 1,000 tools, and the planning prompt stays under the 3,000 budget and flat in N
(``benchmarks/retrieval.py``)."""


class EmbeddingsConfig(ConfigModel):
    """Embeddings fused with the lexical index: tools found by meaning, not only by shared words.

    Requests go to ``/v1/embeddings`` of a configured provider (``openai`` adapter, or a preset that
    speaks its API), with that provider's ``base_url``, key and retry settings: nothing is copied.
    """

    provider: str
    """The name of a configured provider (under ``providers``) whose endpoint serves embeddings."""
    model: str
    """The embedding model's id at that endpoint (``text-embedding-3-small``, ``nomic-embed-text``...)."""
    batch_size: int = Field(default=64, ge=1, le=2048)
    """Tool texts sent per request when the catalogue is embedded."""
    timeout_s: float | None = Field(default=None, gt=0)
    """Per-request timeout; None: the provider's ``timeout_s``."""


def _embeddings_kind(value: Any) -> str:
    """A mapping is an endpoint, anything else names a ranking: decided before validating, so a
    wrong value is one problem at the key the user wrote, not one for each kind tried."""
    return "endpoint" if isinstance(value, (Mapping, EmbeddingsConfig)) else "ranking"


EmbeddingsSetting = Annotated[
    Annotated[Literal["builtin", "off"], Tag("ranking")] | Annotated[EmbeddingsConfig, Tag("endpoint")],
    Discriminator(_embeddings_kind),
]


class RetrievalConfig(ConfigModel):
    enabled: bool = True
    """Find tools before planning when more than ``threshold`` tools are enabled. ``false``: every
    planning prompt lists every enabled tool (and no warning when the extra is missing)."""
    threshold: int = Field(default=DEFAULT_THRESHOLD, ge=0)
    """Up to this many enabled tools the planner sees them all, as without retrieval."""
    k: int = Field(default=DEFAULT_K, ge=1)
    """How many tools the planner is shown for a query, described: the best by the ranking (BM25
    fused with meaning, see ``embeddings``). With ``embeddings: off`` tools that share no word with
    the query are not shown, so there may be fewer."""
    find_tools_calls: int = Field(default=2, ge=0)
    """How many times the planner may ask for more tools (``{"findTools": [...]}``) before it has to
    plan with what it has; each ask adds up to ``k`` tools. 0: the planner is not offered it."""
    names: int | None = Field(default=None, ge=0)
    """After the ``k`` tools shown with their description, this many more by name only: a short
    line the planner may plan from (or ask ``findTools`` about), so more of the tools a query needs
    are within reach at a few tokens each. Not in guided mode, whose small model chooses among a
    few candidates per part. None: ``BUILTIN_NAMES`` (340) with the built-in table, ``DEFAULT_NAMES``
    (200) with an endpoint, 0 with ``embeddings: off`` (see there)."""
    embeddings: EmbeddingsSetting = "builtin"
    """Rank tools by meaning too, fused with BM25: ``builtin`` with the table shipped in the package
    (``pes_agent.tools.meaning``: no model, no network); ``{provider, model}`` with an embedding
    model's endpoint (better recall for a model call a query); ``off``: BM25 alone."""

    @property
    def named_only(self) -> int:
        """How many tools the names-only tier lists (``names``, or its default for the ranking)."""
        if self.names is not None:
            return self.names
        if self.embeddings == "builtin":
            return BUILTIN_NAMES
        return 0 if self.embeddings == "off" else DEFAULT_NAMES

    @property
    def endpoint(self) -> EmbeddingsConfig | None:
        """The embeddings endpoint, when one is configured."""
        return self.embeddings if isinstance(self.embeddings, EmbeddingsConfig) else None


def embedding_problems(retrieval: RetrievalConfig, providers: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What is wrong with ``retrieval.embeddings``' provider: it must be configured and speak the
    OpenAI API (``adapter: openai`` or one of its presets), whose ``/v1/embeddings`` is used."""
    chosen = retrieval.endpoint
    if chosen is None:
        return []
    where = ("retrieval", "embeddings", "provider")
    provider = providers.get(chosen.provider)
    if provider is None:
        configured = sorted(providers)
        msg = f"no provider named {chosen.provider!r} is configured to serve embeddings"
        return [problem(where, msg, configured or ["a provider under `providers`"], chosen.provider)]
    if provider.adapter != "openai":
        msg = (
            f"provider {chosen.provider!r} uses the {provider.adapter!r} adapter; embeddings are "
            "requested from an OpenAI-compatible `/v1/embeddings`, so name a provider with `adapter: openai` "
            "(or a preset such as `ollama`)"
        )
        return [
            problem(where, msg, [n for n, p in providers.items() if p.adapter == "openai"], chosen.provider)
        ]
    return []
