"""The retrieval benchmark's data: 1,000 tools and the labelled queries over them.

The catalogue is generated, so these tests pin what makes it worth measuring against: its size, its
determinism, near neighbours that differ in one respect, and queries whose answers are present.
"""

from __future__ import annotations

import re

from benchmarks.retrieval_queries import QUERIES, needed_tools
from benchmarks.tool_catalogue import SIZE, catalogue
from pes_agent.tools.registry import ToolRegistry
from pes_agent.tools.search_terms import words


def test_the_catalogue_has_a_thousand_distinct_tools_that_register() -> None:
    specs = catalogue()
    assert len(specs) == SIZE == 1000
    assert len(ToolRegistry(specs)) == 1000  # names valid and unique, schemas compile


def test_the_catalogue_is_the_same_on_every_call() -> None:
    first, second = catalogue(), catalogue()
    assert [(s.name, s.description) for s in first] == [(s.name, s.description) for s in second]
    assert [s.name for s in catalogue(200)] == [s.name for s in catalogue(200)]


def test_every_labelled_tool_is_in_the_catalogue_and_smaller_ones_keep_them() -> None:
    names = {s.name for s in catalogue()}
    assert needed_tools() <= names
    small = {s.name for s in catalogue(200)}
    assert len(small) == 200 and small <= needed_tools()  # 252 needed tools: 200 of them fill it
    assert {s.name for s in catalogue(300)} >= needed_tools()


def test_tools_come_in_families_of_near_neighbours() -> None:
    names = {s.name for s in catalogue()}
    assert {
        "billing_get_invoice",
        "billing_list_invoices",
        "billing_get_invoice_pdf",
        "billing_send_invoice",
        "billing_void_invoice",
        "billing_export_invoices_csv",
    } <= names
    families: dict[str, int] = {}
    for name in names:
        noun = re.sub(r"^[a-z]+_(get|list|create|update|delete|search)_", "", name)
        families[noun] = families.get(noun, 0) + 1
    assert sum(1 for n in families.values() if n >= 3) >= 60


def test_there_are_enough_queries_and_most_avoid_the_tools_own_name_words() -> None:
    assert len(QUERIES) >= 200
    assert len({q.text for q in QUERIES}) == len(QUERIES)
    assert sum(1 for q in QUERIES if len(q.tools) > 1) >= 15
    shares = [q for q in QUERIES if any(set(words(q.text)) & set(words(t.split("_", 1)[1])) for t in q.tools)]
    assert len(shares) < len(QUERIES) / 2
