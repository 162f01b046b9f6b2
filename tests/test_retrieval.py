"""Tool retrieval before planning: with many tools the planner sees the few that match the query.

Runs go through ``create_art_instance`` with a scripted model and the benchmark's 1,000-tool
catalogue; what is asserted is what a user would see: the planning prompt, the events, the warning.
"""

from __future__ import annotations

import importlib.util
import json
import logging
from typing import Any

import pytest

from benchmarks.tool_catalogue import catalogue
from pes_agent import EventType, create_art_instance
from pes_agent.config import load_config
from pes_agent.llm.plans import find_tools_request
from pes_agent.prompts.schemas import plan_reply_schema
from pes_agent.testing import ScriptedProvider
from pes_agent.tools import index as index_module
from pes_agent.tools.decorators import tool_from_schema
from pes_agent.tools.finder import ToolFinder
from pes_agent.tools.index import ToolIndex
from pes_agent.tools.registry import ToolRegistry

needs_bm25s = pytest.mark.skipif(
    importlib.util.find_spec("bm25s") is None,
    reason="the `retrieval` extra is not installed (pip install -e '.[retrieval]')",
)

QUERY = "Can you send me a printable copy of invoice 4411?"
PDF = "billing_get_invoice_pdf"


def plan_reply(*tools: str) -> str:
    steps = [
        {
            "id": f"step_{i}",
            "description": f"use {t}",
            "stepType": "tool",
            "requiredTools": [t],
            "dependencies": [],
        }
        for i, t in enumerate(tools, 1)
    ]
    body = {"title": "t", "intent": "i", "plan": "p", "todoList": steps}
    return f"---JSON_OUTPUT_START---\n{json.dumps(body)}\n---JSON_OUTPUT_END---"


def find_reply(*phrases: str) -> str:
    return f"---JSON_OUTPUT_START---\n{json.dumps({'findTools': list(phrases)})}\n---JSON_OUTPUT_END---"


def call_reply(tool: str, arguments: dict[str, Any]) -> str:
    return "```json\n" + json.dumps({"toolCalls": [{"toolName": tool, "arguments": arguments}]}) + "\n```"


DONE = "```json\n" + json.dumps({"content": "done", "nextStepDecision": "complete_item"}) + "\n```"
ANSWER = "<mainContent>Here is the PDF.</mainContent>"


def tool_lines(content: str) -> list[str]:
    tools = content.split("Tools:\n", 1)[1].split("\n\n", 1)[0]
    return [line for line in tools.splitlines() if line.startswith("- ")]


async def instance(
    replies: list[Any], n: int = 1000, **config: Any
) -> tuple[Any, ScriptedProvider, list[Any]]:
    provider = ScriptedProvider(replies)
    cfg = {"storage": {"type": "memory"}, **config}
    art = await create_art_instance(cfg, tools=catalogue(n), providers={"scripted": provider})
    events: list[Any] = []
    art.bus.subscribe(events.append)
    return art, provider, events


# --- the index ------------------------------------------------------------------------------------


@needs_bm25s
def test_the_index_ranks_the_tool_whose_words_the_query_uses_first_among_its_family() -> None:
    index = ToolIndex.of(ToolRegistry(catalogue()))
    hits = index.search("get the PDF of invoice 4411", 5)
    assert hits[0].name == PDF
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert index.search("zyzzyva quux", 5) == ()  # no shared word: nothing, rather than noise


@needs_bm25s
def test_the_index_searches_only_the_allowed_tools() -> None:
    index = ToolIndex.of(ToolRegistry(catalogue()))
    hits = index.search("invoice pdf", 10, allowed={"billing_list_invoices", "weather_get_forecast"})
    assert [h.name for h in hits] == ["billing_list_invoices"]


@needs_bm25s
def test_tools_the_index_scores_alike_come_in_registration_order_whatever_k_cuts() -> None:
    schema = {"type": "object", "properties": {}}
    alike = ["q_3", "q_1", "q_5", "q_2", "q_4"]  # names without a word: the same text, the same score
    tools = [tool_from_schema(n, "Sends a postcard.", schema, lambda **_: None) for n in alike]
    index = ToolIndex.of(ToolRegistry([*catalogue(50), *tools]))
    assert [h.name for h in index.search("postcard", 3)] == ["q_3", "q_1", "q_5"]
    assert [h.name for h in index.search("postcard", 3, allowed={"q_1", "q_2", "q_4"})] == [
        "q_1",
        "q_2",
        "q_4",
    ]


@needs_bm25s
def test_the_finder_follows_the_registry_when_tools_change() -> None:
    """MCP servers' list changes reach the registry as register/unregister: the index follows."""
    registry = ToolRegistry(catalogue(100))
    finder = ToolFinder(registry)
    assert finder.index() is not None
    assert finder.index().search("glacier melt", 3) == ()  # type: ignore[union-attr]
    schema = {"type": "object", "properties": {"region": {"type": "string"}}}
    registry.register(
        tool_from_schema("glacier_melt", "Glacier melt rates from the survey.", schema, lambda **_: None)
    )
    assert [h.name for h in finder.index().search("glacier melt", 3)] == ["glacier_melt"]  # type: ignore[union-attr]
    registry.unregister("glacier_melt")
    assert finder.index().search("glacier melt", 3) == ()  # type: ignore[union-attr]


@needs_bm25s
async def test_an_mcp_servers_changed_tool_list_reaches_the_planner_through_the_index() -> None:
    """A tool an MCP server adds while the instance runs (``list_changed``) is found for a query
    with its words; once removed, it is no longer offered."""
    pytest.importorskip("mcp", reason="the `mcp` extra is not installed")
    from tests.test_mcp import SERVER, execute, stdio_server, until

    server = {**stdio_server(), "args": [*SERVER[1:], "--dynamic"], "exclude": ["crash", "sleep"]}
    config = {
        "storage": {"type": "memory"},
        "mcp": {"servers": [server]},
        "retrieval": {"threshold": 0, "k": 3},
    }
    art = await create_art_instance(
        config, tools=catalogue(100), providers={"scripted": ScriptedProvider([])}
    )
    async with art:
        query = "prefixed with extra"
        assert "- mcp_t_extra:" not in art.planning_prompt(query).messages[1].content
        assert (await execute(art, "mcp_t_grow", {"name": "extra"})).output == "added extra"
        await until(lambda: "mcp_t_extra" in art.registry)
        assert "- mcp_t_extra:" in art.planning_prompt(query).messages[1].content
        assert (await execute(art, "mcp_t_shrink", {"name": "extra"})).output == "removed extra"
        await until(lambda: "mcp_t_extra" not in art.registry)
        assert "- mcp_t_extra:" not in art.planning_prompt(query).messages[1].content


# --- planning with retrieval ----------------------------------------------------------------------


@needs_bm25s
async def test_a_names_only_tier_lists_the_next_tools_by_name_when_asked_for() -> None:
    art, provider, _ = await instance(
        [plan_reply(PDF), call_reply(PDF, {"invoice_id": "4411"}), DONE, ANSWER], retrieval={"names": 50}
    )
    assert (await art.process(QUERY)).status == "success"
    prompt = provider.calls[0].messages[1]["content"]
    named = prompt.split("More tools, by name only (plan with them as with those above): ", 1)[1].split(
        "\n", 1
    )[0]
    assert 0 < len(named.split(", ")) <= 50 and len(tool_lines(prompt)) == 30


@needs_bm25s
async def test_with_a_thousand_tools_the_planner_sees_k_of_them_and_the_event_says_why() -> None:
    art, provider, events = await instance(
        [plan_reply(PDF), call_reply(PDF, {"invoice_id": "4411"}), DONE, ANSWER]
    )
    response = await art.process(QUERY)
    assert response.status == "success"
    prompt = provider.calls[0].messages[1]["content"]
    lines = tool_lines(prompt)
    assert len(lines) == art.config.retrieval.k == 30
    assert any(line.startswith(f"- {PDF}:") for line in lines)
    assert "of 1000 tools: those that best match the query" in prompt and '"findTools"' in prompt
    assert (
        "More tools, by name only" in prompt
    )  # ranked by meaning too (the built-in table): a names-only tier
    offered = [e for e in events if e.type is EventType.TOOLS_OFFERED]
    assert len(offered) == 1 and offered[0].data["mode"] == "retrieved"
    assert offered[0].data["ranking"] == "bm25+builtin" and "reason" not in offered[0].data
    assert offered[0].data["searches"] == [QUERY] and offered[0].data["total"] == 1000
    scores = {t["name"]: t["score"] for t in offered[0].data["tools"]}
    assert scores[PDF] > 0 and len(scores) == 30
    assert provider.calls[1].phase == "execution" and PDF in provider.calls[1].tools


@needs_bm25s
async def test_the_planner_may_ask_for_more_tools_and_then_must_plan() -> None:
    query = "How deep in the red is client 12 with us?"
    art, provider, events = await instance(
        [
            find_reply("account balance a customer owes"),
            find_reply("more"),
            plan_reply("billing_get_account_balance"),
            call_reply("billing_get_account_balance", {"customer_id": "12"}),
            DONE,
            ANSWER,
        ],
        retrieval={"find_tools_calls": 2},
    )
    response = await art.process(query)
    assert response.status == "success"
    first, second, third = (c.messages[1]["content"] for c in provider.calls[:3])
    assert "- billing_get_account_balance:" not in first
    assert "- billing_get_account_balance:" in second
    assert '"findTools"' in second and '"findTools"' not in third  # the last ask offers no search
    assert provider.calls[0].phase == provider.calls[2].phase == "planning"
    offered = [e.data for e in events if e.type is EventType.TOOLS_OFFERED]
    assert [d["searches"] for d in offered] == [[query], ["account balance a customer owes"], ["more"]]
    assert "billing_get_account_balance" in [t["name"] for t in offered[1]["tools"]]
    assert len(tool_lines(third)) <= 3 * art.config.retrieval.k


@needs_bm25s
async def test_a_search_the_index_cannot_answer_asks_for_the_plan_again_instead_of_taking_the_search_as_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The index went away between the offer and the planner's ``findTools`` (its extra failed to
    import on a rebuild): the planner is asked again, now to plan with what it has."""
    art, provider, _ = await instance(
        [
            find_reply("account balance"),
            plan_reply(PDF),
            call_reply(PDF, {"invoice_id": "4411"}),
            DONE,
            ANSWER,
        ],
        retrieval={"find_tools_calls": 1},
    )
    first = art._finder.searcher
    asked: list[Any] = []

    async def gone_after_the_offer(texts: Any) -> Any:
        asked.append(texts)
        return await first(texts) if len(asked) == 1 else None

    monkeypatch.setattr(art._finder, "searcher", gone_after_the_offer)
    response = await art.process(QUERY)
    assert response.status == "success", response.error
    assert [c.phase for c in provider.calls[:2]] == ["planning", "planning"]
    assert '"findTools"' not in provider.calls[1].messages[1]["content"]  # the last ask offers no search


async def test_up_to_the_threshold_every_tool_is_shown_and_nothing_is_announced() -> None:
    art, provider, events = await instance([plan_reply(), ANSWER], n=100)
    await art.process("What is the weather like?")
    assert art.config.retrieval.threshold == 100
    assert len(tool_lines(provider.calls[0].messages[1]["content"])) == 100
    assert "tools: those whose words" not in provider.calls[0].messages[1]["content"]
    assert not [e for e in events if e.type is EventType.TOOLS_OFFERED]


async def test_retrieval_off_shows_every_tool() -> None:
    art, provider, _ = await instance([plan_reply(), ANSWER], n=200, retrieval={"enabled": False})
    await art.process(QUERY)
    assert len(tool_lines(provider.calls[0].messages[1]["content"])) == 200


async def test_without_the_extra_every_tool_is_shown_with_a_warning_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(index_module, "index_available", lambda: False)
    art, provider, events = await instance([plan_reply(), ANSWER, plan_reply(), ANSWER], n=200)
    with caplog.at_level(logging.WARNING, logger="pes_agent.retrieval"):
        await art.process(QUERY)
        await art.process(QUERY)
    assert len(tool_lines(provider.calls[0].messages[1]["content"])) == 200
    warnings = [r for r in caplog.records if r.name == "pes_agent.retrieval"]
    assert len(warnings) == 1 and "pip install 'pes-agent[retrieval]'" in warnings[0].getMessage()
    offered = [e.data for e in events if e.type is EventType.TOOLS_OFFERED]
    assert len(offered) == 2 and all(d["mode"] == "all_unindexed" for d in offered)
    assert "pip install 'pes-agent[retrieval]'" in offered[0]["reason"]


async def test_an_installed_but_broken_extra_plans_over_every_tool_with_warnings(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """bm25s found but failing to import (say, numpy built for another Python): the run goes on."""

    def broken(cls: Any, registry: Any) -> Any:
        raise ImportError("numpy.core.multiarray failed to import")

    monkeypatch.setattr(index_module, "index_available", lambda: True)
    monkeypatch.setattr(index_module.ToolIndex, "of", classmethod(broken))
    art, provider, events = await instance([plan_reply(), ANSWER], n=200)
    with caplog.at_level(logging.WARNING, logger="pes_agent.retrieval"):
        response = await art.process(QUERY)
    assert response.status == "success"
    assert len(tool_lines(provider.calls[0].messages[1]["content"])) == 200
    assert "numpy.core.multiarray" in caplog.text
    assert [e.data["mode"] for e in events if e.type is EventType.TOOLS_OFFERED] == ["all_unindexed"]


@needs_bm25s
async def test_a_follow_up_keeps_the_plan_tools_in_view() -> None:
    art, provider, _ = await instance(
        [plan_reply(PDF), call_reply(PDF, {"invoice_id": "4411"}), DONE, ANSWER, plan_reply(), ANSWER],
    )
    await art.process(QUERY, thread_id="t")
    await art.process("thanks, and what's the weather in Oslo tomorrow?", thread_id="t")
    refinement = next(c for c in provider.calls if c.phase == "refinement")
    lines = tool_lines(refinement.messages[1]["content"].replace("Tools:\n", "Tools:\n", 1) + "\n\n")
    assert any(line.startswith(f"- {PDF}:") for line in lines)
    assert any(line.startswith("- weather_get_forecast:") for line in lines)


@needs_bm25s
async def test_guided_planning_chooses_among_the_retrieved_tools() -> None:
    """The small local model's planner picks a tool per part of the query from an enum: it is
    offered the query's best tools and each part's best few, not all 200."""
    providers = {"scripted": {"adapter": "scripted", "structured_output": True, "guided": True}}
    art, provider, events = await instance(
        [json.dumps({"How is the air quality in Delhi today": "weather_get_air_quality"}), ANSWER],
        n=200,
        providers=providers,
    )
    await art.process("How is the air quality in Delhi today?")
    offered = next(e.data for e in events if e.type is EventType.TOOLS_OFFERED)
    assert offered["mode"] == "retrieved" and 0 < offered["shown"] <= art.config.retrieval.k + 5
    assert "weather_get_air_quality" in [t["name"] for t in offered["tools"]]
    assert (
        offered["searches"][0] == "How is the air quality in Delhi today?" and len(offered["searches"]) >= 2
    )
    # the part's choice, the model's or the only one offered (then no planning call is made)
    plan = next(e.data for e in events if e.type is EventType.PLAN)["todo_list"]
    assert [i["required_tools"] for i in plan] == [["weather_get_air_quality"]]
    planning = [c for c in provider.calls if c.phase == "planning"]
    assert all("weather_get_air_quality" in json.dumps(c.response_schema) for c in planning)


@needs_bm25s
async def test_a_guided_part_that_names_arithmetic_in_symbols_is_offered_the_calculator() -> None:
    """ "Compute 12 * 7" shares no word with "Arithmetic on numbers: add (+), ... multiply (*)";
    its part is searched with the operation's verb too, so the calculator is among its choices."""
    from pes_agent.demo.text_tools import LOCAL_TOOLS

    providers = {"scripted": {"adapter": "scripted", "structured_output": True, "guided": True}}
    plan = {"Compute 12 * 7": "calculator", "count the words in 'the answer is 84'": "word_count"}
    provider = ScriptedProvider(
        [json.dumps(plan), '{"expression": "12 * 7"}', '{"text": "the answer is 84"}', ANSWER]
    )
    config = {"storage": {"type": "memory"}, "providers": providers}
    others = [t for t in catalogue() if not t.name.startswith(("math_", "text_"))][:200]  # none computes
    art = await create_art_instance(config, tools=[*LOCAL_TOOLS, *others], providers={"scripted": provider})
    events: list[Any] = []
    art.subscribe(events.append)
    await art.process("Compute 12 * 7, then count the words in 'the answer is 84'.")
    planned = next(e.data for e in events if e.type is EventType.PLAN)["todo_list"]
    assert planned[0]["required_tools"] == ["calculator"]  # the model's choice or the only one offered


# --- the reply and the config ---------------------------------------------------------------------


def test_a_find_tools_reply_is_read_and_a_plan_is_not_one() -> None:
    assert find_tools_request(find_reply("send an invoice", " ", "send an invoice", "pdf", "x", "y")) == (
        "send an invoice",
        "pdf",
        "x",
    )
    assert find_tools_request('{"find_tools": "invoice pdf"}') == ("invoice pdf",)
    assert find_tools_request(plan_reply(PDF)) == ()
    assert find_tools_request("no JSON here") == ()


def test_the_reply_schema_admits_find_tools_only_when_offered() -> None:
    assert "findTools" not in plan_reply_schema(["a"])["properties"]
    assert plan_reply_schema(["a"], find_tools=True)["properties"]["findTools"]["maxItems"] == 3


def test_retrieval_settings_load_from_config(tmp_path: Any) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("storage: {type: memory}\nretrieval: {k: 12, threshold: 50, findToolsCalls: 0}\n")
    config = load_config(path)
    assert (config.retrieval.k, config.retrieval.threshold, config.retrieval.find_tools_calls) == (12, 50, 0)
    assert load_config(tmp_path / "c.yaml").retrieval.enabled is True


def test_the_cli_progress_says_how_many_tools_the_planner_saw() -> None:
    from pes_agent.cli import progress_line
    from pes_agent.events import Event

    def line(data: dict[str, Any]) -> str | None:
        event = Event(
            id="e",
            type=EventType.TOOLS_OFFERED,
            thread_id="t",
            trace_id="r",
            step_id=None,
            timestamp=0.0,
            data=data,
        )
        return progress_line(event)

    assert line({"mode": "retrieved", "shown": 30, "total": 1000, "searches": ["q"]}) == (
        "tools: 30 of 1000 shown to the planner, ranked by bm25 (searched ['q'])"
    )
    named = [{"name": "a", "score": 1.0}, {"name": "b", "score": 0.5}]
    assert line(
        {
            "mode": "retrieved",
            "shown": 30,
            "total": 1000,
            "searches": ["q"],
            "named": named,
            "ranking": "bm25",
            "reason": "embeddings failed, so ...",
        }
    ) == (
        "tools: 30 (+2 by name) of 1000 shown to the planner, ranked by bm25 (searched ['q']); embeddings "
        "failed, so ..."
    )
    assert "pip install" in (line({"mode": "all_unindexed", "total": 200, "reason": "pip install x"}) or "")


# --- compound requests: each part searched on its own (issue 30) ------------------------------------


@needs_bm25s
async def test_a_short_generic_part_keeps_its_tool_beside_a_long_specific_one() -> None:
    """Ranked as a whole, the long billing part took the whole budget and the web search for "look it
    up on the internet" was not even named to the planner; each part now has its own list, merged
    fairly, and the event shows what each part found."""
    query = (
        "Look it up on the internet, then update the billing subscription of customer 881 to the annual "
        "plan with the new discount code"
    )
    art, provider, events = await instance(
        [plan_reply("web_search"), call_reply("web_search", {"query": "x"}), DONE, ANSWER]
    )
    await art.process(query)
    prompt = provider.calls[0].messages[1]["content"]
    assert "web_search" in prompt and "- billing_update_subscription:" in prompt
    offered = next(e.data for e in events if e.type is EventType.TOOLS_OFFERED)
    assert offered["searches"] == [
        query,
        "Look it up on the internet",
        "update the billing subscription of customer 881 to the annual plan with the new discount code",
    ]
    assert [p["part"] for p in offered["parts"]] == offered["searches"][1:]
    assert "billing_update_subscription" in offered["parts"][1]["found"]
    assert art.planning_prompt(query).messages[1].content == prompt  # the preview shows the same offer


@needs_bm25s
def test_a_request_of_one_part_is_offered_what_its_whole_text_finds() -> None:
    from pes_agent.agent.tool_offer import preview_offer
    from pes_agent.config import RetrievalConfig
    from pes_agent.tools.meaning import BuiltinEmbedder

    registry = ToolRegistry(catalogue())
    finder = ToolFinder(registry, BuiltinEmbedder())
    offer = preview_offer(QUERY, registry.names(), RetrievalConfig(), finder)
    searcher = finder.preview([QUERY])
    assert searcher is not None
    whole = searcher.search(QUERY, 30 + 340, frozenset(registry.names()))
    assert (
        offer.plannable == tuple(h.name for h in whole) and offer.searches == (QUERY,) and offer.parts == ()
    )


@needs_bm25s
def test_a_requests_texts_ranked_together_are_ranked_as_the_plain_fusion_ranks_each() -> None:
    """The parts and the whole of a request are ranked in one pass over arrays (issue 30's cost);
    every hit, score and tie must be what ``fuse`` (reciprocal ranks, written plainly) makes of each
    text's BM25 and cosine rankings, with every tool allowed and with some left out."""
    from benchmarks.retrieval_compound import COMPOUND
    from pes_agent.guided.parts import query_parts
    from pes_agent.tools.meaning import BuiltinEmbedder
    from pes_agent.tools.semantic import LEXICAL_POOL, fuse

    registry = ToolRegistry(catalogue())
    finder = ToolFinder(registry, BuiltinEmbedder())
    requests = [[r.text, *query_parts(r.text)] for r in COMPOUND[::4]]
    searcher = finder.preview([t for texts in requests for t in texts])
    assert searcher is not None and searcher.semantic is not None
    some = frozenset(registry.names()[::3])
    for allowed in (None, some):
        for texts in requests:
            plain = [
                fuse(
                    searcher.index.search(text, LEXICAL_POOL, allowed),
                    searcher.semantic.rank(searcher.vectors[text], allowed),
                    30 + 340,
                )
                for text in texts
            ]
            assert searcher.search_each(texts, 30 + 340, allowed) == plain


def test_a_fair_merge_gives_every_list_its_best_first_whatever_the_scores() -> None:
    from pes_agent.agent.tool_offer import fair_merge
    from pes_agent.tools.index import ToolHit

    specific = [ToolHit(name=f"billing_{i}", score=90.0 - i) for i in range(5)]
    generic = [
        ToolHit(name="web_search", score=2.0),
        ToolHit(name="billing_0", score=1.5),
        ToolHit(name="web_news", score=1.0),
    ]
    merged = [h.name for h in fair_merge([specific, generic], 4)]
    assert merged == ["billing_0", "web_search", "billing_1", "web_news"]  # a taken tool does not use a turn


# --- search words: a tool found by how users name its job -----------------------------------------


def _web_tool(**options: Any) -> Any:
    from pes_agent.tools.decorators import tool

    @tool(name="web_lookup", description="Retrieve ranked pages for a phrase.", **options)
    def web_lookup(phrase: str) -> str:
        return phrase

    return web_lookup


@needs_bm25s
async def test_a_tool_authors_search_words_find_it_and_are_not_shown_to_the_model() -> None:
    """ "google" is not in the description; the author's ``keywords=`` make "google the opening hours"
    find the tool, and neither the planner's list nor the step's schema carries them."""
    fillers = catalogue()[:300]
    query = "google the opening hours of the Louvre"
    for keywords, found in (((), False), (["google", "look online", "internet"], True)):
        provider = ScriptedProvider(
            [plan_reply("web_lookup"), call_reply("web_lookup", {"phrase": "Louvre"}), DONE, ANSWER]
        )
        config = {"storage": {"type": "memory"}, "retrieval": {"names": 0, "k": 5}}
        art = await create_art_instance(
            config, tools=[*fillers, _web_tool(keywords=keywords)], providers={"scripted": provider}
        )
        await art.process(query)
        planning = provider.calls[0].messages[1]["content"]
        assert ("- web_lookup:" in planning) is found
        assert "google" not in planning.replace(query, "") and "x-search-terms" not in planning
        if found:
            assert "x-search-terms" not in json.dumps([c.messages for c in provider.calls[1:]], default=str)


def test_search_words_come_from_the_schema_or_the_decorator_and_must_be_words() -> None:
    from pes_agent.errors import ToolDefinitionError

    schema = {"type": "object", "properties": {}, "x-search-terms": ["google"]}
    spec = tool_from_schema(
        "web_lookup", "Retrieve pages.", schema, lambda: "", keywords=["internet", "google"]
    )
    assert spec.search_terms == ("google", "internet")
    assert "x-search-terms" not in spec.model_schema and spec.model_schema["type"] == "object"
    with pytest.raises(ToolDefinitionError, match="keywords"):
        _web_tool(keywords="google")
