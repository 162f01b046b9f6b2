"""The argument gate: what happens to a model's tool call between the parser and the executor.

It makes no model call and has no side effects: it returns the call as repaired, every repair (one
``ARG_REPAIR`` event each) and one outcome for the agent loop to act on, so that one bad call gets
one corrective voice. The order follows RECOVERY.md ("The gate, in order") with two deliberate
swaps. References (step 5) are resolved before values are normalised (step 4), so a reference
string is never itself coerced (``"$step_1.urls"`` must not become ``["$step_1.urls"]``) and a
resolved value gets the same lossless fixes as a typed one. Placeholders (step 7) are taken out
before defaults (step 6) apply, and defaults fill only keys the model did not send: a value the
gate takes out (null, placeholder, invalid) is never replaced by a default.

A valid call (exact allowed name, declared keys, strictly typed values, nothing that looks like a
reference, a value alias or a placeholder) takes a fast path and runs exactly as sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pes_agent.config import GateConfig
from pes_agent.tools.normalize import (
    NO_DEFAULT,
    FieldInfo,
    Repair,
    ToolPlan,
    build_plan,
    map_keys,
    match_tool_name,
    normalize_value,
    unwrap_envelope,
)
from pes_agent.tools.placeholders import Grounding, PlaceholderRules, reserved_host, target_grounded
from pes_agent.tools.references import Unresolved, find_references, reference_text, resolve
from pes_agent.tools.registry import ToolRegistry
from pes_agent.tools.spec import ToolCall
from pes_agent.tools.validation import ArgumentProblem, short, show

__all__ = ["ArgumentGate", "FieldNeed", "GateResult", "Grounding", "Repair"]

Outcome = Literal["execute", "refuse_tool", "fill", "clarify", "reask"]
NeedReason = Literal["missing", "placeholder", "enum_unmapped", "unresolved_reference"]
_REQUIRED_RULES = ("required", "dependentRequired")


@dataclass(frozen=True, kw_only=True)
class FieldNeed:
    """A value the model (arg-fill) or the user (clarification) must supply."""

    name: str
    description: str | None
    type: str | None
    """Plain words from the schema: ``string``, ``array of string``, ``integer or null``."""
    allowed: tuple[Any, ...] | None
    reason: NeedReason
    given: Any = None
    """What the call held (a placeholder, an unmapped value, a reference), or None when absent."""

    def to_dict(self) -> dict[str, Any]:
        """For events and prompts (``given`` stays out: it may be long or a model's leftover)."""
        data: dict[str, Any] = {"name": self.name, "description": self.description, "type": self.type}
        data["allowed"] = list(self.allowed) if self.allowed is not None else None
        data["reason"] = self.reason
        return data


@dataclass(frozen=True, kw_only=True)
class GateResult:
    outcome: Outcome
    call: ToolCall
    """The tool name resolved (when it could be) and the arguments after repairs. Fields listed in
    ``needs`` are absent from it: arg-fill or the user's answer adds them."""
    repairs: tuple[Repair, ...]
    needs: tuple[FieldNeed, ...]
    """For fill and clarify; for reask, also the fields whose references did not resolve."""
    message: str | None
    """Plain words: for the model (reask, refuse_tool, and fill when arg-fill is off) or the user
    (clarify)."""
    problems: tuple[ArgumentProblem, ...]
    """What is still wrong (empty on execute)."""


class ArgumentGate:
    """Deterministic repair and triage of tool calls. Schemas are read once per tool and cached."""

    def __init__(self, registry: ToolRegistry, config: GateConfig) -> None:
        self.registry = registry
        self.config = config
        self.placeholders = PlaceholderRules(config.placeholders)
        self._plans: dict[str, ToolPlan] = {}

    def plan(self, name: str) -> ToolPlan:
        spec = self.registry.get(name)
        if spec is None:
            raise KeyError(f"no tool named {name!r} is registered")
        plan = self._plans.get(name)
        if plan is None or plan.spec is not spec:
            plan = self._plans[name] = build_plan(spec)
        return plan

    def check(self, call: ToolCall, *, allowed: Sequence[str], grounding: Grounding) -> GateResult:
        """Repair what is certain and say what happens next. Never raises for a bad call."""
        if self._runs_as_sent(call, allowed, grounding):
            return GateResult(outcome="execute", call=call, repairs=(), needs=(), message=None, problems=())
        found, repair, elsewhere = self._resolve(call.tool_name, allowed)
        if found is None:
            usable = sorted(n for n in dict.fromkeys(allowed) if n in self.registry)
            hidden = [n for n in self.registry.names() if n not in usable]
            text = _refusal_text(call.tool_name, usable, elsewhere=elsewhere, hidden=hidden)
            return GateResult(
                outcome="refuse_tool", call=call, repairs=(), needs=(), message=text, problems=()
            )
        return _Check(self, self.plan(found), call, grounding, repair).run()

    def _runs_as_sent(self, call: ToolCall, allowed: Sequence[str], grounding: Grounding) -> bool:
        """The fast path: exact allowed name, nothing for a repair step to do, and valid."""
        name, args = call.tool_name, call.arguments
        if not (
            self.config.enabled and name in allowed and name in self.registry and isinstance(args, Mapping)
        ):
            return False
        return self._plain(self.plan(name), args, grounding) and self.registry.validator(name).is_valid(args)

    def _resolve(self, name: str, allowed: Sequence[str]) -> tuple[str | None, Repair | None, bool]:
        """Step 2: the allowed tool meant, the repair that names it, and whether ``name`` is a
        registered tool outside ``allowed`` (then it is refused, never bent into an allowed one)."""
        registered = self.registry.names()
        if not self.config.enabled:
            ok = name in allowed and name in self.registry
            return (name if ok else None), None, name in registered
        th, mg = self.config.fuzzy_threshold, self.config.fuzzy_margin
        match = match_tool_name(name, allowed, registered, th, mg)
        return match.name, match.repair, match.elsewhere

    def _plain(self, plan: ToolPlan, args: Mapping[str, Any], grounding: Grounding) -> bool:
        refs = bool(grounding.step_ids)
        for key, value in args.items():
            info = plan.fields.get(key)
            if info is None or not info.fits(value) or not self._plain_value(info, value, refs):
                return False
        return True

    def _plain_value(self, info: FieldInfo, value: Any, refs: bool) -> bool:
        if isinstance(value, str):
            return bool(value.strip()) and not self._suspect(info, value, refs)
        if isinstance(value, list):
            return bool(value) and not any(isinstance(v, str) and self._suspect(info, v, refs) for v in value)
        if isinstance(value, Mapping):
            return bool(value) and not (refs and "$" in json.dumps(value, default=str))
        return True

    def _suspect(self, info: FieldInfo, text: str, refs: bool) -> bool:
        if refs and "$" in text:
            return True
        if info.value_aliases and text.strip().lower() in info.value_aliases:
            return True
        return self.placeholders.matches(text)


class _Check:
    """The slow path for one call: working state, one method per gate step."""

    def __init__(
        self, gate: ArgumentGate, plan: ToolPlan, call: ToolCall, grounding: Grounding, repair: Repair | None
    ) -> None:
        self.gate = gate
        self.plan = plan
        self.cfg = gate.config
        self.call = call
        self.grounding = grounding
        self.repairs: list[Repair] = [repair] if repair is not None else []
        self.needs: dict[str, FieldNeed] = {}
        self.reasks: list[ArgumentProblem] = []
        self.unresolved: list[str] = []
        self.taken: dict[str, tuple[Any, NeedReason]] = {}
        self.blocked: set[str] = set()
        """Fields named by conflicting aliases: the reask covers them."""
        self.args: dict[str, Any] = {}

    def run(self) -> GateResult:
        raw = _object(self.call.arguments)
        if raw is None:
            self.reasks.append(_NOT_AN_OBJECT)
        else:
            self.args = raw
        if self.cfg.enabled and raw is not None:
            inner = unwrap_envelope(self.plan, self.args)
            if inner is not None:
                self.repairs.append(
                    Repair(field="", from_=self.args, to=inner, rule="unwrap_arguments", kind="safe")
                )
                self.args = inner
            self.keys()
            self.references()
            self.values()
            self.placeholders()
            self.defaults()
            self.grounded_enums()
        return self.finish()

    def keys(self) -> None:
        outcome = map_keys(self.plan, self.args, reject_unknown=self.cfg.unknown_keys == "reject")
        self.repairs.extend(outcome.repairs)
        self.args = outcome.arguments
        for name, keys in outcome.ambiguous:
            self.blocked.add(name)
            shown = " and ".join(f"`{k}`" for k in keys)
            text = f"{shown} both mean `{name}` but hold different values: send `{name}` once"
            self.reasks.append(ArgumentProblem(field=name, path=name, rule="ambiguous_alias", message=text))
        accepted = ", ".join(f"`{n}`" for n in self.plan.fields) or "none"
        for key in outcome.rejected:
            text = f"`{key}` is not an argument of `{self.plan.spec.name}` (its arguments: {accepted})"
            self.reasks.append(ArgumentProblem(field=key, path=key, rule="unknown_key", message=text))

    def references(self) -> None:
        g = self.grounding
        if not g.step_ids:
            return
        for key, value in list(self.args.items()):
            if not find_references(value, g.step_ids):
                continue
            found = resolve(value, g.step_outputs, g.step_results, pending=g.pending_steps)
            if found.unresolved:
                self.take(key, "unresolved_reference")
                self.unresolved.extend(_unresolved_line(key, u) for u in found.unresolved)
            else:
                self.repairs.append(
                    Repair(field=key, from_=value, to=found.value, rule="reference", kind="safe")
                )
                self.args[key] = found.value

    def values(self) -> None:
        th, mg = self.cfg.fuzzy_threshold, self.cfg.fuzzy_margin
        for key, value in list(self.args.items()):
            info = self.plan.fields.get(key)
            if info is None or info.fits(value) or _is_empty(value) or self.is_placeholder(info, value):
                continue  # empty values and placeholders are step 7's: taken out, or dropped
            outcome = normalize_value(info, value, key, th, mg)
            self.repairs.extend(outcome.repairs)
            self.args[key] = outcome.value
            if outcome.unmapped:
                self.take(key, "enum_unmapped")

    def placeholders(self) -> None:
        for key, info in self.plan.fields.items():
            if key not in self.args:
                continue
            value = self.args[key]
            must = info.required or key in self.plan.targets
            if value is None and not info.nullable:
                if must:
                    self.take(key, "missing")
                else:
                    self.drop(key, "drop_null")
            elif isinstance(value, str) and not value.strip():
                if info.required:
                    self.take(key, "missing")
            elif self.is_placeholder(info, value):
                if must:
                    self.take(key, "placeholder")
                else:
                    self.drop(key, "drop_placeholder", "placeholder")
            elif isinstance(value, (list, Mapping)) and not value and info.required:
                self.take(key, "placeholder")

    def is_placeholder(self, info: FieldInfo, value: Any) -> bool:
        """Whole values only (a string, or a whole list element), and never one that is grounded."""
        if isinstance(value, list):
            return any(self.is_placeholder(info.item or info, v) for v in value if isinstance(v, str))
        if not isinstance(value, str) or (info.enum is not None and value in info.enum):
            return False
        if not self.gate.placeholders.matches(value) or self.grounding.mentions(value):
            return False
        host = reserved_host(value.strip())
        return not (host and self.grounding.mentions(host))

    def defaults(self) -> None:
        """Optional fields the model did not send; never one the gate took out or a blocked one."""
        for key, info in self.plan.fields.items():
            if info.required or info.default is NO_DEFAULT or key in self.args or key in self.taken:
                continue
            if key in self.blocked:
                continue
            self.args[key] = json.loads(json.dumps(info.default))
            self.repairs.append(Repair(field=key, from_=None, to=self.args[key], rule="default", kind="safe"))

    def grounded_enums(self) -> bool:
        """A missing required enum whose allowed values the text names exactly one of."""
        filled = False
        for key, need in list(self.needs.items()):
            info = self.plan.fields.get(key)
            if need.reason not in ("missing", "placeholder") or info is None or not info.enum:
                continue
            if info.item is not None:
                continue
            found = [v for v in info.enum if isinstance(v, str) and self.grounding.mentions(v)]
            if len(found) == 1:
                self.args[key] = found[0]
                del self.needs[key]
                self.repairs.append(
                    Repair(field=key, from_=need.given, to=found[0], rule="grounded_enum", kind="semantic")
                )
                filled = True
        return filled

    def finish(self) -> GateResult:
        validate = self.gate.registry.validator(self.plan.spec.name).validate
        if self.cfg.enabled and self.plan.conditional:
            self.conditional_empties(validate)
        problems = validate(self.args)
        if self.cfg.enabled:
            if self.drop_rejected_empties(problems):
                problems = validate(self.args)
            required = [p for p in problems if p.rule in _REQUIRED_RULES]
            if required:
                self.classify(required)
                if self.grounded_enums():
                    problems = validate(self.args)
        self.classify(problems)
        call = ToolCall(call_id=self.call.call_id, tool_name=self.plan.spec.name, arguments=self.args)
        needs = self.sorted_needs()
        name = self.plan.spec.name
        if self.clarify(needs):
            return self.result("clarify", call, _clarify_text(name, needs))
        if self.reasks or self.unresolved:
            text = _reask_text(name, self.reasks, needs, self.unresolved, self.args)
            return self.result("reask", call, text)
        if needs:
            return self.result("fill", call, _fill_text(name, needs))
        return self.result("execute", call, None)

    def classify(self, problems: Sequence[ArgumentProblem]) -> None:
        """Missing values and unmapped enum values are needs; everything else is for the reask.

        A field that also breaks another rule (a wrong type) is a reask: no lossless fix applies.
        """
        other = {p.field for p in problems if p.rule not in _REQUIRED_RULES and p.rule != "enum"}
        for p in problems:
            name = p.field
            if name is not None and (
                name in self.needs or (name in self.blocked and p.rule in _REQUIRED_RULES)
            ):
                continue
            if name is not None and p.path == name and p.rule in _REQUIRED_RULES:
                given, reason = self.taken.get(name, (None, "missing"))
                self.need(name, reason, given)
            elif name is not None and p.rule == "enum" and name not in other and _item_path(name, p.path):
                self.take(name, "enum_unmapped")
            elif p not in self.reasks:
                self.reasks.append(p)

    def conditional_empties(self, validate: Callable[[Mapping[str, Any]], Sequence[ArgumentProblem]]) -> None:
        """An empty optional value that a conditional rule makes required is missing (F2)."""
        empty = [
            k
            for k, v in self.args.items()
            if k in self.plan.fields and k not in self.plan.required and _is_empty(v)
        ]
        if empty:
            probe = {k: v for k, v in self.args.items() if k not in empty}
            for p in validate(probe):
                if p.rule in _REQUIRED_RULES and p.field in empty and p.path == p.field:
                    self.take(p.field, "missing")

    def drop_rejected_empties(self, problems: Sequence[ArgumentProblem]) -> bool:
        """An empty optional value the schema rejects (``minLength``) reads as "not given"."""
        fields = self.plan.fields
        bad = {
            p.field for p in problems if p.field is not None and p.field in fields and p.field in self.args
        }
        bad = {k for k in bad if k not in self.plan.required and _is_empty(self.args[k])}
        for key in sorted(bad):
            self.drop(key, "drop_empty")
        return bool(bad)

    def clarify(self, needs: Sequence[FieldNeed]) -> bool:
        """A side effect's target that is missing and nowhere to be found: only the user can say."""
        return any(
            need.name in self.plan.targets
            and need.reason in ("missing", "placeholder")
            and not target_grounded(self.plan.fields[need.name], self.grounding)
            for need in needs
        )

    def need(self, name: str, reason: NeedReason, given: Any = None) -> None:
        if name in self.needs:
            return
        info = self.plan.fields.get(name)
        self.needs[name] = FieldNeed(
            name=name,
            description=info.description if info else None,
            type=info.type_words() if info else None,
            allowed=info.allowed() if info else None,
            reason=reason,
            given=given,
        )

    def take(self, key: str, reason: NeedReason) -> None:
        """Out of the call and into the needs: arg-fill or the user supplies it."""
        value = self.args.pop(key, None)
        self.taken[key] = (value, reason)
        self.need(key, reason, value)

    def drop(self, key: str, rule: str, reason: NeedReason = "missing") -> None:
        """Out of the call, as if never sent (an optional field): no need, and no default.
        Should a conditional rule require it after all, ``reason`` says why it is missing."""
        value = self.args.pop(key)
        self.repairs.append(Repair(field=key, from_=value, to=None, rule=rule, kind="safe"))
        self.taken[key] = (value if reason == "placeholder" else None, reason)

    def sorted_needs(self) -> tuple[FieldNeed, ...]:
        names = list(self.plan.fields)
        return tuple(
            sorted(self.needs.values(), key=lambda n: names.index(n.name) if n.name in names else len(names))
        )

    def result(self, outcome: Outcome, call: ToolCall, text: str | None) -> GateResult:
        needs = self.sorted_needs()
        problems = () if outcome == "execute" else (*self.reasks, *(_need_problem(n) for n in needs))
        repairs = tuple(self.repairs)
        return GateResult(
            outcome=outcome, call=call, repairs=repairs, needs=needs, message=text, problems=problems
        )


_NOT_AN_OBJECT = ArgumentProblem(
    field=None, path="", rule="type", message="the arguments must be a JSON object"
)


def _object(raw: Any) -> dict[str, Any] | None:
    """Arguments as a dict; JSON text of an object (double-encoded arguments) is read."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return None
    return {str(k): v for k, v in raw.items()} if isinstance(raw, Mapping) else None


def _item_path(name: str, path: str) -> bool:
    """``name`` itself or one of its items (``tags[2]``): the places the gate maps enum values."""
    return path == name or re.fullmatch(rf"{re.escape(name)}\[\d+\]", path) is not None


def _is_empty(value: Any) -> bool:
    return (isinstance(value, str) and not value.strip()) or (
        isinstance(value, (list, Mapping)) and not value
    )


# Messages. Plain words, one line per field, never a validation dump.

_NO_GOT = frozenset(
    {"required", "dependentRequired", "unknown_key", "ambiguous_alias", "false", "additionalProperties"}
)


def _refusal_text(raw: Any, names: Sequence[str], *, elsewhere: bool, hidden: Sequence[str]) -> str:
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


def _need_line(need: FieldNeed) -> str:
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


def _reask_text(
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
    lines.extend(_need_line(n) for n in needs if n.reason != "unresolved_reference")
    return "\n".join(lines)


def _fill_text(tool: str, needs: Sequence[FieldNeed]) -> str:
    lines = [f"The call to `{tool}` was not run: it needs real values for these arguments:"]
    lines.extend(_need_line(n) for n in needs)
    lines.append(f"Call `{tool}` again with them, taken from the request or the earlier results.")
    return "\n".join(lines)


def _clarify_text(tool: str, needs: Sequence[FieldNeed]) -> str:
    items = "; ".join(
        f"`{n.name}`" + (f" ({n.description.strip().rstrip('.')})" if n.description else "") for n in needs
    )
    return f"`{tool}` needs more information before it can run: {items}."


def _unresolved_line(key: str, miss: Unresolved) -> str:
    ref = miss.reference
    line = f"`{key}`: `{ref.text}` does not resolve: {miss.reason}."
    if miss.available:
        paths = ", ".join(f"`{reference_text(ref.step_id, p)}`" for p in miss.available)
        line += f" Paths that exist: {paths}."
    return line


def _need_problem(need: FieldNeed) -> ArgumentProblem:
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
