"""What the adapters over official SDKs (``openai``, ``anthropic``, ``gemini``) share.

- The SDK is an optional extra: it is looked for (not imported) when the provider is built, so
  ``pes-agent validate`` and the first run fail at once with the ``pip install`` that fixes it, and it
  is imported on the first call only.
- One client (and connection pool) per event loop, created on first use there: an instance built at
  service start keeps working under a later ``asyncio.run`` or in a thread with its own loop,
  instead of failing with "Event loop is closed". Clients of closed loops are forgotten.
- The key comes from ``api_key`` or the environment variable ``api_key_env`` names (by default the
  adapter's own); it never appears in a ``repr``, a log line or an error (``_scrub``).
- One retry layer, the project's: SDK retries are off, tenacity retries what ``retry.is_retryable``
  says (429, 408/409, 5xx, timeouts, connection failures), waiting as ``retry.wait_seconds`` says. A
  streamed call is retried only until its first piece arrives. Every failure leaves as a
  ``ProviderError`` raised outside the ``except`` block, so the SDK's exception (which holds the
  request and its key header) is neither chained nor kept as context.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import ClassVar, Generic, Self, TypeVar
from urllib.parse import urlsplit

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from pes_agent.config import ProviderConfig
from pes_agent.config.presets import key_variable
from pes_agent.errors import ConfigError, ProviderError
from pes_agent.llm.failures import failure_of
from pes_agent.llm.retry import describe_failure, failure_report, is_body_refusal, is_retryable, wait_seconds
from pes_agent.llm.types import CallOptions

__all__ = ["SdkAdapter", "require_sdk"]

_log = logging.getLogger("pes_agent")

ClientT = TypeVar("ClientT")
T = TypeVar("T")


def require_sdk(module: str, extra: str, provider: str) -> None:
    """Fail early, naming the extra, when ``module`` is not installed (it is not imported here)."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ConfigError(
            f"provider {provider!r} uses the `{extra}` adapter, whose SDK (`{module}`) is not "
            f"installed: run `pip install 'pes-agent[{extra}]'`",
            key_path=f"providers.{provider}.adapter",
            value=extra,
        )


class SdkAdapter(Generic[ClientT]):
    """Base of an adapter over an official SDK; subclasses build clients and send requests."""

    adapter: ClassVar[str]
    """The adapter's name (and its extra's)."""
    sdk_module: ClassVar[str]
    default_base_url: ClassVar[str]

    def __init__(
        self,
        name: str,
        config: ProviderConfig,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        require_sdk(self.sdk_module, self.adapter, name)
        self.name = name
        self.config = config
        self._sleep = sleep
        self._clients: dict[asyncio.AbstractEventLoop, ClientT] = {}
        self._refused_warned: set[str] = set()
        """``llm_params`` keys already warned about: each is logged once per provider."""

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, model={self.config.model!r}, "
            f"endpoint={self._endpoint()!r})"
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close this loop's client; clients of other loops can only be closed on their own loop."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await self._close_client(client)

    # -- for subclasses --------------------------------------------------------------------------

    def _new_client(self, api_key: str) -> ClientT:
        raise NotImplementedError

    async def _close_client(self, client: ClientT) -> None:
        raise NotImplementedError

    def _path(self, model: str, *, stream: bool) -> str:
        """The request's path below the endpoint, as errors show it (``/v1/messages``)."""
        raise NotImplementedError

    # -- shared ----------------------------------------------------------------------------------

    def _client(self) -> ClientT:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            # Not a WeakKeyDictionary: a client refers to its loop, so the key would never die.
            # Forgetting the clients of closed loops when a new loop turns up bounds the map instead.
            for other in list(self._clients):  # list(): other threads' loops may add entries
                if other.is_closed():
                    self._clients.pop(other, None)
            client = self._clients[loop] = self._new_client(self._api_key())
        return client

    def _model(self, requested: str | None) -> str:
        model = requested or self.config.model
        if not model:
            raise ProviderError(
                f"provider {self.name!r} has no model: set `providers.{self.name}.model` or a "
                "`providerConfig.modelId`",
                provider=self.name,
            )
        return model

    def _api_key(self) -> str:
        if self.config.api_key is not None:
            return self.config.api_key.get_secret_value()
        variable = key_variable(self.config)
        key = os.environ.get(variable) if variable else None
        if key:
            return key
        keyless = self._keyless()
        if keyless is not None:
            return keyless
        raise ProviderError(
            f"provider {self.name!r} has no API key for {self._endpoint()}: set the `{variable}` "
            f"environment variable, or `providers.{self.name}.api_key: ${{{variable}}}` (or "
            "`api_key_env`: the name of the variable that holds it)",
            provider=self.name,
        )

    def _keyless(self) -> str | None:
        """What to send when no key is configured, if the endpoint may need none (else None)."""
        return None

    async def _with_retries(
        self,
        send: Callable[[], Awaitable[T]],
        *,
        model: str,
        timeout: float,
        stream: bool = False,
        refusal_hint: str = "",
    ) -> T:
        """``send()`` under the one retry policy; ``refusal_hint`` is added to the error when the server
        refused the request's body (``retry.is_body_refusal``)."""
        attempts = 0

        async def attempt() -> T:
            nonlocal attempts
            attempts += 1
            return await send()

        retrying = AsyncRetrying(
            stop=stop_after_attempt(1 + self.config.max_retries),
            retry=retry_if_exception(is_retryable),
            wait=wait_seconds,
            sleep=self._sleep,
            before_sleep=self._log_retry,
            reraise=True,
        )
        failure: Exception | None = None
        try:
            return await retrying(attempt)
        except ProviderError:
            raise
        except Exception as exc:
            if not self._is_sdk_error(exc):
                raise
            failure = exc
        # Raised outside the `except` block so the SDK error is neither chained nor kept as
        # `__context__`: it repeats the server's text (which may echo the key) and holds the request
        # with its key header. Everything useful is copied into our error, scrubbed.
        raise self._error(
            failure, model=model, timeout=timeout, attempts=attempts, stream=stream, refusal_hint=refusal_hint
        )

    def _is_sdk_error(self, exc: BaseException) -> bool:
        """A failure the SDK (or its HTTP client) reported, as opposed to a bug of ours."""
        root = self.sdk_module.split(".", 1)[0]
        return failure_of(exc) is not None or type(exc).__module__.split(".", 1)[0] == root

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        _log.info(
            "provider %r: %s; retry %d of %d in %.2fs",
            self.name,
            describe_failure(exc),
            state.attempt_number,
            self.config.max_retries,
            state.upcoming_sleep,
        )

    def _error(
        self,
        exc: BaseException,
        *,
        model: str,
        timeout: float,
        attempts: int = 1,
        streamed: int = 0,
        stream: bool = False,
        refusal_hint: str = "",
    ) -> ProviderError:
        report = failure_report(exc, provider=self.name, timeout=timeout)
        what = report.what
        hint = report.hint + (refusal_hint if is_body_refusal(report.status, report.retryable) else "")
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        if streamed:
            tries = (
                f" after {streamed} characters of the reply had streamed (not retried: part of it was "
                "already delivered)"
            )
            failure = failure_of(exc)
            if failure is not None and failure.kind == "connection":  # it did connect: it was cut
                what = "the connection was lost mid-reply" + (f" ({failure.cause})" if failure.cause else "")
                hint = "the server or a proxy dropped it; the same request may succeed if sent again"
        return ProviderError(
            self._scrub(f"{self._where(model, stream=stream)} failed{tries}: {what}; {hint}"),
            provider=self.name,
            status=report.status,
            headers={k: self._scrub(v) for k, v in report.headers.items()},
            retryable=report.retryable,
            server_message=self._scrub(report.said) or None,
        )

    def _unusable(
        self, model: str, what: str, *, status: int | None = None, stream: bool = False
    ) -> ProviderError:
        """A reply that arrived but cannot be used: not retried (the same request gets the same)."""
        return ProviderError(
            self._scrub(
                f"{self._where(model, stream=stream)} answered with a body that {what}; check that "
                f"`base_url` points at the {self.adapter} API"
            ),
            provider=self.name,
            status=status,
            retryable=False,
        )

    def _where(self, model: str, *, stream: bool = False) -> str:
        return (
            f"provider {self.name!r} (POST {self._endpoint()}{self._path(model, stream=stream)}, model "
            f"{model!r})"
        )

    def _endpoint(self) -> str:
        """The base URL without credentials, path end or query, safe to show."""
        parts = urlsplit(self.config.base_url or self.default_base_url)
        host = parts.hostname or "?"
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"

    def _scrub(self, text: str) -> str:
        """Servers sometimes echo the key they were sent; never pass it on."""
        variable = key_variable(self.config)
        secrets = [os.environ.get(variable, "") if variable else ""]
        if self.config.api_key is not None:
            secrets.append(self.config.api_key.get_secret_value())
        for secret in secrets:
            if len(secret) >= 4:
                text = text.replace(secret, "***")
        return text

    def _timeout(self, options: CallOptions) -> float:
        """The call's own timeout, else the provider's."""
        return options.timeout_s if options.timeout_s is not None else self.config.timeout_s

    def _warn_refused(self, refused: list[str]) -> None:
        new = [k for k in refused if k not in self._refused_warned]
        if new:
            self._refused_warned.update(new)
            _log.warning(
                "provider %r: ignoring llm_params %s: pes-agent sets these itself",
                self.name,
                ", ".join(f"`{k}`" for k in new),
            )
