"""A tool's output schema read off its function's return annotation, when that names fields: what
planning reads to find the step that provides a value the request does not hold.
"""

from __future__ import annotations

import sys
import typing
from collections.abc import Callable, Mapping
from typing import Any

import typing_extensions
from pydantic import TypeAdapter

from pes_agent.prompts.schemas import inline_refs
from pes_agent.tools.signature_schema import compact_schema


def output_schema_of(fn: Callable[..., Any]) -> dict[str, Any] | None:
    """The JSON Schema of what ``fn`` returns, from its return annotation, when that names fields
    (a ``TypedDict``, a pydantic model, a dataclass, a list of them): planning reads output fields to
    find the step that provides a value the request does not hold (``capital`` for a city). A return
    type without fields (``str``, ``dict[str, Any]``), a missing annotation, or one pydantic cannot
    describe gives None: the output schema is what the tool promises, never a guess."""
    try:
        hint = typing.get_type_hints(fn, include_extras=True).get("return")
    except (TypeError, ValueError, NameError):
        return None
    if hint is None or hint is type(None) or hint is Any:
        return None
    try:
        raw = TypeAdapter(_describable(hint)).json_schema(mode="serialization")
    except Exception:  # noqa: BLE001 -- pydantic refuses an undescribable type in several ways: no schema
        return None
    schema = inline_refs(compact_schema(raw))  # fields where a reader looks, not behind ``$ref``
    return schema if _names_fields(schema) else None


def _describable(hint: Any) -> Any:
    """``hint`` as pydantic can describe it: on Python 3.11 pydantic refuses ``typing.TypedDict``
    (it wants ``typing_extensions``'), the one authors reach for, so its fields are read here, at
    any depth (a record holding a list of records: a schedule's ``pickups``)."""
    if sys.version_info >= (3, 12):
        return hint
    if typing.is_typeddict(hint):
        fields = {k: _describable(v) for k, v in typing.get_type_hints(hint, include_extras=True).items()}
        return typing_extensions.TypedDict(hint.__name__, fields, total=hint.__total__)  # type: ignore[operator]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return typing.Annotated[(_describable(args[0]), *hint.__metadata__)]
    if origin is list and len(args) == 1:  # a list of records
        return list[_describable(args[0])]  # type: ignore[misc]
    if origin is typing.Union or (origin is not None and origin.__name__ == "UnionType"):
        return typing.Union[tuple(_describable(a) for a in args)]  # noqa: UP007
    return hint


def _names_fields(schema: Mapping[str, Any]) -> bool:
    if schema.get("properties") or "$ref" in schema:
        return True
    items = schema.get("items")
    return isinstance(items, Mapping) and _names_fields(items)
