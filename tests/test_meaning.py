"""The built-in meaning table: tools found by meaning with nothing configured.

What a user would notice: a query that shares no word with the tool it needs still offers that tool;
the prompt a preview shows is the one a run sends; a query the table knows no word of plans by words
alone; a damaged install or a wrong setting says what to do. The tokenizer is held to the ids the
library the table was distilled with gives (``tests/fixtures/wordpiece.json``, written by
``benchmarks/static_table.py``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from benchmarks.tool_catalogue import catalogue
from pes_agent import EventType, create_art_instance
from pes_agent.config import config_from_dict
from pes_agent.errors import ConfigError
from pes_agent.testing import ScriptedProvider
from pes_agent.tools import meaning
from pes_agent.tools.meaning import BuiltinEmbedder, MeaningTable, builtin_table
from pes_agent.tools.semantic import tool_text

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("bm25s") is None,
    reason="the `retrieval` extra is not installed (pip install -e '.[retrieval]')",
)

FIXTURE = Path(__file__).parent / "fixtures" / "wordpiece.json"
CHRISTMAS = "How long until Christmas?"


def test_the_tokenizer_gives_the_ids_the_table_was_distilled_with() -> None:
    golden = json.loads(FIXTURE.read_text(encoding="utf-8"))
    tokenizer = builtin_table().tokenizer
    wrong = [(text, ids, tokenizer.ids(text)) for text, ids in golden["texts"] if tokenizer.ids(text) != ids]
    assert wrong == []
    catalogue_ids = [tokenizer.ids(tool_text(s)) for s in catalogue(1000)]
    assert hashlib.sha256(json.dumps(catalogue_ids).encode()).hexdigest() == golden["catalogue_sha256"]


async def test_texts_close_in_meaning_get_close_vectors() -> None:
    embedder = BuiltinEmbedder()
    query, near, far = await embedder.embed(
        [CHRISTMAS, "count the days between two dates", "print an invoice as PDF"]
    )

    def cosine(a: list[float], b: list[float]) -> float:
        dot = sum(x * y for x, y in zip(a, b, strict=True))
        return dot / (sum(x * x for x in a) ** 0.5 * sum(y * y for y in b) ** 0.5)

    assert cosine(query, near) > cosine(query, far) + 0.1


async def instance(replies: list[Any], **retrieval: Any) -> tuple[Any, ScriptedProvider, list[Any]]:
    provider = ScriptedProvider(replies)
    config = {"storage": {"type": "memory"}, "retrieval": retrieval}
    art = await create_art_instance(config, tools=catalogue(1000), providers={"scripted": provider})
    events: list[Any] = []
    art.bus.subscribe(events.append)
    return art, provider, events


def offered_names(event_data: dict[str, Any]) -> set[str]:
    return {t["name"] for t in event_data["tools"] + event_data["named"]}


async def test_a_tool_sharing_no_word_with_the_query_is_offered_by_default_not_with_words_alone() -> None:
    plan = (
        '---JSON_OUTPUT_START---\n{"title": "t", "intent": "i", "plan": "p", "todoList": '
        "[]}\n---JSON_OUTPUT_END---"
    )
    answers = [plan, "<mainContent>ok</mainContent>"]
    by_default, _, events = await instance(list(answers))
    await by_default.process(CHRISTMAS)
    words_only, _, plain = await instance(list(answers), embeddings="off")
    await words_only.process(CHRISTMAS)
    default = next(e.data for e in events if e.type is EventType.TOOLS_OFFERED)
    off = next(e.data for e in plain if e.type is EventType.TOOLS_OFFERED)
    assert default["ranking"] == "bm25+builtin" and "time_days_between" in offered_names(default)
    assert off["ranking"] == "bm25" and "time_days_between" not in offered_names(off)
    assert off["named"] == []  # BM25 alone: no names-only tier by default


async def test_the_preview_shows_the_prompt_a_run_sends() -> None:
    query = "Can you send me a printable copy of bill 4411?"
    plan = (
        '---JSON_OUTPUT_START---\n{"title": "t", "intent": "i", "plan": "p", "todoList": '
        "[]}\n---JSON_OUTPUT_END---"
    )
    art, provider, _ = await instance([plan, "<mainContent>ok</mainContent>"])
    preview = [{"role": m.role, "content": m.content} for m in art.planning_prompt(query).messages]
    await art.process(query)
    assert provider.calls[0].messages == preview


async def test_a_query_the_table_knows_no_word_of_is_ranked_by_words_alone() -> None:
    plan = (
        '---JSON_OUTPUT_START---\n{"title": "t", "intent": "i", "plan": "p", "todoList": '
        "[]}\n---JSON_OUTPUT_END---"
    )
    art, _, events = await instance([plan, "<mainContent>ok</mainContent>"])
    assert builtin_table().vector("🎉🎉") == [0.0] * builtin_table().dimensions
    response = await art.process("🎉🎉 invoice pdf")
    assert response.status == "success"
    offered = next(e.data for e in events if e.type is EventType.TOOLS_OFFERED)
    assert "billing_get_invoice_pdf" in [t["name"] for t in offered["tools"]]


@pytest.mark.parametrize("damage", ["not a table", "empty", "cut short", "flipped bytes"])
def test_a_damaged_table_says_what_to_do(tmp_path: Path, damage: str) -> None:
    """However the file is damaged (an interrupted install cuts it short, a disk flips bytes)."""
    shipped = meaning.TABLE.read_bytes()
    broken = tmp_path / "meaning.npz"
    broken.write_bytes(
        {
            "not a table": b"not a table",
            "empty": b"",
            "cut short": shipped[: len(shipped) // 2],
            "flipped bytes": shipped[:1000] + bytes(5000) + shipped[6000:],
        }[damage]
    )
    with pytest.raises(ConfigError) as caught:
        MeaningTable.load(broken)
    message = str(caught.value)
    assert (
        "`retrieval.embeddings`" in message
        and "reinstall pes-agent" in message
        and "embeddings: off" in message
    )


def test_the_default_ranks_by_the_table_and_an_unknown_setting_is_refused() -> None:
    assert config_from_dict({"storage": {"type": "memory"}}).retrieval.embeddings == "builtin"
    assert config_from_dict({"storage": {"type": "memory"}}).retrieval.named_only == 340
    assert (
        config_from_dict(
            {"storage": {"type": "memory"}, "retrieval": {"embeddings": "off"}}
        ).retrieval.named_only
        == 0
    )
    with pytest.raises(ConfigError) as caught:
        config_from_dict({"storage": {"type": "memory"}, "retrieval": {"embeddings": "bm25"}})
    assert "retrieval.embeddings" in str(caught.value)


@pytest.mark.parametrize(
    ("value", "where", "says"),
    [
        (None, "retrieval.embeddings", "allowed: builtin, off, a mapping of keys"),
        ("Builtin", "retrieval.embeddings", "allowed: builtin, off, a mapping of keys"),
        ({"provider": "local"}, "retrieval.embeddings.model", "required key is missing"),
    ],
)
def test_a_wrong_embeddings_setting_says_what_is_allowed_in_the_words_of_the_config(
    value: Any, where: str, says: str
) -> None:
    """One problem per wrong value, at the key the user wrote, naming what is allowed: not one per
    kind the setting accepts, spelled with pydantic's names for them (``EmbeddingsConfig``,
    ``literal['builtin','off']``) and an empty list of what is allowed."""
    with pytest.raises(ConfigError) as caught:
        config_from_dict({"storage": {"type": "memory"}, "retrieval": {"embeddings": value}})
    lines = str(caught.value).splitlines()
    assert len(lines) == 1 and f"`{where}`" in lines[0] and says in lines[0], lines
    assert "EmbeddingsConfig" not in lines[0] and "literal[" not in lines[0]


async def test_the_table_is_read_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the table takes about a third of a second; a first embed of a few texts (a catalogue
    under 64 tools with a low ``threshold``, a query) must not hold the instance's loop for it."""
    read_in: list[int] = []

    def read() -> MeaningTable:
        read_in.append(threading.get_ident())
        return builtin_table()

    monkeypatch.setattr(meaning, "builtin_table", read)
    embedder = BuiltinEmbedder()
    first = await embedder.embed(["add two numbers"])
    assert read_in and read_in[0] != threading.get_ident()
    assert await embedder.embed(["add two numbers"]) == first and len(read_in) == 1
