"""CPU time to choose one request's tools, for an A/B between two checkouts of the project.

Usage, from anywhere: ``python benchmarks/retrieval_timing.py REPO_ROOT`` (run it for the old and the
new checkout in turn, alternating, at the same load). The requests (``retrieval_queries``,
``retrieval_compound``) and the catalogue come from this file's checkout; ``pes_agent`` from REPO_ROOT.

Why CPU time: on a machine shared by several people, the wall-clock p95 that ``retrieval.py`` reports
moves with the load average (22 ms at load 6, 47 ms at load 11 for the same code); the thread's CPU
time moves much less, so two checkouts can be compared. Prints the median and p95 in ms over 5 rounds
of the 267 single requests and of the 44 compound ones, and the load average before and after.
"""

import os
import statistics
import sys
import time
from pathlib import Path

root = sys.argv[1]
sys.path.insert(0, root)
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))
import pes_agent  # noqa: E402

assert pes_agent.__file__ is not None and pes_agent.__file__.startswith(root), pes_agent.__file__
from benchmarks.retrieval_compound import COMPOUND  # noqa: E402
from benchmarks.retrieval_queries import QUERIES  # noqa: E402
from benchmarks.tool_catalogue import catalogue  # noqa: E402
from pes_agent.agent import tool_offer  # noqa: E402
from pes_agent.config import RetrievalConfig  # noqa: E402
from pes_agent.tools.finder import ToolFinder  # noqa: E402
from pes_agent.tools.meaning import BuiltinEmbedder  # noqa: E402
from pes_agent.tools.registry import ToolRegistry  # noqa: E402

registry = ToolRegistry(catalogue())
finder = ToolFinder(registry, BuiltinEmbedder())
config = RetrievalConfig(k=30)
names = registry.names()


def offer(text: str) -> object:
    """What a run's first planning call is shown: after issue 30 ``preview_offer``, before it the
    whole request searched at once."""
    if hasattr(tool_offer, "preview_offer"):
        return tool_offer.preview_offer(text, names, config, finder)
    searcher = finder.preview([text])
    assert searcher is not None
    return tool_offer.choose_tools(text, names, config, searcher)


finder.preview([])  # the index and the catalogue's vectors, outside the clock
out = {}
load = os.getloadavg()
for label, requests in (("single", QUERIES), ("compound", COMPOUND)):
    times = []
    for _ in range(5):
        for request in requests:
            start = time.thread_time()
            offer(request.text)
            times.append((time.thread_time() - start) * 1000)
    times.sort()
    out[label] = (round(statistics.median(times), 2), round(times[int(0.95 * len(times)) - 1], 2))
print(root, {k: f"median {m} ms, p95 {p} ms" for k, (m, p) in out.items()}, "load", load, os.getloadavg())
