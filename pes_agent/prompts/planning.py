"""The planning prompt: the query and a manifesto of tools, never their schemas."""

from __future__ import annotations

from collections.abc import Sequence

from pes_agent.llm.markers import PLAN_END, PLAN_START, sanitize_user_text
from pes_agent.llm.types import Message, Phase, PromptRequest
from pes_agent.prompts.schemas import plan_reply_schema
from pes_agent.prompts.templates import FIND_TOOLS, PLANNING_SYSTEM, TOOLS_CHOSEN, TOOLS_NAMED
from pes_agent.prompts.views import HistoryTurn, PromptSettings, guidance_suffix, render_history


def build_planning(
    query: str,
    manifesto: str,
    settings: PromptSettings,
    *,
    history: Sequence[HistoryTurn] = (),
    tool_names: Sequence[str] = (),
    find_tools: bool = False,
) -> PromptRequest:
    """``manifesto``: the tool lines (``chosen_manifesto`` when retrieval chose them); ``find_tools``:
    the planner may reply ``{"findTools": [...]}`` instead of a plan, and the reply schema allows it."""
    user = settings.templates["planning"].substitute(
        tools=manifesto or "(no tools available)",
        history=render_history(history),
        query=sanitize_user_text(query),
        start=PLAN_START,
        end=PLAN_END,
    )
    return plan_request("planning", settings, user, tool_names, find_tools=find_tools)


def chosen_manifesto(lines: Sequence[str], *, total: int, find_tools: bool, named: Sequence[str] = ()) -> str:
    """The tool list when retrieval chose it: the lines, the ``named`` tools by name only, a note
    that they are so many of ``total``, and, while the planner may still ask for more, how to ask.
    Part of the ``$tools`` text, so a user's own planning template needs no new variable."""
    body = "\n".join(lines) or "(no tool matched the query)"
    if named:
        body += "\n" + TOOLS_NAMED.substitute(names=", ".join(named))
    note = TOOLS_CHOSEN.substitute(shown=len(lines) + len(named), total=total)
    if find_tools:
        note += " " + FIND_TOOLS.substitute(start=PLAN_START, end=PLAN_END)
    return f"{body}\n{note}"


def plan_request(
    phase: Phase, settings: PromptSettings, user: str, tool_names: Sequence[str], *, find_tools: bool = False
) -> PromptRequest:
    """A call that writes a plan (planning, refinement): the planner's system message, the user
    message, and the plan's reply schema with the allowed tool names."""
    system = PLANNING_SYSTEM.substitute(
        persona=settings.persona, guidance=guidance_suffix(settings.planning_guidance)
    )
    return PromptRequest(
        phase=phase,
        step_id=None,
        messages=(Message(role="system", content=system), Message(role="user", content=user)),
        response_schema=plan_reply_schema(tool_names, find_tools=find_tools),
    )
