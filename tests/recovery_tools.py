"""Tools both recovery test modules use, and the one record of what really ran.

A tool function appends to ``RAN`` only when it is executed: a call the gate stopped never shows up.
"""

from __future__ import annotations

from typing import Any

from pes_agent import tool

RAN: list[tuple[str, dict[str, Any]]] = []
"""Every call that reached a tool function, in order: what really ran, with which arguments."""


@tool(
    name="send_email",
    description="Send an email.",
    input_schema={
        "type": "object",
        "properties": {
            "to": {"type": "string", "description": "Email address of the recipient.", "x-target": True},
            "subject": {"type": "string", "description": "Subject line."},
            "body": {"type": "string", "description": "Message text."},
        },
        "required": ["to", "subject", "body"],
        "additionalProperties": False,
    },
    side_effects=True,
)
def send_email(**args: Any) -> dict[str, Any]:
    RAN.append(("send_email", args))
    return {"sent": True}


@tool(
    name="webSearch",
    description="Search the web for a query.",
    input_schema={
        "type": "object",
        "properties": {"query": {"type": "string", "description": "The search query."}},
        "required": ["query"],
        "additionalProperties": False,
    },
)
def web_search(**args: Any) -> dict[str, Any]:
    RAN.append(("webSearch", args))
    return {"results": [{"url": "https://news.example.com/a"}, {"url": "https://blog.example.org/b"}]}


@tool(
    name="webExtract",
    description="Extract pages by URL.",
    input_schema={
        "type": "object",
        "properties": {
            "urls": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "description": "URLs to extract.",
            }
        },
        "required": ["urls"],
        "additionalProperties": False,
    },
)
def web_extract(**args: Any) -> dict[str, Any]:
    RAN.append(("webExtract", args))
    return {"pages": len(args["urls"])}
