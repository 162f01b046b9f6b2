"""The ``retrieval`` section: finding the tools a query needs before planning.

On by default: an instance with more than ``threshold`` enabled tools shows the planner only the
``k`` that best match the query (``pes_agent.tools.index``), so the planning prompt stays the same
size at 50 tools or 1,000. The index needs the ``retrieval`` extra; where it is not installed, the
planner sees every tool as before, and a warning (logged once, and in every ``TOOLS_OFFERED``
event) says what to install.
"""

from __future__ import annotations

from pydantic import Field

from pes_agent.config.base import ConfigModel

DEFAULT_K = 30
"""Chosen with ``benchmarks/retrieval.py`` at 1,000 tools: where recall over the labelled queries
levels off (0.51 at 10, 0.58 at 20, 0.63 at 30, 0.66 at 50, 0.67 at 100; 0.67 of the needed tools
share a word with their query at all, the most BM25 can find), at about 850 planning-prompt tokens,
a fifth of the local model's context (1,090 at 50, 2,010 at 100)."""

DEFAULT_THRESHOLD = 100
"""Below it, every tool is shown: lexical retrieval shows the planner only about two thirds of the
tools a query needs (recall@30 0.65 at 50 tools, 0.68 at 100, ``benchmarks/retrieval.py``), while
100 tools' lines cost about 2,000 tokens, within the 3,000-token budget and half the local model's
context. Above it the list would outgrow both (3,700 tokens at 200 tools, 16,700 at 1,000)."""


class RetrievalConfig(ConfigModel):
    enabled: bool = True
    """Find tools before planning when more than ``threshold`` tools are enabled. ``false``: every
    planning prompt lists every enabled tool (and no warning when the extra is missing)."""
    threshold: int = Field(default=DEFAULT_THRESHOLD, ge=0)
    """Up to this many enabled tools the planner sees them all, as without retrieval."""
    k: int = Field(default=DEFAULT_K, ge=1)
    """How many tools the planner is shown for a query: the best by BM25 score. Tools that share no
    word with the query are not shown, so there may be fewer."""
    find_tools_calls: int = Field(default=2, ge=0)
    """How many times the planner may ask for more tools (``{"findTools": [...]}``) before it has to
    plan with what it has; each ask adds up to ``k`` tools. 0: the planner is not offered it."""
