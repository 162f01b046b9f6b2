"""Deterministic stand-ins for a web search and a page extractor, used by `config/demo.yaml`.

They compute their answers from their arguments (no network), so the replayed conversation runs
through the real gate, executor and state store.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field

from pes_agent.tools.decorators import tool


def _slug(text: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-").split("-")
    return "-".join(words[:6])


@tool(
    name="webSearch",
    description="Search the web and return a ranked list of results (title, url, snippet) for a query.",
    input_schema={
        "type": "object",
        "properties": {"query": {"type": "string", "description": "The search query."}},
        "required": ["query"],
    },
    capabilities=["search"],
)
def web_search(query: str) -> dict[str, object]:
    slug = _slug(query)
    return {
        "query": query,
        "results": [
            {
                "rank": 1,
                "title": f"{query} - Science News",
                "url": f"https://news.example.com/science/{slug}",
                "snippet": f"Latest reporting on {query}.",
            },
            {
                "rank": 2,
                "title": f"{query}: an analysis",
                "url": f"https://blog.example.org/{slug}-analysis",
                "snippet": f"In-depth analysis of {query}.",
            },
            {
                "rank": 3,
                "title": f"{query} (encyclopedia)",
                "url": f"https://wiki.example.net/wiki/{slug}",
                "snippet": f"Reference article about {query}.",
            },
        ],
    }


@tool(
    name="webExtract",
    description="Fetch one or more web pages by URL and return their extracted main text content.",
    input_schema={
        "type": "object",
        "properties": {
            "urls": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "description": "URLs of the pages to extract.",
            }
        },
        "required": ["urls"],
    },
    capabilities=["fetch"],
)
def web_extract(urls: list[str]) -> dict[str, object]:
    findings = (
        "The article reports three key findings: (1) early galaxies formed faster than models predicted; "
        "(2) water vapour was detected in a rocky exoplanet atmosphere; (3) new images resolve "
        "star-forming regions in unprecedented detail."
    )
    return {
        "pages": [
            {"url": u, "title": f"Page {i + 1}", "content": f"Main text extracted from {u}. {findings}"}
            for i, u in enumerate(urls)
        ]
    }


@tool
def calculator(expression: Annotated[str, Field(description="Arithmetic such as `(2 + 3) * 4`.")]) -> float:
    """Evaluate an arithmetic expression with + - * / ** and parentheses."""
    from pes_agent.demo.arith import evaluate

    return evaluate(expression)


DEMO_TOOLS = [web_search, web_extract]
