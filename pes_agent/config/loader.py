"""Reading a config file into an ArtInstanceConfig, with errors a user can act on.

The pipeline is: parse (JSON / YAML / TOML) → ``${VAR}`` interpolation → the original's shape
rewritten into ours (``original``) → pydantic validation. Every problem found becomes one line
of a single ``ConfigError`` naming the file, the key path as the user spelled it, the bad value and
what is allowed; values under secret-named keys are never shown.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pes_agent.config.errors import NOT_SHOWN, Problem, problems_from_validation, redacted
from pes_agent.config.model import ArtInstanceConfig
from pes_agent.config.original import normalise_original
from pes_agent.errors import ConfigError
from pes_agent.secrets import SECRET_MAP_NAMES, EnvText, is_secret_key, scrub

_ENV_REFERENCE = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_TEMPLATE_KEYS = frozenset({"prompts", "systemPrompt", "system_prompt"})


def load_config(path: str | os.PathLike[str]) -> ArtInstanceConfig:
    """Read a ``.json``, ``.yaml``/``.yml`` or ``.toml`` config file: parse it by its extension, then
    validate it as :func:`config_from_dict` does."""
    file = Path(path)
    source = str(path)
    parser = _PARSERS.get(file.suffix.lower())
    if parser is None:
        kind = file.suffix or "(no extension)"
        raise ConfigError(
            f"unsupported config file type {kind!r}; use .json, .yaml, .yml or .toml",
            source=source,
            value=file.suffix,
            allowed=sorted(_PARSERS),
        )
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise ConfigError(
            f"config file not found (looked for {str(file.absolute())!r}); check the path", source=source
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"cannot read the config file ({exc.strerror or type(exc).__name__})", source=source
        ) from None
    data = parser(raw, source)
    if data is None:  # an empty YAML file: every default
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"the top level must be a mapping of keys, got {type(data).__name__}", source=source
        )
    return config_from_dict(data, source=source, base_dir=file.absolute().parent)


def config_from_dict(
    data: Mapping[str, Any], *, source: str = "<dict>", base_dir: str | os.PathLike[str] | None = None
) -> ArtInstanceConfig:
    """Validate a mapping exactly as a loaded file would be: interpolate, normalise and validate;
    raise one ConfigError listing every problem.

    ``base_dir`` anchors relative paths (``script``); the working directory when not given.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"a config must be a mapping of keys, got {type(data).__name__}", source=source)
    missing: list[Problem] = []
    interpolated = _interpolate(data, (), missing)
    secrets = _secret_strings(interpolated)
    if missing:  # validating blanks would only add noise to the real problem
        raise _config_error(source, missing, secrets)
    normalised = normalise_original(interpolated)
    context = {"base_dir": os.fspath(base_dir) if base_dir is not None else None}
    failure: ValidationError | None = None
    try:
        config = ArtInstanceConfig.model_validate(normalised.data, context=context)
    except ValidationError as exc:
        failure = exc
    problems = list(normalised.problems)
    if failure is not None:
        found = problems_from_validation(failure, normalised.data, normalised.paths)
        # Checks across fields would trip over providers the normaliser already refused.
        problems += [p for p in found if not (normalised.problems and p.cross_field)]
    if problems:
        raise _config_error(source, problems, secrets)
    return config


def _config_error(source: str, problems: list[Problem], secrets: set[str]) -> ConfigError:
    """One error for all problems: one line each, attributes from the first; secrets scrubbed."""
    first = problems[0]
    value = first.value if first.value_is_safe else redacted(first.path, first.value)
    value = None if first.value is NOT_SHOWN else value
    if len(problems) == 1:
        error = ConfigError(
            scrub(first.message, secrets),
            source=source,
            key_path=first.key_path or None,
            value=value,
            allowed=first.allowed,
        )
    else:
        lines = [
            f"  {source}: `{p.key_path}`: {p.message}" if p.key_path else f"  {source}: {p.message}"
            for p in problems
        ]
        text = scrub(
            f"{source}: {len(problems)} problems in the configuration:\n" + "\n".join(lines), secrets
        )
        error = ConfigError(text)
        error.source, error.key_path, error.value = source, first.key_path or None, value
        error.allowed = list(first.allowed) if first.allowed is not None else None
    return error


def _secret_strings(node: Any, key: object = None) -> set[str]:
    if key in SECRET_MAP_NAMES and isinstance(node, Mapping):  # an MCP server's headers and env
        return {v for v in node.values() if isinstance(v, str) and len(v) >= 4}
    if isinstance(node, Mapping):
        return set().union(*(_secret_strings(v, k) for k, v in node.items())) if node else set()
    if isinstance(node, list):
        return set().union(*(_secret_strings(v, key) for v in node)) if node else set()
    return {str(node)} if is_secret_key(key) and isinstance(node, str) and len(node) >= 4 else set()


# --- ${VAR} interpolation ------------------------------------------------------------------------


def _interpolate(node: Any, path: tuple[str | int, ...], missing: list[Problem]) -> Any:
    """Copy of ``node`` with ``${VAR}`` / ``${VAR:-default}`` replaced in every string value."""
    if isinstance(node, Mapping):
        return {k: _interpolate(v, (*path, k), missing) for k, v in node.items()}
    if isinstance(node, list):
        return [_interpolate(v, (*path, i), missing) for i, v in enumerate(node)]
    if isinstance(node, str) and "${" in node:
        return _interpolate_text(node, path, missing)
    return node


def _interpolate_text(text: str, path: tuple[str | int, ...], missing: list[Problem]) -> str:
    substituted = False

    def replace(match: re.Match[str]) -> str:
        nonlocal substituted
        if match.group(0) == "$${":
            return "${"
        substituted = True
        name, default = match.group(1), match.group(2)
        value = os.environ.get(name)
        if value is None or (value == "" and default is not None):
            if default is not None:
                return default
            missing.append(_missing_variable(name, path))
            return ""
        return value

    result = _ENV_REFERENCE.sub(replace, text)
    return EnvText(result, text) if substituted else result


def _missing_variable(name: str, path: tuple[str | int, ...]) -> Problem:
    message = (
        f"environment variable {name} is not set; export it (`export {name}=...`) "
        f"or give a default with `${{{name}:-value}}`"
    )
    if _TEMPLATE_KEYS & {p for p in path if isinstance(p, str)}:
        message += f"; if `${{{name}}}` is a template variable, write `${name}` or `$${{{name}}}`"
    return Problem(path=path, message=message, value=name, allowed=(f"export {name}",), value_is_safe=True)


# --- parsers -------------------------------------------------------------------------------------


def _text(raw: bytes, source: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"the file is not UTF-8 text (byte {exc.start})", source=source) from None


def _parse_json(raw: bytes, source: str) -> Any:
    try:
        return json.loads(_text(raw, source))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", source=source
        ) from None


def _parse_yaml(raw: bytes, source: str) -> Any:
    import yaml  # PyYAML is a core dependency, but JSON/TOML users need not pay for importing it

    try:
        return yaml.safe_load(_text(raw, source))
    except yaml.MarkedYAMLError as exc:  # its snippet of the line could hold a key: keep only the position
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"invalid YAML{where}: {exc.problem or 'syntax error'}", source=source) from None
    except yaml.YAMLError:
        raise ConfigError("invalid YAML", source=source) from None


def _parse_toml(raw: bytes, source: str) -> Any:
    try:
        return tomllib.loads(_text(raw, source))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", source=source) from None


_PARSERS: Mapping[str, Callable[[bytes, str], Any]] = {
    ".json": _parse_json,
    ".yaml": _parse_yaml,
    ".yml": _parse_yaml,
    ".toml": _parse_toml,
}
