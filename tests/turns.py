"""Model replies in the shapes the agent parses, for scripted runs: a plan, a tool call, a step's close."""

from __future__ import annotations

import json
from typing import Any


def plan(*tools: str) -> str:
    """A plan of one tool step per tool, in order, with no dependencies."""
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


def call(tool: str, arguments: dict[str, Any]) -> str:
    return "```json\n" + json.dumps({"toolCalls": [{"toolName": tool, "arguments": arguments}]}) + "\n```"


def content(text: str) -> str:
    """A step's closing turn: its result in words, and the item complete."""
    return "```json\n" + json.dumps({"content": text, "nextStepDecision": "complete_item"}) + "\n```"
