"""Provider presets: services that speak the OpenAI API, and where each expects its key.

``adapter: groq`` (or deepseek, openrouter, ollama) is the ``openai`` adapter with that service's
endpoint, API-key variable and structured-output dialect filled in; each stays overridable by writing
the key itself (``base_url``, ``api_key_env``, ``structured_output_dialect``). The original's config
shape names its adapters the same way, so both shapes resolve here. The native adapters' key
variables live here too: one table says where every adapter looks for its key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, Protocol

__all__ = ["DEFAULT_KEY_ENV", "PRESETS", "Preset", "apply_preset", "key_variable"]


@dataclass(frozen=True, kw_only=True)
class Preset:
    base_url: str
    api_key_env: str | None
    """None: the service takes no key (a local Ollama)."""
    dialect: Literal["json_schema", "json_object", "ollama"]
    enforces_schema: bool = True
    """Whether the service decodes under the schema it is sent; guided mode needs it (a choice among
    options holds only if the reply cannot leave them)."""


PRESETS: Mapping[str, Preset] = MappingProxyType(
    {
        # Groq's structured outputs take `response_format: json_schema`.
        "groq": Preset(
            base_url="https://api.groq.com/openai/v1", api_key_env="GROQ_API_KEY", dialect="json_schema"
        ),
        # DeepSeek offers JSON mode only (`json_object`); the schema beside it is ignored there and the
        # prompt carries the reply's shape, which is what the original relied on.
        "deepseek": Preset(
            base_url="https://api.deepseek.com/v1",
            api_key_env="DEEPSEEK_API_KEY",
            dialect="json_object",
            enforces_schema=False,
        ),
        # OpenRouter passes `json_schema` on to the models that support structured outputs.
        "openrouter": Preset(
            base_url="https://openrouter.ai/api/v1", api_key_env="OPENROUTER_API_KEY", dialect="json_schema"
        ),
        # Ollama's /v1 endpoint takes `response_format: json_schema` (0.5+) and no `grammar`; no key.
        "ollama": Preset(base_url="http://localhost:11434/v1", api_key_env=None, dialect="json_schema"),
    }
)

DEFAULT_KEY_ENV: Mapping[str, str] = MappingProxyType(
    {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}
)
"""Where each adapter reads its key when neither ``api_key`` nor ``api_key_env`` is given."""

_DIALECT_KEYS = ("structuredOutputDialect", "structured_output_dialect")
_URL_KEYS = ("baseUrl", "baseURL", "base_url")
_KEY_ENV_KEYS = ("apiKeyEnv", "api_key_env")


def apply_preset(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A provider's raw config with a preset adapter resolved to ``openai`` and its defaults filled in.

    Keys the user wrote win; ``preset`` keeps the service's name (shown in errors and ``repr``).
    Anything that is not a preset is returned unchanged, for validation to judge.
    """
    name = data.get("adapter")
    preset = PRESETS.get(name) if isinstance(name, str) else None
    if preset is None:
        return data
    out = {**data, "adapter": "openai", "preset": name}
    if not any(k in data for k in _URL_KEYS):
        out["base_url"] = preset.base_url
    if not any(k in data for k in _KEY_ENV_KEYS) and preset.api_key_env is not None:
        out["api_key_env"] = preset.api_key_env
    if not any(k in data for k in _DIALECT_KEYS):
        out["structured_output_dialect"] = preset.dialect
    return out


class _Keyed(Protocol):
    @property
    def adapter(self) -> str: ...
    @property
    def preset(self) -> str | None: ...
    @property
    def api_key_env(self) -> str | None: ...


def key_variable(config: _Keyed) -> str | None:
    """The environment variable a provider's key is read from, or None when it takes none.

    A preset never falls back to ``OPENAI_API_KEY``: that key must not be sent to another service.
    """
    if config.api_key_env:
        return config.api_key_env
    if config.preset is not None:
        return None
    return DEFAULT_KEY_ENV.get(config.adapter)
