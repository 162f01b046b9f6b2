"""The one exception tree of pes-agent.

Misuse is raised; run failures are *returned* as ``AgentFinalResponse(status="error")`` by
``ArtInstance.process`` and only raised by the lower layers that the agent catches::

    PesAgentError
    ├── ConfigError                 bad config file or value (file, key path, bad value, allowed)
    ├── ThreadBusyError             another run holds the thread
    ├── ThreadSuspendedError        a plain query to a thread paused for approval
    ├── UnknownSuspensionError      resume() with an id the thread does not hold
    ├── UnknownThreadError          a thread id with no state where one is required
    ├── ThreadAccessError           a thread that belongs to another user (or to a user, asked without one)
    ├── VersionConflictError        a state save lost a race (store level)
    ├── ToolDefinitionError         a tool that cannot be registered (bad schema, duplicate name)
    ├── UnknownToolError            a tool name that is not registered (enable/disable per thread)
    ├── InvalidInputError           a query or argument to the public API that cannot be used
    │   └── InvalidDecisionError    a person's decision that does not fit the pause (field named)
    ├── ScriptExhaustedError        ScriptedProvider called past its script
    └── RunError                    failures inside a run (caught by the agent)
        ├── ProviderError           the model endpoint failed (status, headers, retryable)
        ├── ParseError              a model reply that cannot be used
        ├── ToolValidationError     arguments that failed the schema (tool, argument)
        ├── ToolExecutionError      a tool raised or timed out
        └── BudgetExhaustedError    an iteration / retry budget ran out
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class PesAgentError(Exception):
    """Root of every error pes-agent raises."""


class ConfigError(PesAgentError):
    """A configuration mistake, reported with where it is and what is allowed."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        key_path: str | None = None,
        value: Any = None,
        allowed: Sequence[str] | None = None,
    ) -> None:
        self.source = source
        self.key_path = key_path
        self.value = value
        self.allowed = list(allowed) if allowed is not None else None
        parts = []
        if source:
            parts.append(source)
        if key_path:
            parts.append(f"`{key_path}`")
        prefix = ": ".join(parts)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class ThreadBusyError(PesAgentError):
    """Another run holds this thread; wait for it or use another thread id."""

    def __init__(self, thread_id: str) -> None:
        self.thread_id = thread_id
        super().__init__(
            f"thread {thread_id!r} is busy: another run is in progress on it. Wait for that run to "
            "finish, or set `concurrency.onBusyThread: wait` to queue behind it."
        )


class ThreadSuspendedError(PesAgentError):
    """The thread waits for a human decision; a plain query would lose it."""

    def __init__(self, thread_id: str, suspension_id: str, tool_name: str | None) -> None:
        self.thread_id = thread_id
        self.suspension_id = suspension_id
        self.tool_name = tool_name
        on = f" on tool {tool_name!r}" if tool_name else ""
        super().__init__(
            f"thread {thread_id!r} is suspended{on} (suspension {suspension_id!r}); call "
            f"`resume({thread_id!r}, {suspension_id!r}, decision)` before sending a new query."
        )


class UnknownSuspensionError(PesAgentError):
    """resume() named a suspension the thread does not hold."""


class UnknownThreadError(PesAgentError):
    """A thread id with no stored state where one is required."""


class ThreadAccessError(PesAgentError):
    """The thread belongs to another user than the one asking.

    The message names the thread and the user asking, never the owner: a service that shows it
    must not tell one user who else uses the system.
    """

    def __init__(self, thread_id: str, user_id: str | None) -> None:
        self.thread_id = thread_id
        self.user_id = user_id
        who = f"user {user_id!r}" if user_id is not None else "a call without a `user_id`"
        super().__init__(
            f"thread {thread_id!r} belongs to another user: {who} may not read, continue or resume it. "
            "Pass the `user_id` that started the thread, or use a thread id of your own."
        )


class StoreUnavailableError(PesAgentError):
    """The store could not be reached for one operation (connection refused, dropped or timed out).

    Worth trying again: nothing was applied unless the server committed it before the line dropped, and
    the stores' writes are safe to repeat where a worker repeats them (``pes_agent.workers.store``).
    ``unreachable_s`` is set when a worker gave up after riding out an outage that long
    (``workers.storeOutageS``, see ``pes_agent.state.transient``)."""

    def __init__(self, message: str, *, unreachable_s: float | None = None) -> None:
        self.unreachable_s = unreachable_s
        super().__init__(message)


class VersionConflictError(PesAgentError):
    """A state save expected a version the store no longer holds (a concurrent writer won)."""

    def __init__(self, thread_id: str, expected: int, actual: int) -> None:
        self.thread_id = thread_id
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"thread {thread_id!r}: state version conflict (expected {expected}, stored {actual}); "
            "another run wrote this thread concurrently."
        )


class ToolDefinitionError(PesAgentError):
    """A tool that cannot be registered as given."""


class UnknownToolError(PesAgentError):
    """A tool name that is not registered with the instance."""


class InvalidInputError(PesAgentError):
    """A query or argument to the public API that cannot be used (empty query, bad thread id)."""


class InvalidDecisionError(InvalidInputError):
    """A decision passed to ``resume`` that cannot be applied: a field of the wrong type, one the
    pause does not take, or values the tool's schema refuses. Raised before anything is applied:
    the suspension, its step and the thread are as they were, and the same suspension can be
    decided again."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        self.field = field
        """The field refused: ``approved``, ``modified_args.title``, ``values.city``, ..."""
        super().__init__(message)


class ScriptExhaustedError(PesAgentError):
    """ScriptedProvider was called more times than it has replies."""


class RunError(PesAgentError):
    """A failure inside a run; the agent turns it into an error status with a code and phase."""

    code = "run_error"


class ProviderError(RunError):
    """The model endpoint failed after retries."""

    code = "provider_error"

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        retryable: bool = False,
        server_message: str | None = None,
    ) -> None:
        self.provider = provider
        self.status = status
        self.headers = dict(headers or {})
        self.retryable = retryable
        self.server_message = server_message
        """What the server said was wrong, shortened and free of secrets (None when it said nothing)."""
        super().__init__(message)


class EmbeddingsRefusedError(RunError):
    """The endpoint of ``retrieval.embeddings`` refused for good (a wrong key, an unknown model):
    tools cannot be ranked by meaning until the config is fixed, and guessing on with words alone
    would hide it. A transient failure is not this: the run then plans with BM25 and says so."""

    code = "embeddings_refused"


class ParseError(RunError):
    """A model reply that does not hold what the phase needs."""

    code = "parse_error"


class ToolValidationError(RunError):
    """Arguments that failed the tool's input schema."""

    code = "tool_validation_error"

    def __init__(self, message: str, *, tool_name: str, argument: str | None = None) -> None:
        self.tool_name = tool_name
        self.argument = argument
        super().__init__(message)


class ToolExecutionError(RunError):
    """A tool raised or timed out."""

    code = "tool_execution_error"


class BudgetExhaustedError(RunError):
    """An iteration or retry budget ran out."""

    code = "budget_exhausted"


class ToolError(Exception):
    """Raised by a tool for an expected failure: its message is shown to the model as the error.

    Deliberately not a PesAgentError: it belongs to the tool author's vocabulary, and the executor
    turns it into an error result rather than letting it escape.
    """
