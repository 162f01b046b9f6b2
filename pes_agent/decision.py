"""A person's decision on a paused run: the one shape `ArtInstance.resume`, the A2A server, the
service example and the workers accept.

Why a type and not a dict: a decision usually arrives as JSON from a client, and a lenient reading
of it is dangerous. ``{"approved": "false"}`` read with ``bool(...)`` approves what the client meant
to reject, and a ``modified_args`` that is not a mapping used to fail only after the pause had been
cleared. So a decision is checked whole before anything is applied: ``approved`` is a boolean (no
other value stands for one, and a missing one is not taken as a rejection), ``reason`` is text,
``modified_args`` and ``values`` are mappings of argument names. Which of them a pause needs, and
whether the values fit the tool's schema, is checked against the pause itself
(`pes_agent.agent.decision_check`); either check fails with `InvalidDecisionError` naming the
field, and the thread is left exactly as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from pes_agent.errors import InvalidDecisionError

__all__ = ["Decision"]

_FIELDS = ("approved", "reason", "modified_args", "values")
_ALIASES = {"modifiedArgs": "modified_args"}
"""The TypeScript original's spelling, accepted as config keys are."""


@dataclass(frozen=True, kw_only=True)
class Decision:
    """An approval (``approved``, with an optional ``reason`` and, when approving, ``modified_args``
    merged over the call's arguments) or the answer to a clarification (``values`` for the fields it
    asked). Build one with `approve`, `reject` or `answer`, or parse a client's JSON object with
    `from_mapping`; the constructor checks the types as well."""

    approved: bool | None = None
    """True runs the paused call (or accepts a blocking tool's request), False rejects it."""
    reason: str | None = None
    """Why, in the person's words: the model is told it with a rejection."""
    modified_args: Mapping[str, Any] | None = None
    """Arguments the person changed before approving; the gate checks the merged call against the
    tool's schema exactly as it checks a model's call."""
    values: Mapping[str, Any] | None = None
    """The values a clarification asked for, by field name; checked by the gate the same way."""

    def __post_init__(self) -> None:
        if self.approved is not None and not isinstance(self.approved, bool):
            raise _wrong("approved", self.approved, "true or false (a JSON boolean)")
        if self.reason is not None and not isinstance(self.reason, str):
            raise _wrong("reason", self.reason, "text")
        for name in ("modified_args", "values"):
            given = getattr(self, name)
            if given is None:
                continue
            if not isinstance(given, Mapping):
                raise _wrong(name, given, 'an object of argument names and values, such as {"title": "..."}')
            if any(not isinstance(key, str) or not key for key in given):
                raise InvalidDecisionError(
                    f"`decision.{name}` has a key that is not an argument name (every key must be "
                    "non-empty text); nothing was decided",
                    field=name,
                )
            object.__setattr__(self, name, MappingProxyType(dict(given)))
        if self.approved is None and self.values is None:
            raise InvalidDecisionError(
                "a decision needs `approved` (true or false, for an approval) or `values` (for a "
                "clarification); nothing was decided",
                field="approved",
            )
        if self.approved is not None and self.values is not None:
            raise InvalidDecisionError(
                "`decision.values` answers a clarification and `decision.approved` an approval; send "
                "the one the pause asks for; nothing was decided",
                field="values",
            )
        if self.approved is False and self.modified_args is not None:
            raise InvalidDecisionError(
                "`decision.modified_args` only applies to an approval (`approved: true`); a rejected "
                "call does not run. Leave it out, or approve; nothing was decided",
                field="modified_args",
            )

    @classmethod
    def approve(
        cls, *, modified_args: Mapping[str, Any] | None = None, reason: str | None = None
    ) -> Decision:
        return cls(approved=True, modified_args=modified_args, reason=reason)

    @classmethod
    def reject(cls, reason: str | None = None) -> Decision:
        return cls(approved=False, reason=reason)

    @classmethod
    def answer(cls, values: Mapping[str, Any]) -> Decision:
        return cls(values=values)

    @classmethod
    def from_mapping(cls, data: object) -> Decision:
        """A client's decision object, checked strictly: unknown keys and wrong types are refused
        (`InvalidDecisionError` naming the field), never guessed at. ``null`` counts as absent."""
        if isinstance(data, Decision):
            return data
        if not isinstance(data, Mapping):
            raise _wrong("", data, 'an object such as {"approved": true}')
        given: dict[str, Any] = {}
        for key, value in data.items():
            name = _ALIASES.get(key, key) if isinstance(key, str) else key
            if name not in _FIELDS:
                allowed = ", ".join(f"`{f}`" for f in _FIELDS)
                shown = repr(key) if isinstance(key, str) and len(key) <= 40 else "a key"
                raise InvalidDecisionError(
                    f"`decision` has {shown}, which is not a field of a decision (allowed: {allowed}); "
                    "nothing was decided",
                    field=str(key)[:40],
                )
            if value is not None:
                given[name] = value
        return cls(**given)

    @property
    def kind(self) -> Literal["approval", "clarification"]:
        """The kind of pause this decision answers."""
        return "clarification" if self.values is not None else "approval"

    def to_dict(self) -> dict[str, Any]:
        """The fields given, as plain JSON-ready values (what events and the thread's records keep)."""
        out: dict[str, Any] = {}
        if self.approved is not None:
            out["approved"] = self.approved
        if self.reason is not None:
            out["reason"] = self.reason
        if self.modified_args is not None:
            out["modified_args"] = dict(self.modified_args)
        if self.values is not None:
            out["values"] = dict(self.values)
        return out


def _wrong(name: str, value: Any, expected: str) -> InvalidDecisionError:
    """The field, what it must be and the JSON type received; never the value (it may be long, or
    hold something the client should not see echoed in a log)."""
    where = f"`decision.{name}`" if name else "`decision`"
    return InvalidDecisionError(
        f"{where} must be {expected}, not {_json_type(value)}; nothing was decided: send the decision again",
        field=name or "decision",
    )


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__}"
