"""pes-agent: a Plan-Execute-Synthesize agent with a deterministic tool-argument gate.

Public API (the names in ``__all__`` are a contract; see docs/architecture.md §3). Importing this package
loads neither ``openai`` nor ``tiktoken``: adapters import them when a config uses them.
"""

from pes_agent.agent.props import AgentProps
from pes_agent.agent.response import AgentFinalResponse, RunErrorInfo, RunUsage
from pes_agent.config import ArtInstanceConfig, ThreadConfig, load_config
from pes_agent.decision import Decision
from pes_agent.errors import (
    BudgetExhaustedError,
    ConfigError,
    EmbeddingsRefusedError,
    InvalidDecisionError,
    InvalidInputError,
    ParseError,
    PesAgentError,
    ProviderError,
    RunError,
    ScriptExhaustedError,
    StoreUnavailableError,
    ThreadAccessError,
    ThreadBusyError,
    ThreadSuspendedError,
    ToolDefinitionError,
    ToolError,
    ToolExecutionError,
    ToolValidationError,
    UnknownSuspensionError,
    UnknownThreadError,
    UnknownToolError,
    VersionConflictError,
)
from pes_agent.events import Event, EventType
from pes_agent.factory import create_art_instance
from pes_agent.instance import ArtInstance
from pes_agent.tools.decorators import tool
from pes_agent.tools.spec import ToolCall, ToolContext, ToolResult, ToolSpec

__all__ = [
    "AgentFinalResponse",
    "AgentProps",
    "ArtInstance",
    "ArtInstanceConfig",
    "BudgetExhaustedError",
    "ConfigError",
    "Decision",
    "EmbeddingsRefusedError",
    "Event",
    "EventType",
    "InvalidDecisionError",
    "InvalidInputError",
    "ParseError",
    "PesAgentError",
    "ProviderError",
    "RunError",
    "RunErrorInfo",
    "RunUsage",
    "ScriptExhaustedError",
    "StoreUnavailableError",
    "ThreadAccessError",
    "ThreadBusyError",
    "ThreadConfig",
    "ThreadSuspendedError",
    "ToolCall",
    "ToolContext",
    "ToolDefinitionError",
    "ToolError",
    "ToolExecutionError",
    "ToolResult",
    "ToolSpec",
    "ToolValidationError",
    "UnknownSuspensionError",
    "UnknownThreadError",
    "UnknownToolError",
    "VersionConflictError",
    "create_art_instance",
    "load_config",
    "tool",
]
