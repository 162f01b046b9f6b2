"""Configuration: the models a service team writes, and reading them from files.

Layered so that nothing imports upwards: ``model`` (ArtInstanceConfig and its parts) is the ground
floor; ``errors`` (pydantic's errors in the author's words), ``original`` (the TypeScript original's
shape, rewritten into ours), ``limits`` (execution limits resolved call → thread → instance →
default) and ``provider_choice`` stand on it; ``loader`` (parsing, ``${VAR}`` interpolation,
validation) on those. This module only hands the public names on.
"""

from pes_agent.config.agents import RemoteAgentConfig
from pes_agent.config.base import CONFIG_ERROR_TYPE, ConfigModel
from pes_agent.config.limits import ResolvedExecution, resolve_execution
from pes_agent.config.loader import config_from_dict, load_config
from pes_agent.config.mcp import McpConfig, McpServerConfig
from pes_agent.config.model import (
    DEFAULT_PLACEHOLDERS,
    ArgFillConfig,
    ArtInstanceConfig,
    ConcurrencyConfig,
    ExecutionConfig,
    GateConfig,
    HistoryConfig,
    ObservabilityConfig,
    PersonaConfig,
    PersonaPrompts,
    PromptTemplates,
    ProviderSelection,
    StorageConfig,
    ThreadConfig,
)
from pes_agent.config.provider import ProviderConfig
from pes_agent.config.provider_choice import require_provider
from pes_agent.config.retrieval import EmbeddingsConfig, RetrievalConfig
from pes_agent.config.workers import ProviderQueueConfig, WorkersConfig

__all__ = [
    "CONFIG_ERROR_TYPE",
    "DEFAULT_PLACEHOLDERS",
    "ArgFillConfig",
    "ArtInstanceConfig",
    "ConcurrencyConfig",
    "ConfigModel",
    "EmbeddingsConfig",
    "ExecutionConfig",
    "GateConfig",
    "HistoryConfig",
    "McpConfig",
    "McpServerConfig",
    "ObservabilityConfig",
    "PersonaConfig",
    "PersonaPrompts",
    "PromptTemplates",
    "ProviderConfig",
    "ProviderQueueConfig",
    "ProviderSelection",
    "RemoteAgentConfig",
    "ResolvedExecution",
    "RetrievalConfig",
    "StorageConfig",
    "ThreadConfig",
    "WorkersConfig",
    "config_from_dict",
    "load_config",
    "require_provider",
    "resolve_execution",
]
