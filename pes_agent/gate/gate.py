"""The argument gate: what happens to a model's tool call between the parser and the executor.

It makes no model call and has no side effects: it returns the call as repaired, every repair (one
``ARG_REPAIR`` event each) and one outcome for the agent loop to act on, so that one bad call gets
one corrective voice. The repair steps, in order, are in ``check``; their wording is in
``messages``.

A valid call (exact allowed name, declared keys, strictly typed values, nothing that looks like a
reference, a value alias or a placeholder) takes a fast path: it runs as sent, plus the schema
defaults of the optional fields it left out, each one a safe repair (every call that runs carries
the complete set; docs/recovery.md, "Rules made exact" 1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pes_agent.config import GateConfig
from pes_agent.gate.check import CallCheck, add_defaults
from pes_agent.gate.messages import refusal_text
from pes_agent.gate.normalize import Repair, match_tool_name
from pes_agent.gate.placeholders import Grounding, PlaceholderRules
from pes_agent.gate.result import GateResult
from pes_agent.gate.schema_plan import FieldInfo, ToolPlan, build_plan
from pes_agent.tools.registry import ToolRegistry
from pes_agent.tools.spec import ToolCall

__all__ = ["ArgumentGate"]


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
        fast = self._fast_path(call, allowed, grounding)
        if fast is not None:
            return fast
        found, repair, elsewhere = self._resolve(call.tool_name, allowed)
        if found is None:
            usable = sorted(n for n in dict.fromkeys(allowed) if n in self.registry)
            hidden = [n for n in self.registry.names() if n not in usable]
            text = refusal_text(call.tool_name, usable, elsewhere=elsewhere, hidden=hidden)
            return GateResult(
                outcome="refuse_tool", call=call, repairs=(), needs=(), message=text, problems=()
            )
        plan = self.plan(found)
        validator = self.registry.validator(found)
        return CallCheck(self.config, self.placeholders, validator, plan, call, grounding, repair).run()

    def _fast_path(self, call: ToolCall, allowed: Sequence[str], grounding: Grounding) -> GateResult | None:
        """Exact allowed name, nothing for a repair step to do but defaults, and valid with them:
        the call to run (``call`` itself when no default was missing), or None for the slow path."""
        name, args = call.tool_name, call.arguments
        if (
            not (
                self.config.enabled
                and name in allowed
                and name in self.registry
                and isinstance(args, Mapping)
            )
            or call.non_object_arguments is not None
        ):
            return None
        plan = self.plan(name)
        if not self._plain(plan, args, grounding):
            return None
        repairs: list[Repair] = []
        if plan.defaults:
            args = dict(args)
            repairs = add_defaults(plan, args)
        if not self.registry.validator(name).is_valid(args):
            return None
        if repairs:
            call = ToolCall(call_id=call.call_id, tool_name=name, arguments=args)
        return GateResult(
            outcome="execute", call=call, repairs=tuple(repairs), needs=(), message=None, problems=()
        )

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
