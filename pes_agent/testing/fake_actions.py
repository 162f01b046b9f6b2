"""What a fake server (``FakeOpenAIServer``, ``FakeAnthropicServer``, ``FakeGeminiServer``) does with a model
request: the scripted actions, one per request, the same for every API."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ActionLike",
    "FakeAction",
    "FakeDisconnect",
    "FakeError",
    "FakeHang",
    "FakeMalformed",
    "FakeReply",
]


@dataclass(frozen=True, kw_only=True)
class FakeReply:
    """A successful reply, told in each fake's own wire format.

    ``finish_reason`` is OpenAI's word (``stop``, ``length``), translated by each fake to its API's
    (Anthropic's ``end_turn``/``max_tokens``, Gemini's ``STOP``/``MAX_TOKENS``); other values are
    sent as they are. ``usage`` holds the counts to report, in OpenAI's names or the API's own;
    None leaves the ``usage`` field out of an OpenAI body. ``reasoning_content`` is the thinking
    (``reasoning_content``, a ``thinking`` block, a ``thought`` part).
    """

    text: str = ""
    finish_reason: str = "stop"
    usage: Mapping[str, Any] | None = None
    reasoning_content: str | None = None
    model: str | None = None
    """Model id reported back; None echoes the request's ``model``."""
    chunk_chars: int = 16
    """Characters per content delta when the request asks for a stream."""
    cut_after: int | None = None
    """Streamed replies only: hang up after this many events, before the reply ends (a connection
    lost mid-stream). Events are the API's own: OpenAI's chunks, Anthropic's typed events (the first
    text delta is the third), Gemini's response chunks."""


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
