"""Secrets as a type: a key is readable only through ``get_secret_value()``.

A config value that came from ``${OPENAI_API_KEY}`` remembers that reference, so dumps and reprs can
say where the key comes from without showing it; a key written literally in a file is shown as
``**********`` everywhere. The loader marks interpolated strings with :class:`EnvText`; the
:data:`SecretValue` annotation turns them (or plain strings) into :class:`Secret` at validation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated, Any, Self

from pydantic import BeforeValidator, PlainSerializer, SecretStr

MASK = "**********"

_PURE_REFERENCE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")

SECRET_KEY_NAMES = frozenset({"apikey", "api_key", "dsn", "token", "password", "secret"})
"""Key names (lower-cased) whose values are secrets wherever they appear, also in free-form maps."""


SECRET_MAP_NAMES = frozenset({"headers", "env"})
"""Key names of maps whose every value is a secret (an MCP server's request headers and environment)."""


def is_secret_path(path: object) -> bool:
    """Whether a config key path leads to a secret: through a secret-named key or a secret map."""
    parts = path if isinstance(path, (tuple, list)) else ()
    return any(is_secret_key(p) or p in SECRET_MAP_NAMES for p in parts)


def is_secret_key(key: object) -> bool:
    """Whether a key names a secret, in any spelling (``apiKey``, ``api_key``, ``API_KEY``)."""
    return isinstance(key, str) and key.lower() in SECRET_KEY_NAMES


class EnvText(str):
    """A string produced by ``${VAR}`` interpolation, carrying the text it was written as."""

    source_text: str

    def __new__(cls, value: str, source_text: str) -> Self:
        made = super().__new__(cls, value)
        made.source_text = source_text
        return made


class Secret(SecretStr):
    """A ``SecretStr`` that knows the ``${VAR}`` it was read from, if any.

    Only a value written exactly as one ``${VAR}`` keeps its reference: text such as
    ``Bearer ${TOKEN}`` or ``${KEY:-literal}`` could carry part of the secret, so it is masked.
    """

    def __init__(self, value: str, *, reference: str | None = None) -> None:
        super().__init__(value)
        self._reference = reference if reference and _PURE_REFERENCE.fullmatch(reference) else None

    @property
    def reference(self) -> str | None:
        """The ``${VAR}`` this secret came from, or None when it was given literally."""
        return self._reference

    def _display(self) -> str:
        return self._reference or MASK

    def __repr__(self) -> str:
        return f"Secret({self._display()!r})"


def to_secret(value: Any) -> Any:
    """Wrap strings (and plain ``SecretStr``) as :class:`Secret`; leave anything else to pydantic."""
    if isinstance(value, Secret):
        return value
    if isinstance(value, SecretStr):
        return Secret(value.get_secret_value())
    if isinstance(value, EnvText):
        return Secret(str(value), reference=value.source_text)
    if isinstance(value, str):
        return Secret(value)
    return value


def dump_secret(value: SecretStr) -> str:
    """Serialised form of a secret: its ``${VAR}`` reference, else the mask; never the value."""
    return value.reference or MASK if isinstance(value, Secret) else MASK


SecretValue = Annotated[
    SecretStr,
    BeforeValidator(to_secret),
    PlainSerializer(dump_secret, return_type=str),
]
"""A config field holding a secret; reads as ``SecretStr``, dumps as ``${VAR}`` or the mask."""


def scrub(text: str, secrets: Iterable[str]) -> str:
    """Last line of defence: no secret value survives in a message, whatever produced it (a server
    echoing the header it was sent, a library quoting a URL with its password)."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def redact_mapping(options: dict[str, Any]) -> dict[str, Any]:
    """Free-form options (the original's ``adapterOptions``) with secret-named string values wrapped."""
    return {k: to_secret(v) if is_secret_key(k) else v for k, v in options.items()}
