"""The argument gate: what happens to a model's tool call between the parser and the executor.

The execution loop calls one thing, `ArgumentGate.check`, and acts on the `GateResult` it returns.
Inside, from the bottom up: ``schema_plan`` (what a tool's schema allows, read once), ``references``
(``$step_1.urls``) and ``normalize`` (names, keys, values), ``placeholders`` (values that are no
values, and what grounds them), ``result`` (the outcome types), ``messages`` (the wording of every
corrective), ``check`` (the repair steps of one call, in order) and ``gate`` (the fast path and the
entry point). Checking arguments against a JSON Schema is the tool's own (`pes_agent.tools.validation`).
"""

from pes_agent.gate.gate import ArgumentGate
from pes_agent.gate.normalize import Repair
from pes_agent.gate.placeholders import Grounding
from pes_agent.gate.result import FieldNeed, GateResult, NeedReason, Outcome

__all__ = ["ArgumentGate", "FieldNeed", "GateResult", "Grounding", "NeedReason", "Outcome", "Repair"]
