"""The model-free benchmark provider takes what a grammar would produce first (benchmarks/first_option.py)."""

from __future__ import annotations

import asyncio
import json

from benchmarks.first_option import ANSWER, FirstOptionProvider, first_option
from pes_agent.llm.types import CallOptions, Message, PromptRequest


def test_the_first_option_of_each_kind_of_choice() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tool": {"enum": ["convert", "weather"]},
            "amount": {"anyOf": [{"enum": [40, 12]}, {"type": "string", "x-composed-of": ["2", "3"]}]},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
            "note": {"type": "string"},
            "skip": {"type": "string"},
        },
        "required": ["tool", "amount", "tags", "note"],
    }
    assert first_option(schema) == {"tool": "convert", "amount": 40, "tags": ["a"], "note": "x"}


def test_the_provider_answers_a_schema_with_its_first_option_and_an_answer_with_a_sentence() -> None:
    ask = PromptRequest(
        phase="planning",
        step_id=None,
        messages=(Message(role="user", content="plan"),),
        response_schema={"type": "object", "properties": {"p": {"enum": ["t1", "t2"]}}, "required": ["p"]},
    )
    answer = PromptRequest(phase="synthesis", step_id=None, messages=(Message(role="user", content="say"),))
    provider = FirstOptionProvider()
    assert json.loads(asyncio.run(provider.complete(ask, CallOptions())).text) == {"p": "t1"}
    assert asyncio.run(provider.complete(answer, CallOptions())).text == ANSWER
