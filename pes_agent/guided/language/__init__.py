"""What guided mode knows of a human language, behind one small protocol.

Guided mode reads requests: where a sentence only gives context, how a date is written, where a name
ends. That knowledge is a language's, not a tool's or a domain's, and it lives in one module per
language (``en``); the rest of guided mode asks this protocol. A second language implements the same
functions.
"""

from __future__ import annotations

from pes_agent.guided.language.base import Coded, Counted, DateSpan, Language, TimeSpan
from pes_agent.guided.language.en import ENGLISH

__all__ = ["Coded", "Counted", "DateSpan", "Language", "TimeSpan", "language"]


def language() -> Language:
    """The language requests are read in (English: the only one implemented)."""
    return ENGLISH
