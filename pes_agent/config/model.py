"""ArtInstanceConfig and its parts: the one file a service team writes.

Keys are accepted in camelCase (the TypeScript original) and snake_case. Execution limits are all
optional here: ``None`` means "not given at this level", and ``resolve_execution`` picks each field
from call → thread → instance → built-in default.

Checks that span fields (a default provider that exists, a model for each endpoint) live in
validators here, so a config built in Python fails the same way as one loaded from a file. Reading
files and ``${VAR}`` interpolation live in ``loader``, the TypeScript original's shape in
``original``, and turning pydantic's errors into readable ones in ``errors``; this module imports
none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from string import Template
from typing import Any, Literal

from pydantic import (
    Field,
    SecretStr,
    field_serializer,
    field_validator,
    model_validator,
)

from pes_agent.config.adapters import HOSTED_ADAPTERS
from pes_agent.config.agents import RemoteAgentConfig, delegation_problems
from pes_agent.config.base import ConfigModel, check_unique_ids, fail, problem
from pes_agent.config.mcp import McpConfig
from pes_agent.config.provider import ProviderConfig
from pes_agent.config.retrieval import RetrievalConfig, embedding_problems
from pes_agent.config.workers import WorkersConfig
from pes_agent.secrets import SecretValue, dump_secret, redact_mapping


class StorageConfig(ConfigModel):
    type: Literal["sqlite", "memory", "postgres"] = "sqlite"
    path: str = "pes-agent.db"
    """SQLite file, relative to the working directory (``:memory:`` is allowed)."""
    dsn: SecretValue | None = None
    """PostgreSQL DSN (``postgres`` type); treated as a secret since it usually holds a password."""


class PersonaPrompts(ConfigModel):
    planning: str | None = None
    synthesis: str | None = None


class PersonaConfig(ConfigModel):
    name: str = "Zoi"
    prompts: PersonaPrompts = PersonaPrompts()


class PromptTemplates(ConfigModel):
    """``string.Template`` overrides of the built-in prompts; unknown ``$names`` fail at load."""

    planning: str | None = None
    execution: str | None = None
    reasoning: str | None = None
    enforcement: str | None = None
    synthesis: str | None = None
    refinement: str | None = None
    arg_fill: str | None = None

    @model_validator(mode="after")
    def _check_variables(self) -> PromptTemplates:
        # Imported here: the templates module is plain text, but config must not depend on the
        # prompt package at import time.
        from pes_agent.prompts import templates

        problems: list[dict[str, Any]] = []
        for name in type(self).model_fields:
            text = getattr(self, name)
            if text is None or name not in templates.DEFAULTS:
                continue
            allowed = sorted("$" + v for v in templates.variables(name))
            template = Template(text)
            unknown = sorted(set(template.get_identifiers()) - templates.variables(name))
            if not template.is_valid():
                problems.append(
                    problem((name,), "template has an invalid `$`; write `$$` for a literal `$`", allowed)
                )
            elif unknown:
                names = ", ".join("$" + u for u in unknown)
                problems.append(problem((name,), f"template uses unknown variable(s) {names}", allowed))
        if problems:
            fail(*problems)
        return self


class ExecutionConfig(ConfigModel):
    max_iterations: int | None = Field(default=None, ge=1)
    """Model calls per todo item (default 5)."""
    taef_max_retries: int | None = Field(default=None, ge=0)
    """Enforcement re-asks when a step's required tools were not called (default 2)."""
    tool_result_max_length: int | None = Field(default=None, ge=100)
    """Characters of earlier tool output shown to a step, shared among results (default 60000)."""
    tool_schema_mode: Literal["strict", "flexible"] | None = None
    """strict: a step may call only its required tools; flexible: any tool enabled for the thread."""
    enable_a2a_delegation: bool | None = None
    """The original's switch for delegation, instance level only: delegation happens when remote agents
    are listed under ``agents``; true without one, or false with one, is a contradiction refused at load."""
    max_items_per_run: int | None = Field(default=None, ge=1)
    """Cap on todo items executed in one run (default 20)."""
    validation_mode: Literal["strict", "advisory"] | None = None
    """TAEF: strict re-asks for missing required tools; advisory only records it (default strict)."""
    close_step_on_tool_success: bool | None = None
    """End a tool step without the closing model turn when a reply held only tool calls and every
    required tool succeeded; the step's result is then its tool outputs (default false, as the
    original). Saves one model call per tool step; the cost is no summary in the model's words and
    no chance for the model to call a further tool in that step."""


class HistoryConfig(ConfigModel):
    limit: int = Field(default=20, ge=0)


class ConcurrencyConfig(ConfigModel):
    on_busy_thread: Literal["refuse", "wait"] = "refuse"
    """A second run on a busy thread is refused (`ThreadBusyError`) or waits for the first."""
    lease_timeout_s: float = Field(default=30.0, gt=0)
    """A run's lease on its thread goes stale this long after its last save (a dead worker)."""
    wait_timeout_s: float = Field(default=300.0, gt=0)
    """With `onBusyThread: wait`, how long to wait before giving up with `ThreadBusyError`."""


class ObservabilityConfig(ConfigModel):
    otel: bool = False
    """Emit OpenTelemetry spans (GenAI semantic conventions); needs `pip install 'pes-agent[otel]'`."""
    capture_content: bool = False
    """Put prompt and reply text on model-call spans; off so prompts (personal data) stay out of traces."""
    service_name: str = "pes-agent"
    """``service.name`` of the tracer provider pes-agent makes when the application configured none."""


class ArgFillConfig(ConfigModel):
    enabled: bool = True
    max_attempts: int = Field(default=1, ge=0)
    timeout_s: float = Field(default=30.0, gt=0)


# fmt: off
DEFAULT_PLACEHOLDERS = (
    "TODO", "TBD", "...", "n/a", "N/A", "none", "null", "placeholder",
    "your value here", "<auto>", "<url>", "example", "string", "value",
)
# fmt: on


class GateConfig(ConfigModel):
    enabled: bool = True
    unknown_keys: Literal["strip", "reject"] = "strip"
    fuzzy_threshold: float = Field(default=0.70, ge=0, le=1)
    fuzzy_margin: float = Field(default=0.05, ge=0, le=1)
    placeholders: list[str] = Field(default_factory=lambda: list(DEFAULT_PLACEHOLDERS))
    max_consecutive_failures_per_tool: int = Field(default=3, ge=1)


class ProviderSelection(ConfigModel):
    """Runtime choice of provider, as the original's ``providerConfig {providerName, modelId}``."""

    provider_name: str
    model_id: str | None = None
    adapter_options: dict[str, Any] = Field(default_factory=dict)
    """Per-thread adapter settings; secret-named entries (``apiKey``, ``token``, ...) become secrets."""

    @field_validator("adapter_options")
    @classmethod
    def _wrap_secrets(cls, value: dict[str, Any]) -> dict[str, Any]:
        return redact_mapping(value)

    @field_serializer("adapter_options")
    def _dump_options(self, value: dict[str, Any]) -> dict[str, Any]:
        return {k: dump_secret(v) if isinstance(v, SecretStr) else v for k, v in value.items()}


class ThreadConfig(ConfigModel):
    """Per-thread settings; everything unset falls back to the instance."""

    provider_config: ProviderSelection | None = None
    enabled_tools: list[str] | None = None
    history_limit: int | None = Field(default=None, ge=0)
    system_prompt: str | None = None
    persona: PersonaConfig | None = None
    execution: ExecutionConfig = ExecutionConfig()
    llm_params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _delegation_is_instance_wide(self) -> ThreadConfig:
        if self.execution.enable_a2a_delegation is not None:
            fail(
                problem(
                    ("execution", "enable_a2a_delegation"),
                    "delegation is set for the instance (its "
                    "`agents`); to keep an agent from a thread, leave its tool out of `enabledTools`",
                    ["remove the key"],
                )
            )
        return self


class ArtInstanceConfig(ConfigModel):
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)
    """Model endpoints by name. May be empty at load: tests inject providers when building the instance."""
    default_provider: str | None = None
    """Provider used when a thread or call names none; with exactly one provider, that one."""
    storage: StorageConfig = StorageConfig()
    persona: PersonaConfig = PersonaConfig()
    prompts: PromptTemplates = PromptTemplates()
    execution: ExecutionConfig = ExecutionConfig()
    history: HistoryConfig = HistoryConfig()
    concurrency: ConcurrencyConfig = ConcurrencyConfig()
    arg_fill: ArgFillConfig = ArgFillConfig()
    gate: GateConfig = GateConfig()
    observability: ObservabilityConfig = ObservabilityConfig()
    tools: list[str] = Field(default_factory=list)
    """Tools by import path, ``package.module:attr`` (a ToolSpec, or a list of them)."""
    mcp: McpConfig = McpConfig()
    """MCP servers whose tools are registered at instance start."""
    retrieval: RetrievalConfig = RetrievalConfig()
    """Which tools the planner is shown when there are many (``pes_agent.config.retrieval``)."""
    agents: list[RemoteAgentConfig] = Field(default_factory=list)
    """Remote A2A agents, each registered as a tool ``agent_<id>`` at instance start."""
    workers: WorkersConfig = WorkersConfig()
    """Runs queued to worker processes as durable workflows (``pes_agent.workers``)."""
    system_prompt: str | None = None
    thread_defaults: ThreadConfig | None = None
    """Thread config used when a thread has none (the original's runtime ``providerConfig``)."""

    @model_validator(mode="before")
    @classmethod
    def _single_provider_is_default(cls, data: Any) -> Any:
        if not isinstance(data, Mapping) or "defaultProvider" in data or "default_provider" in data:
            return data
        providers = data.get("providers")
        if isinstance(providers, Mapping) and len(providers) == 1:
            return {**data, "default_provider": next(iter(providers))}
        return data

    @model_validator(mode="after")
    def _check_provider_references(self) -> ArtInstanceConfig:
        configured = sorted(self.providers)
        selection = self.thread_defaults.provider_config if self.thread_defaults else None
        problems: list[dict[str, Any]] = []
        if configured and self.default_provider is not None and self.default_provider not in self.providers:
            missing = f"no provider named {self.default_provider!r} is configured"
            problems.append(problem(("default_provider",), missing, configured, self.default_provider))
        if configured and selection and selection.provider_name not in self.providers:
            where = ("thread_defaults", "provider_config", "provider_name")
            missing = f"no provider named {selection.provider_name!r} is configured"
            problems.append(problem(where, missing, configured, selection.provider_name))
        for name, provider in self.providers.items():
            chosen_by_selection = selection and selection.provider_name == name and selection.model_id
            if provider.adapter in HOSTED_ADAPTERS and not provider.model and not chosen_by_selection:
                needs = f"adapter {provider.adapter!r} needs the model to request here"
                problems.append(
                    problem(("providers", name, "model"), needs, ["a model id, e.g. gpt-4o-mini"])
                )
        problems.extend(delegation_problems(self.execution.enable_a2a_delegation, self.agents))
        problems.extend(embedding_problems(self.retrieval, self.providers))
        if problems:
            fail(*problems)
        return self

    @field_validator("agents")
    @classmethod
    def _unique_agent_ids(cls, agents: list[RemoteAgentConfig]) -> list[RemoteAgentConfig]:
        check_unique_ids([agent.id for agent in agents], "agent")
        return agents
