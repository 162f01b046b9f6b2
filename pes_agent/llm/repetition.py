"""Stop free text that has started to repeat itself.

At temperature 0 a small model that has said something tends to say it again, line after line,
until the token cap: slow (a 512-token answer costs seconds) and useless. A repeat penalty makes it
rarer but also makes the model avoid the numbers it must copy. So free text is read as it is
generated, and generation stops at the first repeat: a line said before, or a run of words said
before. The reply keeps what came before the repeat.
"""

from __future__ import annotations

__all__ = ["RepetitionGuard", "cut_repeat"]

NGRAM = 8
"""Words in a run that, said twice, is a repeat (short enough to catch loops, long enough that
ordinary prose never trips it)."""
MIN_LINE = 12
"""Characters a line needs before saying it twice counts (short lines such as "-" repeat legitimately)."""


class RepetitionGuard:
    """Fed the reply piece by piece; ``feed`` says when it repeats, ``text`` is the reply up to there."""

    def __init__(self, *, ngram: int = NGRAM, min_line: int = MIN_LINE) -> None:
        self._ngram = ngram
        self._min_line = min_line
        self._text = ""
        self._cut: int | None = None
        self._lines: set[str] = set()
        self._line_start = 0
        self._seen: set[tuple[str, ...]] = set()
        self._words: list[tuple[str, int]] = []
        """Completed words with their start offsets."""
        self._word_scan = 0

    @property
    def text(self) -> str:
        """The reply without its repeat (all of it while none was found)."""
        return (self._text if self._cut is None else self._text[: self._cut]).rstrip()

    @property
    def repeated(self) -> bool:
        return self._cut is not None

    def feed(self, piece: str) -> bool:
        if self._cut is not None:
            return True
        self._text += piece
        self._cut = self._repeated_line()
        if self._cut is None:
            self._cut = self._repeated_words()
        return self._cut is not None

    def _repeated_line(self) -> int | None:
        while (end := self._text.find("\n", self._line_start)) >= 0:
            start, self._line_start = self._line_start, end + 1
            line = " ".join(self._text[start:end].split()).casefold()
            if len(line) < self._min_line:
                continue
            if line in self._lines:
                return start
            self._lines.add(line)
        return None

    def _repeated_words(self) -> int | None:
        text, i = self._text, self._word_scan
        while i < len(text):
            while i < len(text) and text[i].isspace():
                i += 1
            start = i
            while i < len(text) and not text[i].isspace():
                i += 1
            if i >= len(text):  # the last word may still be growing
                break
            self._words.append((text[start:i].casefold(), start))
            self._word_scan = i
            if len(self._words) >= self._ngram:
                run = self._words[-self._ngram :]
                key = tuple(w for w, _ in run)
                if key in self._seen:
                    return run[0][1]
                self._seen.add(key)
        return None


def cut_repeat(text: str) -> tuple[str, bool]:
    """``text`` up to its first repeat, and whether it had one (for a reply that arrived whole)."""
    guard = RepetitionGuard()
    guard.feed(text + "\n")
    return (guard.text, True) if guard.repeated else (text, False)
