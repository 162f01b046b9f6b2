"""Whether a provider looks like a small local model running unguided, and what to change.

Guided mode (every decision a choice among grounded options) is what makes a model of a few hundred
million parameters useful: measured on SmolLM2-135M, free-form plans and calls got 0 of 10 outside
tasks right. It is on by default only for the in-process ``llamacpp`` adapter; the same model behind
a server (``openai`` with a local ``base_url``, the ``ollama`` preset) runs free-form unless
``guided: true`` is set. Nothing asks the server: the signs are in the config. The model's name
states its size (``smollm2-135m``, ``qwen2.5:0.5b``, ``Llama-3.2-1B-Instruct``) or names a family
that only comes small, and the endpoint is on this machine or a private network. ``pes-agent
validate`` prints the notice and every run starts with it (a ``NOTICE`` event); setting ``guided``
either way silences it.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from pes_agent.config.provider import ProviderConfig

__all__ = ["SMALL_MODEL_PARAMS", "Notice", "model_parameters", "provider_notices"]

SMALL_MODEL_PARAMS = 3e9
"""At or below this many parameters a model is told about guided mode. The measured need is at 135M
(0/10 right free-form, 3/10 guided on outside tasks); 3B is where published tool-use scores begin to
be usable free-form (Llama 3.2 3B: 0.67 on BFCL v2), so the notice stops there."""

_SIZE = re.compile(r"(?<![a-z0-9.])(?:(\d+)x)?(\d+(?:\.\d+)?)\s*([mb])(?![a-z0-9])", re.IGNORECASE)
"""``135m``, ``0.5b``, ``-1B-``, and ``8x7b`` (eight experts of 7B)."""
_SMALL_FAMILIES = ("smollm", "tinyllama", "tinydolphin")
"""Families that exist only below ``SMALL_MODEL_PARAMS``, for names that state no size."""
_LOCAL_NAMES = frozenset({"localhost", "host.docker.internal"})


@dataclass(frozen=True, kw_only=True)
class Notice:
    """Something about how runs are set up that a user should know before the first one."""

    code: str
    provider: str
    message: str


def model_parameters(model: str) -> float | None:
    """The parameter count a model's name states (``135m``, ``0.5b``, ``-1B-``), or None."""
    sizes = [
        int(experts or 1) * float(n) * (1e6 if unit.lower() == "m" else 1e9)
        for experts, n, unit in _SIZE.findall(model)
    ]
    return max(sizes) if sizes else None


def provider_notices(name: str, config: ProviderConfig) -> tuple[Notice, ...]:
    """What a run on this provider should say first; empty for most."""
    why = _small_local_model(config)
    if why is None or config.guides_choices or config.guided is not None:
        return ()
    key = f"providers.{name}"
    change = (
        f"remove `{key}.structured_output: false` and set `{key}.guided: true`"
        if config.structured_output is False
        else f"set `{key}.guided: true`"
    )
    server = (
        ""
        if config.adapter == "llamacpp"
        else " (it turns structured output on; a llama.cpp server takes pes-agent's own grammar, "
        "`structured_output_dialect: grammar`)"
    )
    message = (
        f"provider {name!r}: {why} runs unguided: it writes its own plans and tool calls, which a model "
        f"this small rarely gets right; {change} to make every decision a choice among grounded "
        f"options{server}"
    )
    return (Notice(code="unguided_small_model", provider=name, message=message),)


def _small_local_model(config: ProviderConfig) -> str | None:
    """How the config shows a small model on this machine, in words, or None."""
    model = config.model or ""
    if config.adapter == "llamacpp":
        return f"the local model {model or config.model_path or config.model_package!r}"
    if config.adapter != "openai" or not (config.preset == "ollama" or _local(config.base_url)):
        return None
    size = model_parameters(model)
    if size is not None:
        billions = size >= 1e9 or (size / 1e8).is_integer()  # 0.5B, but 135M
        shown = f"{size / 1e9:g}B" if billions else f"{size / 1e6:g}M"
        return (
            f"model {model!r} (about {shown} parameters, on a local server)"
            if size <= SMALL_MODEL_PARAMS
            else None
        )
    if any(family in model.lower() for family in _SMALL_FAMILIES):
        return f"model {model!r} (a small model, on a local server)"
    return None


def _local(base_url: str | None) -> bool:
    """An endpoint on this machine or a private network: where people run their own small models."""
    host = (urlsplit(base_url).hostname or "") if base_url else ""
    if host in _LOCAL_NAMES or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private
