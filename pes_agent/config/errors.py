"""pydantic's validation errors, said in the words and the key spelling of the config's author.

pydantic reports locations by alias and in the normalised shape; a user wrote ``max_iterations`` or
``providers.availableProviders[0].baseOptions.temperature``. We walk the user's data beside the
models to spell each path back, describe what the field allows from its annotation, and never show a
value stored under a secret-named key.
"""

from __future__ import annotations

import difflib
import enum
import json
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import AliasChoices, BaseModel, SecretStr, Tag, ValidationError
from pydantic.fields import FieldInfo

from pes_agent.config.base import CONFIG_ERROR_TYPE
from pes_agent.config.model import ArtInstanceConfig
from pes_agent.secrets import is_secret_path

Path = tuple[str | int, ...]


class _NotShown(enum.Enum):
    NOT_SHOWN = "not shown"


NOT_SHOWN = _NotShown.NOT_SHOWN
"""A problem whose value is not worth showing (an unknown key, a missing one)."""


@dataclass(frozen=True, kw_only=True)
class Problem:
    path: Path
    """Key path as the user spelled it, in the user's shape."""
    message: str
    """Complete text: what is wrong, the value, what is allowed."""
    value: Any = NOT_SHOWN
    allowed: tuple[str, ...] | None = None
    cross_field: bool = False
    """Found by a check across fields (a reference to a provider), not by a field's own type."""
    value_is_safe: bool = False
    """The value is no secret even under a secret-named key (the name of a missing variable)."""

    @property
    def key_path(self) -> str:
        return format_path(self.path)


def format_path(path: Sequence[str | int]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def redacted(path: Path, value: Any) -> Any:
    return "<redacted>" if is_secret_path(path) else value


def show_value(path: Path, value: Any) -> str:
    """A value as a message shows it: short, JSON spelling for literals, secrets hidden."""
    if is_secret_path(path) or isinstance(value, SecretStr):
        return "<redacted>"
    text = json.dumps(value) if value is None or isinstance(value, bool) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# Keys of the TypeScript original (or common slips) that deserve more than "unknown key":
# "Model.lowercased key" -> what to do instead.
_UNSUPPORTED = "is not supported in this version; remove the key"
_KEY_HINTS: Mapping[str, str] = {
    "ArtInstanceConfig.a2aconfig": "list the remote agents under `agents` ({id, url}); a discovery "
    "endpoint is not supported",
    "ArtInstanceConfig.authconfig": f"an authentication manager {_UNSUPPORTED}",
    "ArtInstanceConfig.agentcore": "the agent is always the PES agent; remove the key",
    "PersonaPrompts.execution": "a custom execution prompt goes under `prompts.execution` (a `$name` "
    "template)",
}
# "key.lowercased value" -> a hint for a refused Literal value.
_VALUE_HINTS: Mapping[str, str] = {
    "type.indexeddb": "IndexedDB is a browser store of the TypeScript original; use sqlite for a file",
    "type.supabase": "for a hosted database use postgres with a `dsn`",
    "adapter.ollama": "Ollama is OpenAI-compatible: use adapter openai, baseUrl http://localhost:11434/v1",
}
_RANGE_ERRORS = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal"})


def problems_from_validation(
    exc: ValidationError, data: Mapping[str, Any], renames: Mapping[Path, Path]
) -> list[Problem]:
    """One Problem per pydantic error; ``renames`` maps normalised path prefixes to the user's."""
    problems: list[Problem] = []
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        ctx = error.get("ctx") or {}
        if error["type"] == CONFIG_ERROR_TYPE and "problems" in ctx:
            for found in ctx["problems"]:
                path = _spell(loc + tuple(found["field"]), data).path
                value = found.get("value", NOT_SHOWN)
                problems.append(
                    Problem(
                        path=_rename(path, renames),
                        value=value,
                        cross_field=not loc,
                        message=_with_allowed(str(found["msg"]), found.get("allowed")),
                        allowed=tuple(found["allowed"]) if found.get("allowed") is not None else None,
                    )
                )
            continue
        problems.append(
            _problem(error["type"], error["msg"], error.get("input"), ctx, _spell(loc, data), renames)
        )
    return problems


def _problem(
    kind: str, msg: str, value: Any, ctx: Mapping[str, Any], spelled: _Spelled, renames: Mapping[Path, Path]
) -> Problem:
    path = _rename(spelled.path, renames)
    shown = show_value(spelled.path, value)
    expected = _expected(spelled.field)
    if kind == "extra_forbidden":
        return _unknown_key(path, spelled)
    if kind == "missing":
        wanted = f"; expected {', '.join(expected)}" if expected else ""
        return Problem(path=path, message=f"required key is missing{wanted}", allowed=expected or None)
    if kind == CONFIG_ERROR_TYPE:
        text = msg if isinstance(value, (Mapping, list)) else f"{msg} (got {shown})"
        return Problem(
            path=path,
            message=_with_allowed(text, ctx.get("allowed")),
            value=value,
            allowed=tuple(ctx["allowed"]) if ctx.get("allowed") is not None else None,
        )
    if kind == "literal_error":
        hint = _VALUE_HINTS.get(f"{path[-1]}.{str(value).lower()}", "")
        text = f"{shown} is not allowed; allowed: {', '.join(expected)}" + (f" ({hint})" if hint else "")
        return Problem(path=path, message=text, value=value, allowed=expected)
    if kind in _RANGE_ERRORS:
        return Problem(
            path=path,
            message=f"{shown} is out of range; expected {', '.join(expected)}",
            value=value,
            allowed=expected,
        )
    what = ", ".join(expected) if expected else _pydantic_expected(msg)
    return Problem(
        path=path, message=f"expected {what}, got {shown}", value=value, allowed=expected or (what,)
    )


def _unknown_key(path: Path, spelled: _Spelled) -> Problem:
    key, model = str(path[-1]), spelled.parent
    if model is None:
        return Problem(path=path, message="unknown key")
    own = _field_named(model, key)
    if own is not None:
        keys = spelled.node if isinstance(spelled.node, Mapping) else {}
        other = next((s for s in _spellings(model, own) if s != key and s in keys), own)
        return Problem(path=path, message=f"given twice (also as `{other}`); keep one spelling")
    allowed = tuple(_style(model, name, key) for name in model.model_fields)
    hint = _KEY_HINTS.get(f"{model.__name__}.{key.lower()}")
    if hint:
        return Problem(path=path, message=f"unknown key: {hint}", allowed=allowed)
    spellings = {s: name for name in model.model_fields for s in _spellings(model, name)}
    exact = [name for s, name in spellings.items() if s.lower() == key.lower()]
    close = exact or [spellings[m] for m in difflib.get_close_matches(key, list(spellings), n=1, cutoff=0.6)]
    guess = f"; did you mean `{_style(model, close[0], key)}`? Allowed keys" if close else "; allowed keys"
    return Problem(path=path, message=f"unknown key{guess}: {', '.join(allowed)}", allowed=allowed)


def _with_allowed(text: str, allowed: Sequence[str] | None) -> str:
    return f"{text}; allowed: {', '.join(allowed)}" if allowed else text


_PYDANTIC_WORDS = (
    ("a valid string", "text"),
    ("a valid integer", "a whole number"),
    ("a valid number", "a number"),
    ("a valid boolean", "true or false"),
    ("a valid dictionary", "a mapping of keys"),
    ("a valid list", "a list"),
)


def _pydantic_expected(msg: str) -> str:
    """pydantic's "Input should be a valid string" in the words the rest of our messages use."""
    text = msg.removeprefix("Input should be ").removeprefix("Input should ")
    return next((ours for theirs, ours in _PYDANTIC_WORDS if text.startswith(theirs)), text)


def _rename(path: Path, renames: Mapping[Path, Path]) -> Path:
    for cut in range(len(path), 0, -1):
        if path[:cut] in renames:
            return renames[path[:cut]] + path[cut:]
    return path


# --- walking the user's data beside the models ---------------------------------------------------


@dataclass(frozen=True)
class _Spelled:
    path: Path
    field: FieldInfo | None
    """The model field the path ends on, if it ends on one."""
    parent: type[BaseModel] | None
    """The model whose key the path's last element is (for unknown-key suggestions)."""
    node: Any
    """The user's mapping that holds the last key."""


def _spell(loc: Path, data: Mapping[str, Any]) -> _Spelled:
    shape: Any = ArtInstanceConfig
    node: Any = data
    path: list[str | int] = []
    field: FieldInfo | None = None
    parent: type[BaseModel] | None = None
    holder: Any = data
    for part in loc:
        if isinstance(shape, tuple) and shape[0] == "tagged":
            if part in shape[1]:  # pydantic names the member it chose; the user wrote no such key
                shape = shape[1][part]
                continue
            shape = next(
                (m for m in shape[1].values() if isinstance(m, type) and issubclass(m, BaseModel)), None
            )
        field, parent, holder = None, None, node
        if isinstance(shape, type) and issubclass(shape, BaseModel) and isinstance(part, str):
            parent = shape
            name = _field_named(shape, part)
            if name is None:
                path.append(part)
                shape, node = None, None
                continue
            key = _present_key(shape, name, node)
            field = shape.model_fields[name]
            path.append(key)
            shape, node = _shape_of(field.annotation), _child(node, key)
        elif isinstance(shape, tuple):  # ("dict" | "list", inner shape)
            path.append(part)
            shape, node = shape[1], _child(node, part)
        else:
            path.append(part)
            shape, node = None, None
    return _Spelled(tuple(path), field, parent, holder)


def _child(node: Any, key: str | int) -> Any:
    if isinstance(node, Mapping):
        return node.get(key)
    if isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
        return node[key]
    return None


def _shape_of(annotation: Any) -> Any:
    """The model, ``("dict"|"list", inner)`` or None that a field's annotation holds."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _shape_of(args[0])
    if origin in (Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        tagged = _tagged(inner)
        if tagged:
            return ("tagged", {tag: _shape_of(member) for tag, member in tagged.items()})
        return _shape_of(inner[0]) if len(inner) == 1 else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if origin is dict:
        return ("dict", _shape_of(args[1]))
    if origin is list:
        return ("list", _shape_of(args[0]))
    return None


def _tagged(members: Sequence[Any]) -> dict[str, Any]:
    """The members of a union told apart by a ``Discriminator``, by their ``Tag`` (empty when
    they are not): the tag is in an error's location, the user never wrote it."""
    tags = {
        m.tag: a for a in members if get_origin(a) is Annotated for m in get_args(a)[1:] if isinstance(m, Tag)
    }
    return tags if len(tags) == len(members) else {}


def _spellings(model: type[BaseModel], name: str) -> list[str]:
    info = model.model_fields[name]
    found = [name, info.alias or name]
    if isinstance(info.validation_alias, AliasChoices):
        found += [c for c in info.validation_alias.choices if isinstance(c, str)]
    return list(dict.fromkeys(found))


def _field_named(model: type[BaseModel], key: str) -> str | None:
    return next((name for name in model.model_fields if key in _spellings(model, name)), None)


def _present_key(model: type[BaseModel], name: str, node: Any) -> str:
    """The spelling of a field the user used; for a key they left out, the style of its siblings."""
    keys = [k for k in node if isinstance(k, str)] if isinstance(node, Mapping) else []
    present = [s for s in _spellings(model, name) if s in keys]
    if present:
        return present[0]
    snake = any("_" in k for k in keys) and not any(k != k.lower() for k in keys)
    return name if snake else (model.model_fields[name].alias or name)


def _style(model: type[BaseModel], name: str, like: str) -> str:
    """A field's name in the spelling of ``like``: snake_case if it has an underscore, else camelCase."""
    return name if "_" in like else (model.model_fields[name].alias or name)


def _expected(field: FieldInfo | None) -> tuple[str, ...]:
    """What a field accepts, in words: its Literal values, or its type and bounds."""
    if field is None:
        return ()
    annotation = field.annotation
    if get_origin(annotation) in (Union, types.UnionType):
        inner = [a for a in get_args(annotation) if a is not type(None)]
        tagged = _tagged(inner)
        if tagged:  # each kind the field takes: its values, or a mapping
            return tuple(
                w for member in tagged.values() for w in _expected(FieldInfo.from_annotation(member))
            )
        annotation = inner[0] if len(inner) == 1 else annotation
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) is Literal:
        return tuple(str(v) for v in get_args(annotation))
    words = {bool: "true or false", int: "a whole number", float: "a number", str: "text", SecretStr: "text"}
    base = words.get(annotation) if isinstance(annotation, type) else None
    if base is None:
        shape = _shape_of(annotation)
        base = (
            "a list" if get_origin(annotation) is list else "a mapping of keys" if shape is not None else None
        )
    if base is None:
        return ()
    bounds = [
        f"{op} {getattr(m, attr)}"
        for m in field.metadata
        for kind, op, attr in _BOUNDS
        if isinstance(m, kind)
    ]
    return (" ".join([base, " and ".join(bounds)]).strip(),)


_BOUNDS = (
    (annotated_types.Ge, ">=", "ge"),
    (annotated_types.Gt, ">", "gt"),
    (annotated_types.Le, "<=", "le"),
    (annotated_types.Lt, "<", "lt"),
)
