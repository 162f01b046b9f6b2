"""Guided prompts: planning, tool steps and the answer for a small model that picks, not writes.

In guided mode (``providers.<name>.guided``, on by default for ``llamacpp``) each call asks for as
little as possible and its reply schema turns every decision into a choice:

- planning: the query's parts are listed by the agent; the model chooses one tool (or "none") per
  part. The plan's length is the number of parts that need a tool, never more.
- a tool step: the model fills the arguments of one tool, each a value found in this step's part of
  the query, in earlier results, or (failing both) anywhere in the query (see ``grounding``).
- the answer: one short sentence; the agent checks that it states the results.

Every prompt starts with the same system message and ``Query: ...``, so a local model reuses its
evaluated prefix across the calls of a run.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from pes_agent.guided.arguments import (
    EarlierResult,
    guided_arguments_schema,
)
from pes_agent.guided.choices import (
    best_fitting,
    can_ground,
    last_sentence,
    lead_scores,
    tool_options,
)
from pes_agent.guided.codes import coded
from pes_agent.guided.dataflow import ToolShape, implied_steps, suppliable
from pes_agent.guided.grounding import (
    holds_data,
)
from pes_agent.guided.language import language
from pes_agent.guided.quotes import without_quotes
from pes_agent.guided.references import References, fed, names_output, part_scores, references
from pes_agent.guided.shapes import gives_number
from pes_agent.guided.words import common_words, name_words, stems
from pes_agent.llm.markers import sanitize_user_text
from pes_agent.llm.types import Message, PromptRequest
from pes_agent.prompts.templates import (
    GUIDED_PLANNING,
    GUIDED_STEP,
    GUIDED_SYNTHESIS,
    GUIDED_SYSTEM,
)
from pes_agent.prompts.views import PromptSettings, clip

__all__ = [
    "NO_TOOL",
    "build_guided_planning",
    "build_guided_step",
    "build_guided_synthesis",
    "guided_plan_schema",
]

NO_TOOL = "none"
"""The planning choice for a part that needs no tool."""
CODE_WEIGHT = 3
"""Weight of a code the part quotes that only this tool's pattern takes (``codes``): as much as an
option it names (``choices.tool_scores``)."""
CHAIN_EVIDENCE = 2
"""Own evidence a tool needs before the fields its implied steps give count for it: the part's lead
word, an option it names, or two words. One plain word ("from one unit to another") is no reason to
plan a conversion of the calories a recipe lookup finds."""
RESULT_CLIP = 200
"""Characters of an earlier result shown in a step prompt or the answer prompt."""


def _system(settings: PromptSettings) -> Message:
    return Message(role="system", content=GUIDED_SYSTEM.substitute(persona=settings.persona))


def guided_plan_schema(
    parts: Sequence[str],
    tools: Mapping[str, str],
    schemas: Mapping[str, Mapping[str, Any]] | None = None,
    outputs: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """One property per part, in order, each a choice among the tools whose required values the
    part can supply (``grounding.can_ground``, given their input ``schemas``, or through the steps
    it implies, ``dataflow``) and, among those, the ones the part's words point to
    (``choices.tool_scores``, with ``references.part_scores``), ties broken by what the part holds
    (``choices.best_fitting``): the plan in as few tokens as it takes to name the tools.

    With the tools' declared ``outputs``, a tool is scored together with the fields its implied steps
    give it: "What is the weather in the capital of Japan?" points to the weather with the capital
    looked up first. Of tools the words tie on, the one the part opens with is offered ("What is the
    weather ..."), then the one needing the fewest implied steps.

    A part that shares no word with any tool and holds no data (no number, quote or date) to act on
    gets no tool ("none", decided here): offered as an option, a small model picks it everywhere,
    and left to the model such a part gets an arbitrary tool ("What is the weather like?" counted
    its words).
    """
    properties: dict[str, dict[str, Any]] = {}
    options = tool_options(schemas)
    # a tool's words: its name, its description and the names of its inputs, each once (a
    # description that lists its inputs again says no more than one that does not)
    inputs = {n: _spaced(s.get("properties") or ()) for n, s in (schemas or {}).items()}
    shapes = _shapes(schemas, outputs, tools)
    for i, part in enumerate(parts):
        before = " ".join(parts[:i])
        earlier = {n for p in parts[:i] for n in properties[p]["enum"]}
        # inputs an earlier part's tool outputs under their names: the value flows from that result
        # (``earlier`` holds every tool an earlier part was offered: the model picks among them later)
        flow = (
            {n: fed(shapes[n], [shapes[e] for e in earlier if e in shapes]) for n in tools if n in shapes}
            if shapes
            else {}
        )
        fitting = {
            n: s
            for n, s in tools.items()
            if schemas is None
            or n not in schemas
            or can_ground(schemas[n], part, before)
            or (shapes is not None and suppliable(n, part, before, shapes))
            or (bool(flow.get(n)) and can_ground(_less(schemas[n], flow[n]), part, before))
        }
        offered = fitting or tools
        texts, words = dict(offered), dict(options)
        chains: dict[str, int] = {}
        producers: dict[str, list[str]] = {}
        # what the part says of earlier parts' results is data it acts on: no evidence for a tool
        # that would find it again
        said = references(part, earlier, shapes) if shapes is not None else References(part)
        affinity = {n: len(f) for n, f in flow.items() if f}
        scores = partial(part_scores, part, said, inputs=inputs, shapes=shapes, affinity=affinity)
        # a code only one tool's pattern takes ("room LR-2204") names that tool as an option would
        codes = (
            {
                n: CODE_WEIGHT * c
                for n, c in coded(part, {n: schemas[n] for n in offered if n in schemas}).items()
            }
            if schemas
            else {}
        )
        own = _plus(scores(offered, options), codes)
        if shapes is not None:
            # a tool the part's words point to, scored with the words of the steps it implies
            for name in (n for n in offered if own[n] >= CHAIN_EVIDENCE):
                steps = implied_steps(name, part, before, shapes) if name in shapes else []
                chains[name] = max(len(steps), 1)
                producers[name] = [s.tool for s in steps[:-1] if s.tool in offered]
                # the tool's words, and of each step it implies the producer and the field it gives
                found = " ".join(
                    f"{steps[b.producer].tool} {b.path}"
                    for s in steps
                    for b in s.bindings
                    if b.producer is not None
                )
                texts[name] = f"{name} {tools.get(name, '')} {found}"
                words[name] = options.get(name, "")
        scored = _plus(scores(texts, words), codes)
        if shapes is not None and language().asks_amount(last_sentence(part)):
            # "how much", "what would … come to": a number answers it, so a tool whose declared output
            # holds none is not the part's tool, when one that gives a number is pointed to at all (a
            # resort lookup whose description speaks of lift passes is no price of passes); it may
            # still be a step the answering tool implies
            mute = {n for n in scored if n in shapes and gives_number(shapes[n]) is False}
            if any(scored[n] > 0 for n in scored if n not in mute):
                scored = {n: s for n, s in scored.items() if n not in mute}
                producers = {n: [p for p in ps if p not in mute] for n, ps in producers.items()}
        best = max(scored.values(), default=0)
        if best > 0:
            choices = [n for n, score in scored.items() if score == best]
        else:  # no word points anywhere: any tool, when the part holds data to act on
            choices = list(texts) if holds_data(part) else []
        common = common_words(stems(f"{n} {about}") for n, about in tools.items())
        part_words = set(stems(without_quotes(part)))  # quoted text is data, as in the scores
        said_of = {n: set(stems(f"{n} {about}")) for n, about in offered.items()}
        distinct = {n: said & part_words - common for n, said in said_of.items()}
        # a producer whose output the part names whole is what the part asks for, when the tool it
        # feeds has no word of the part the producer does not say too
        asking = {
            n
            for n in offered
            if shapes is not None and n in shapes and names_output(part, shapes[n], ids=False)
        }
        choices = _uncarried(choices, producers, own, distinct, {n: said_of[n] for n in asking})
        # (not the results of earlier parts the part names: "the square of the EMI" asks for no EMI)
        anew = {n for n in offered if n in shapes and names_output(said.text, shapes[n])} if shapes else set()
        choices = _answering(choices, producers, anew)
        if chains and len(choices) > 1:
            # of tools the words tie on: the one the part opens with ("What is the weather ..."), then
            # the one that needs the fewest implied steps to do it
            asked = lead_scores(part, {n: offered[n] for n in choices})
            asked |= lead_scores(said.text, {n: offered[n] for n in choices if n in said.again})
            top = max(asked.values())
            choices = [n for n in choices if asked[n] == top]
            fewest = min(chains.get(n, 1) for n in choices)
            choices = [n for n in choices if chains.get(n, 1) == fewest]
        if schemas is not None:  # near neighbours the words cannot tell apart: what the part holds can
            choices = best_fitting(choices, schemas, part, before)
        properties[part] = {"enum": choices or [NO_TOOL]}
    return {
        "type": "object",
        "properties": properties,
        "required": list(parts),
        "additionalProperties": False,
    }


def _plus(scores: dict[str, int], extra: Mapping[str, int]) -> dict[str, int]:
    return {n: s + extra.get(n, 0) for n, s in scores.items()}


def _less(schema: Mapping[str, Any], given: Collection[str]) -> dict[str, Any]:
    """``schema`` with the ``given`` arguments no longer required."""
    return {**schema, "required": [r for r in schema.get("required") or () if r not in given]}


def _spaced(names: Iterable[str]) -> str:
    """Argument names as words: ``loan_term`` and ``returnDate`` both say two."""
    return " ".join(" ".join(name_words(n)) for n in names)


def _uncarried(
    choices: list[str],
    producers: Mapping[str, list[str]],
    own: Mapping[str, int],
    distinct: Mapping[str, set[str]],
    asked: Mapping[str, set[str]],
) -> list[str]:
    """A tool that won on the words of a step it implies, when that step's tool alone scores
    higher, gives way to it: "Find the lyrics of a song …" is the lyrics tool, not a song search fed
    by a lyrics lookup (the chain counted "lyrics" for the search). A tie keeps the chain ("the GCD
    of their age and 36" is the GCD fed by the age, not the age), unless the part says no word of
    the tool's own that few tools share (``distinct``): "Calculate the area of a rectangle …" is the
    area, not a shipping cost fed by it, though "calculate" and the words alike score both. And a
    producer whose output the part names whole (``asked``, no id) wins whatever the scores, when the
    part says no word of the fed tool the producer does not say too: "Calculate the total sales for
    the product 'XYZ' between …" is the sales report (``total_sales``), not a sales tax fed by it."""
    out: list[str] = []
    for name in choices:
        better = [
            p
            for p in producers.get(name, ())
            if own.get(p, 0) > own.get(name, 0)
            or (own.get(p, 0) == own.get(name, 0) and distinct.get(p) and not distinct.get(name))
            or (p in asked and distinct.get(p) and distinct.get(name, set()) <= asked[p])
        ]
        out.append(max(better, key=lambda p: own.get(p, 0)) if better else name)
    return list(dict.fromkeys(out))


def _answering(choices: list[str], producers: Mapping[str, list[str]], asking: Collection[str]) -> list[str]:
    """A tool chosen whose output the part does not name gives way to the tool it feeds whose output
    the part names whole: "put in an adoption application for him" is the application (its
    ``application_id``), with the list of animals it needs looked up first, not that list alone."""
    out = []
    for name in choices:
        fed_by = [n for n in asking if name in producers.get(n, ())]
        out.append(fed_by[0] if name not in asking and len(fed_by) == 1 else name)
    return list(dict.fromkeys(out))


def _shapes(
    schemas: Mapping[str, Mapping[str, Any]] | None,
    outputs: Mapping[str, Mapping[str, Any]] | None,
    tools: Mapping[str, str],
) -> dict[str, ToolShape] | None:
    """The tools as data flow reads them; None when no tool declares an output (nothing to wire)."""
    if schemas is None or not outputs:
        return None
    return {
        n: ToolShape(name=n, input_schema=s, output_schema=outputs.get(n), description=tools.get(n, ""))
        for n, s in schemas.items()
    }


def build_guided_planning(
    query: str,
    parts: Sequence[str],
    manifesto: Sequence[str],
    tools: Mapping[str, str],
    settings: PromptSettings,
    schemas: Mapping[str, Mapping[str, Any]] | None = None,
    outputs: Mapping[str, Mapping[str, Any]] | None = None,
) -> PromptRequest:
    """``tools``: name → one-line description of each tool the plan may use; ``schemas``: their
    input schemas (a tool whose values a part cannot supply is not offered to it); ``outputs``: the
    output schemas the tools declare (steps a part implies, ``dataflow``)."""
    user = GUIDED_PLANNING.substitute(query=sanitize_user_text(query), tools="\n".join(manifesto) or "(none)")
    return PromptRequest(
        phase="planning",
        step_id=None,
        messages=(_system(settings), Message(role="user", content=user)),
        response_schema=guided_plan_schema(parts, tools, schemas, outputs),
    )


def build_guided_step(
    query: str,
    part: str,
    *,
    step_id: str,
    tool: str,
    description: str,
    input_schema: Mapping[str, Any],
    earlier: Sequence[EarlierResult],
    settings: PromptSettings,
    avoid: Mapping[str, Any] | None = None,
    bindings: Mapping[str, str] | None = None,
    part_tools: Mapping[str, str] | None = None,
) -> PromptRequest:
    """``part_tools``: the other tools planned for this part (the steps it implies), name →
    description: their words name work, not values."""
    others = part_tools or {}
    schema = guided_arguments_schema(
        input_schema,
        part,
        query,
        earlier,
        avoid,
        bindings,
        " ".join([tool, description, *(f"{n} {d}" for n, d in others.items())]),
        tool_names=(tool, *others),
    )
    previous = "".join(f'Result of "{r.description}": {clip(r.text, RESULT_CLIP)}\n' for r in earlier)
    user = GUIDED_STEP.substitute(
        query=sanitize_user_text(query),
        previous=f"\n{previous}" if previous else "",
        part=sanitize_user_text(part),
        tool=tool,
        description=description,
        arguments=_argument_lines(schema, input_schema),
    )
    return PromptRequest(
        phase="execution",
        step_id=step_id,
        messages=(_system(settings), Message(role="user", content=user)),
        tools=(tool,),
        response_schema=schema,
    )


def build_guided_synthesis(
    query: str, results: Sequence[tuple[str, str]], settings: PromptSettings
) -> PromptRequest:
    """``results``: (a step's part of the query, what it found), in order."""
    lines = "\n".join(f"- {part}: {clip(found, RESULT_CLIP)}" for part, found in results) or "(no results)"
    user = GUIDED_SYNTHESIS.substitute(query=sanitize_user_text(query), results=lines)
    return PromptRequest(
        phase="synthesis",
        step_id=None,
        messages=(_system(settings), Message(role="user", content=user)),
    )


def _argument_lines(schema: Mapping[str, Any], original: Mapping[str, Any]) -> str:
    """Names and descriptions only: no types, no examples, nothing a model could copy as a value."""
    props = original.get("properties") or {}
    out = []
    for name in schema.get("properties") or {}:
        about = props.get(name, {}).get("description") if isinstance(props.get(name), Mapping) else None
        out.append(
            f"{name} ({about.strip().rstrip('.')})" if isinstance(about, str) and about.strip() else name
        )
    return "; ".join(out) or "(none)"
