"""A tool that needs a person's approval, so `POST /threads/{id}/resume` has something to decide.

Named in `service.yaml` as `examples.service.tools:publish_note`, which imports when uvicorn runs from
the repository root (its working directory is on `sys.path`).
"""

from __future__ import annotations

from pes_agent import tool

PUBLISHED: list[dict[str, str]] = []
"""What this process published; a real tool would call the system that owns the notes."""


@tool(requires_approval=True, side_effects=True)
def publish_note(title: str, body: str) -> dict[str, str]:
    """Publish a short note with a title and a body, once a person has approved it."""
    PUBLISHED.append({"title": title, "body": body})
    return {"published": title}
