"""What a ``FakeOpenAIServer`` does with a chat request: the scripted actions, one per request."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ActionLike", "FakeAction", "FakeDisconnect", "FakeError", "FakeHang", "FakeMalformed", "FakeReply"]


@dataclass(frozen=True, kw_only=True)
class FakeReply:
    """A successful chat completion. ``usage=None`` leaves the ``usage`` field out of the body."""

    text: str = ""
    finish_reason: str = "stop"
    usage: Mapping[str, int] | None = None
    reasoning_content: str | None = None
    model: str | None = None
    """Model id reported back; None echoes the request's ``model``."""
    chunk_chars: int = 16
    """Characters per content delta when the request asks for a stream."""


@dataclass(frozen=True, kw_only=True)
class FakeError:
    """An HTTP error status; ``body`` None gives an OpenAI-style ``{"error": {...}}`` object."""

    status: int = 500
    headers: Mapping[str, str] = field(default_factory=dict)
    body: str | Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class FakeHang:
    """Say nothing for ``seconds`` (longer than the client's timeout), then drop the connection."""

    seconds: float = 3600.0


@dataclass(frozen=True, kw_only=True)
class FakeMalformed:
    """A body the client cannot use (not JSON, or JSON without ``choices``)."""

    body: str = "not json"
    status: int = 200
    content_type: str = "application/json"


@dataclass(frozen=True, kw_only=True)
class FakeDisconnect:
    """Close the connection without answering (the client sees a connection error)."""


FakeAction = FakeReply | FakeError | FakeHang | FakeMalformed | FakeDisconnect
ActionLike = FakeAction | str
