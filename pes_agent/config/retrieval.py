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
"""Chosen with ``benchmarks/retrieval.py``: where recall over the labelled queries stops growing
(0.62 at 30, 0.66 at 50, 0.67 at 150: the rest share no word with the query, see the README)."""


class RetrievalConfig(ConfigModel):
    enabled: bool = True
    """Find tools before planning when more than ``threshold`` tools are enabled. ``false``: every
    planning prompt lists every enabled tool (and no warning when the extra is missing)."""
    threshold: int = Field(default=30, ge=0)
    """Up to this many enabled tools the planner sees them all, as without retrieval."""
    k: int = Field(default=DEFAULT_K, ge=1)
    """How many tools the planner is shown for a query: the best by BM25 score. Tools that share no
    word with the query are not shown, so there may be fewer."""
    find_tools_calls: int = Field(default=2, ge=0)
    """How many times the planner may ask for more tools (``{"findTools": [...]}``) before it has to
    plan with what it has; each ask adds up to ``k`` tools. 0: the planner is not offered it."""
