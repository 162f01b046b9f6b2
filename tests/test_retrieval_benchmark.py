"""benchmarks/retrieval.py: its measures count what they say, and its report names a miss a miss.

The figures themselves come from running the script (minutes with --local); these tests check the
arithmetic on inputs whose answers are known.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from benchmarks.retrieval import lexical_reach, recall, report
from benchmarks.retrieval_queries import LabelledQuery
from benchmarks.tool_catalogue import catalogue

pytest.importorskip("bm25s", reason="the `retrieval` extra is not installed")


def test_recall_counts_the_needed_tools_shown_among_the_queries_whose_tools_are_present() -> None:
    specs = catalogue()
    queries = [
        LabelledQuery("invoice pdf", ("billing_get_invoice_pdf",)),
        LabelledQuery("zyzzyva", ("weather_get_forecast",)),  # shares no word: never shown
        LabelledQuery("a tool that is not there", ("no_such_tool",)),  # not in the catalogue: not counted
    ]
    value, usable = recall(specs, queries, 30, meaning=False)
    assert usable == 2 and value == 0.5
    assert lexical_reach(specs, queries[:2]) == 0.5
    assert math.isnan(recall(specs, queries[2:], 30)[0])


def test_by_default_recall_counts_tools_found_by_meaning_that_share_no_word_with_the_query() -> None:
    specs = catalogue()
    query = [LabelledQuery("How long until Christmas?", ("time_days_between",))]
    assert lexical_reach(specs, query) == 0.0
    assert recall(specs, query, 30, meaning=False)[0] == 0.0
    assert recall(specs, query, 30, 340)[0] == 1.0


def _result(recall_at_k: float, tokens: int) -> dict[str, Any]:
    sizes = {
        n: {"on_mean": 400, "on_max": tokens, "off_mean": 20 * int(n)}
        for n in ("10", "50", "200", "500", "1000")
    }
    return {
        "k": 30,
        "names": 200,
        "threshold": 30,
        "queries": 3,
        "needed_tools": 3,
        "recall_offered_1000": {"0": [recall_at_k] * 3, "200": [recall_at_k] * 3},
        "recall_at_k_1000": {"30": recall_at_k},
        "tokens_by_k_1000": {"30": tokens},
        "recall_bm25_1000": {"30": 0.6, "100": 0.67},
        "recall_by_size": {"1000": (recall_at_k, 3)},
        "lexical_reach": 0.7,
        "planning_tokens": sizes,
        "timing": {"build_s_median": 0.03, "query_ms_median": 0.1, "query_ms_p95": 0.5, "query_ms_max": 1.0},
    }


def test_the_report_marks_each_missed_target() -> None:
    missed = report(_result(0.63, 3500))
    assert "recall@30 >= 0.95: 0.630 MISS" in missed
    assert "planning prompt at 1,000 tools <= 3000: max 3500 MISS" in missed
    met = report(_result(0.96, 900))
    assert "MISS" not in met
