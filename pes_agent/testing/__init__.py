"""Test doubles for code that embeds pes-agent: a scripted provider and (loopback) fake servers."""

from pes_agent.testing.scripted import ScriptedCall, ScriptedProvider, ScriptedReply

__all__ = ["ScriptedCall", "ScriptedProvider", "ScriptedReply"]
