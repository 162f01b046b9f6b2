"""Tools imported by path in tests (``load_tools`` needs a real importable module; a child process too)."""

from __future__ import annotations

from pes_agent.tools.decorators import tool


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@tool
def shout(text: str) -> str:
    """Return the text in capitals."""
    return text.upper()


@tool
def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    return a * b


def plain_add(a: int, b: int = 1) -> int:
    """Add two integers."""
    return a + b


def untyped(a):  # type: ignore[no-untyped-def]
    """A function the loader must refuse: its argument has no type."""
    return a


BOTH = [echo, shout]
NOT_A_TOOL = 42
