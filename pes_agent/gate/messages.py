"""The gate's wording: refusals, reasks, arg-fill requests and clarification questions.

Plain words, one line per field, never a validation dump.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pes_agent.gate.references import Unresolved, reference_text
from pes_agent.gate.result import FieldNeed
from pes_agent.tools.validation import ArgumentProblem, short, show

_NO_GOT = frozenset(
    {"required", "dependentRequired", "unknown_key", "ambiguous_alias", "false", "additionalProperties"}
)


def refusal_text(raw: Any, names: Sequence[str], *, elsewhere: bool, hidden: Sequence[str]) -> str:
    """Lists exactly ``names``. The bad name is echoed only when that cannot mention a tool the
    step may not use (``hidden``): a refusal must never point the model at one."""
    shown = short(raw.strip(), 60) if isinstance(raw, str) else ""
    if any(h.lower() in shown.lower() for h in hidden):
        shown = ""
    if elsewhere:
        head = "The tool you called may not be used in this step."
    elif not shown:
        head = "The call does not name a tool of this step."
    else:
        head = f"There is no tool `{shown}` in this step."
    if not names:
        return f"{head} No tools may be called in this step: answer in text instead."
    return f"{head} Call one of: {', '.join(f'`{n}`' for n in names)}."


def ambiguous_alias_problem(name: str, keys: Sequence[str]) -> ArgumentProblem:
    """Several keys that all mean ``name`` but disagree: the model must send it once."""
    shown = " and ".join(f"`{k}`" for k in keys)
    text = f"{shown} both mean `{name}` but hold different values: send `{name}` once"
    return ArgumentProblem(field=name, path=name, rule="ambiguous_alias", message=text)


def unknown_key_problem(key: str, tool: str, fields: Iterable[str]) -> ArgumentProblem:
    """A key the tool does not declare, when the config rejects rather than strips them."""
    accepted = ", ".join(f"`{n}`" for n in fields) or "none"
    text = f"`{key}` is not an argument of `{tool}` (its arguments: {accepted})"
    return ArgumentProblem(field=key, path=key, rule="unknown_key", message=text)


def need_line(need: FieldNeed) -> str:
    """``- `title` (string): what the task is. Got a placeholder (TODO).`` — one line per field."""
    if need.reason == "placeholder" and need.given is not None:
        status = f"got a placeholder ({show(need.given)})"
    elif need.reason == "enum_unmapped" and need.given is not None:
        status = f"got {show(need.given)}, which is not allowed"
    else:
        status = "missing"
    line = f"- `{need.name}`" + (f" ({need.type})" if need.type else "") + ": "
    if need.description:
        line += f"{need.description.strip().rstrip('.')}. {status[0].upper()}{status[1:]}."
    else:
        line += f"{status}."
    if need.allowed:
        line += f" Allowed: {', '.join(show(v) for v in need.allowed)}."
    return line


def reask_text(
    tool: str,
    problems: Sequence[ArgumentProblem],
    needs: Sequence[FieldNeed],
    unresolved: Sequence[str],
    args: Mapping[str, Any],
) -> str:
    """Every problem at once, model-fixable ones and missing values alike: one corrective voice."""
    lines = [f"The call to `{tool}` was not run. Fix these arguments and call it again:"]
    for p in problems:
        got = _value_at(args, p.path) if p.rule not in _NO_GOT else _ABSENT
        lines.append(f"- {p.message}" + (f" (got {show(got)})" if got is not _ABSENT else ""))
    lines.extend(f"- {line}" for line in unresolved)
    lines.extend(need_line(n) for n in needs if n.reason != "unresolved_reference")
    return "\n".join(lines)


def fill_text(tool: str, needs: Sequence[FieldNeed]) -> str:
    lines = [f"The call to `{tool}` was not run: it needs real values for these arguments:"]
    lines.extend(need_line(n) for n in needs)
    lines.append(f"Call `{tool}` again with them, taken from the request or the earlier results.")
    return "\n".join(lines)


def clarify_text(tool: str, needs: Sequence[FieldNeed]) -> str:
    items = "; ".join(
        f"`{n.name}`" + (f" ({n.description.strip().rstrip('.')})" if n.description else "") for n in needs
    )
    return f"`{tool}` needs more information before it can run: {items}."


def unresolved_line(key: str, miss: Unresolved) -> str:
    ref = miss.reference
    line = f"`{key}`: `{ref.text}` does not resolve: {miss.reason}."
    if miss.available:
        paths = ", ".join(f"`{reference_text(ref.step_id, p)}`" for p in miss.available)
        line += f" Paths that exist: {paths}."
    return line


def need_problem(need: FieldNeed) -> ArgumentProblem:
    rule, text = {
        "missing": ("required", "is required"),
        "placeholder": ("placeholder", "holds a placeholder instead of a real value"),
        "enum_unmapped": ("enum", "must be one of the allowed values"),
        "unresolved_reference": ("unresolved_reference", "refers to a value that does not exist"),
    }[need.reason]
    return ArgumentProblem(field=need.name, path=need.name, rule=rule, message=f"`{need.name}` {text}")


_ABSENT: Any = object()
_PATH_PART = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def _value_at(args: Mapping[str, Any], path: str) -> Any:
    node: Any = args
    if not path:
        return _ABSENT
    for index, key in _PATH_PART.findall(path):
        if index and isinstance(node, list) and int(index) < len(node):
            node = node[int(index)]
        elif key and isinstance(node, Mapping) and key in node:
            node = node[key]
        else:
            return _ABSENT
    return node
