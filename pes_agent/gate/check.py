"""The gate's slow path: one call that is not valid as sent, taken through the repair steps.

The order follows docs/recovery.md ("The gate, in order") with two deliberate swaps. References
(step 5) are resolved before values are normalised (step 4), so a reference string is never itself
coerced (``"$step_1.urls"`` must not become ``["$step_1.urls"]``) and a resolved value gets the
same lossless fixes as a typed one. Placeholders (step 7) are taken out before defaults (step 6)
apply, and defaults fill only keys the model did not send: a value the gate takes out (null,
placeholder, invalid) is never replaced by a default. Defaults apply to every call, the ones that
take the fast path too (docs/recovery.md, "Rules made exact" 1): ``add_defaults`` is shared.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from pes_agent.config import GateConfig
from pes_agent.gate.messages import (
    ambiguous_alias_problem,
    clarify_text,
    fill_text,
    need_problem,
    reask_text,
    unknown_key_problem,
    unresolved_line,
)
from pes_agent.gate.normalize import Repair, map_keys, normalize_value, unwrap_envelope
from pes_agent.gate.placeholders import Grounding, PlaceholderRules, reserved_host, target_grounded
from pes_agent.gate.references import find_references, resolve
from pes_agent.gate.result import FieldNeed, GateResult, NeedReason, Outcome
from pes_agent.gate.schema_plan import FieldInfo, ToolPlan
from pes_agent.tools.spec import ToolCall
from pes_agent.tools.validation import ArgumentProblem, SchemaValidator, not_an_object

_REQUIRED_RULES = ("required", "dependentRequired")


class CallCheck:
    """The slow path for one call: working state, one method per gate step.

    Given what it needs of the gate (its config, placeholder rules and the tool's validator) rather
    than the gate itself, so that this module does not look back at the one that calls it.
    """

    def __init__(
        self,
        config: GateConfig,
        placeholder_rules: PlaceholderRules,
        validator: SchemaValidator,
        plan: ToolPlan,
        call: ToolCall,
        grounding: Grounding,
        repair: Repair | None,
    ) -> None:
        self.plan = plan
        self.cfg = config
        self.placeholder_rules = placeholder_rules
        self.validator = validator
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
        sent = self.call.non_object_arguments
        raw = _object(self.call.arguments) if sent is None else None
        if raw is None:
            self.reasks.append(not_an_object(self.call.arguments if sent is None else sent, self.plan.fields))
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
            self.reasks.append(ambiguous_alias_problem(name, keys))
        for key in outcome.rejected:
            self.reasks.append(unknown_key_problem(key, self.plan.spec.name, self.plan.fields))

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
                self.unresolved.extend(unresolved_line(key, u) for u in found.unresolved)
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
        if not self.placeholder_rules.matches(value) or self.grounding.mentions(value):
            return False
        host = reserved_host(value.strip())
        return not (host and self.grounding.mentions(host))

    def defaults(self) -> None:
        """Optional fields the model did not send; never one the gate took out or a blocked one."""
        self.repairs.extend(add_defaults(self.plan, self.args, skip=self.taken.keys() | self.blocked))

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
        validate = self.validator.validate
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
            # Only the target goes to the user; the other fields follow the ordinary rules (arg-fill
            # after the answer), so the user is never asked what the model can write itself.
            targets = tuple(n for n in needs if n.name in self.plan.targets)
            self.needs = {n.name: n for n in targets}
            return self.result("clarify", call, clarify_text(name, targets))
        if self.reasks or self.unresolved:
            text = reask_text(name, self.reasks, needs, self.unresolved, self.args)
            return self.result("reask", call, text)
        if needs:
            return self.result("fill", call, fill_text(name, needs))
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
        problems = () if outcome == "execute" else (*self.reasks, *(need_problem(n) for n in needs))
        repairs = tuple(self.repairs)
        return GateResult(
            outcome=outcome, call=call, repairs=repairs, needs=needs, message=text, problems=problems
        )


def add_defaults(plan: ToolPlan, args: dict[str, Any], *, skip: Collection[str] = ()) -> list[Repair]:
    """Step 6: into ``args``, the schema default of each optional field it lacks (except ``skip``),
    one safe ``default`` repair each. A key present in ``args`` keeps its value, whatever it is."""
    repairs = []
    for key in plan.defaults:
        if key in args or key in skip:
            continue
        default = plan.fields[key].default
        args[key] = json.loads(json.dumps(default))  # a copy: a tool may change what it is given
        repairs.append(
            Repair(field=key, from_=None, to=json.loads(json.dumps(default)), rule="default", kind="safe")
        )
    return repairs


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
