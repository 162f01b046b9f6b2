"""The GBNF grammar a reply is decoded under, the same in-process (``llamacpp``) and over the wire
(the ``openai`` adapter's ``grammar`` dialect): one compiler, so a server decodes exactly what the
in-process model would.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pes_agent.errors import ProviderError
from pes_agent.llm.gbnf import GrammarBounds, schema_to_gbnf
from pes_agent.llm.llamacpp_schema import bounds_for, grammar_schema

__all__ = ["DEFAULT_MAX_TOKENS", "check_rule_names", "grammar_for"]

DEFAULT_MAX_TOKENS = 256
"""Reply cap when neither the call nor the config sets one: enough for a short plan or a tool call."""


def grammar_for(schema: Mapping[str, Any], phase: str, max_tokens: int) -> str:
    """The GBNF grammar a reply of ``phase`` is decoded under: the schema tightened so the reply
    ends within ``max_tokens`` (``llamacpp_schema``), then compiled flat (``gbnf``).

    A schema no grammar can express (an empty enum, a remote ``$ref``) is a permanent refusal with
    the reason, never a crash and never a silent fallback to unconstrained text.
    """
    bounds = bounds_for(phase, max_tokens)
    try:
        grammar = schema_to_gbnf(
            grammar_schema(dict(schema), bounds),
            GrammarBounds(max_string=bounds.max_length, max_items=bounds.max_items),
        )
        check_rule_names(grammar)
    except (ValueError, TypeError, RecursionError) as exc:
        raise ProviderError(
            f"the {phase} reply schema cannot be turned into a grammar: {exc}; fix the tool's input "
            "schema, or set `structured_output: false` for free-text replies",
            retryable=False,
        ) from exc
    return grammar


_RULE = re.compile(r"^([a-zA-Z0-9-]+) ::= ", re.MULTILINE)


def check_rule_names(grammar: str) -> None:
    """Every line of a compiled grammar defines a rule whose name llama.cpp can read. llama-cpp-python
    0.3 does not refuse a grammar its parser rejects: it prints the parse error and the process dies
    of SIGSEGV at the next generation. So a grammar that llama.cpp could not parse stops here, as a
    refusal naming the line, never reaching it (in this process or a server's)."""
    for line in grammar.splitlines():
        if line and not _RULE.match(line):
            raise ValueError(f"the grammar has a rule llama.cpp cannot parse: {line[:80]!r}")
