"""Small offline tools for `config/local.yaml`: the calculator plus two text tools.

They are deliberately tiny and deterministic, so a run on a small local model shows whether the model
picked the right tool and passed the right values (including values taken from an earlier step),
not whether a remote service answered. Their free-text parameters carry no description on purpose:
a 135M-parameter model copied "The text to change." (and the demo calculator's "Arithmetic such as
`(2 + 3) * 4`") into the argument instead of the user's values.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from pes_agent.demo.arith import evaluate
from pes_agent.tools.decorators import tool

TextMode = Literal["upper", "lower", "title", "reverse"]


Expression = Annotated[str, Field(pattern=r"^[0-9+*/(). -]+$")]


@tool
def calculator(expression: Expression) -> float:
    """Arithmetic on numbers: add (+), subtract (-), multiply (*), divide (/), square or power (**)."""
    return evaluate(expression)


@tool
def word_count(text: str) -> dict[str, int]:
    """Count the words (separated by whitespace) and the characters of a text."""
    return {"words": len(text.split()), "characters": len(text)}


@tool
def transform_text(
    text: str,
    mode: Annotated[TextMode, Field(description="upper, lower, title (capitalize words) or reverse.")],
) -> dict[str, str]:
    """Change a text to upper case, lower case or title case, or reverse its characters."""
    changed = {
        "upper": text.upper(),
        "lower": text.lower(),
        "title": text.title(),
        "reverse": text[::-1],
    }[mode]
    return {"text": changed}


LOCAL_TOOLS = [calculator, word_count, transform_text]
"""What `config/local.yaml` registers: nothing here needs the network or touches files."""
