"""Prompt snapshots as reviewable text files under the top-level ``snapshots/`` folder.

A prompt's wording is the product, so a change to it should read like a change to prose in review:
one UTF-8 file per snapshot (``snapshots/<test module>/<test name>.txt``), message contents verbatim,
and the o200k token count in the header so growth is visible next to the words that caused it.

The count needs tiktoken's offline o200k file. Without it the header says ``tokens(o200k): ?`` and
comparison masks the count on both sides, so the suite still passes on machines without the cache;
with it, a changed count is a snapshot diff like any other.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from syrupy.data import SnapshotCollection
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

if TYPE_CHECKING:
    from syrupy.location import PyTestLocation
    from syrupy.types import PropertyFilter, PropertyMatcher, SerializableData, SerializedData

    from pes_agent.llm.types import PromptRequest

SNAPSHOT_ROOT = Path(__file__).resolve().parents[1] / "snapshots"
"""Where prompt snapshots live: beside ``tests/``, so reviewers find every prompt in one place."""

O200K_CACHE_FILE = "fb374d419588a4632f3f557e76b4b70aebbca790"
"""tiktoken's cache name for the o200k_base rank file (SHA-1 of its download URL)."""

_TOKEN_FIELD = re.compile(r"(tokens\(o200k\): )(\d+|\?)$")


def o200k_cache_present() -> bool:
    """True when tiktoken can load o200k_base offline; otherwise it would try to download it."""
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR", "")
    return bool(cache_dir) and (Path(cache_dir) / O200K_CACHE_FILE).is_file()


@cache
def _o200k() -> Any:
    import tiktoken  # lazy: only snapshot comparisons with the cache present pay for it

    return tiktoken.get_encoding("o200k_base")


def count_o200k_tokens(request: PromptRequest) -> int | None:
    """Sum of o200k tokens over the message contents, or None when the offline cache is missing."""
    if not o200k_cache_present():
        return None
    encoding = _o200k()
    # disallowed_special=(): a prompt quoting "<|endoftext|>" is text to count, not an error.
    return sum(len(encoding.encode(m.content, disallowed_special=())) for m in request.messages)


def render_prompt(request: PromptRequest, *, tokens: int | None) -> str:
    """The snapshot text: a one-line header, then each message under its role, contents verbatim."""
    header = " · ".join(
        [
            f"# phase: {request.phase}",
            f"step: {request.step_id or '-'}",
            f"tools: {', '.join(request.tools) or '-'}",
            f"tokens(o200k): {'?' if tokens is None else tokens}",
        ]
    )
    parts = [header]
    for message in request.messages:
        parts += [f"## {message.role}", message.content]
    if request.response_schema is not None:
        schema = json.dumps(request.response_schema, indent=2, ensure_ascii=False)  # key order as sent
        parts += ["## response_schema", schema]
    return "\n".join(parts) + "\n"


def mask_token_count(text: str) -> str:
    """Replace the header's token count with ``?`` so two renderings compare without it."""
    header, newline, rest = text.partition("\n")
    return _TOKEN_FIELD.sub(r"\1?", header) + newline + rest


class PromptSnapshotExtension(SingleFileSnapshotExtension):
    """syrupy extension for ``PromptRequest`` values; see the module docstring for the format.

    Names follow syrupy's own scheme (``test_x.txt``, ``test_x.1.txt``, ``test_x[planning].txt``)
    because syrupy relates a snapshot file back to its test by that scheme: with any other
    separator, snapshots of skipped tests would be reported unused and deleted on update.
    """

    file_extension = "txt"
    _write_mode = WriteMode.TEXT

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
    ) -> SerializedData:
        from pes_agent.llm.types import PromptRequest  # lazy: a broken package fails only its tests

        if not isinstance(data, PromptRequest):
            raise TypeError(
                f"`prompt_snapshot` compares `PromptRequest` values, got {type(data).__name__!r}; "
                "use the plain `snapshot` fixture for other data"
            )
        return render_prompt(data, tokens=count_o200k_tokens(data))

    def matches(self, *, serialized_data: SerializableData, snapshot_data: SerializableData) -> bool:
        if isinstance(serialized_data, str) and isinstance(snapshot_data, str):
            return self._comparable(serialized_data) == self._comparable(snapshot_data)
        return False

    def diff_lines(self, serialized_data: SerializedData, snapshot_data: SerializedData) -> Iterator[str]:
        # Without the cache the count is not compared, so it must not show up as a difference either.
        return super().diff_lines(
            self._comparable(str(serialized_data)), self._comparable(str(snapshot_data))
        )

    @staticmethod
    def _comparable(text: str) -> str:
        return text if o200k_cache_present() else mask_token_count(text)

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(SNAPSHOT_ROOT / test_location.basename)

    # Exact text both ways (newline=""): a prompt containing "\r" must not be rewritten on read.
    def read_snapshot_data_from_location(
        self, *, snapshot_location: str, snapshot_name: str, session_id: str
    ) -> SerializableData | None:
        try:
            with open(snapshot_location, encoding="utf-8", newline="") as f:
                return f.read()
        except FileNotFoundError:
            return None

    @classmethod
    def write_snapshot_collection(
        cls, *, snapshot_collection: SnapshotCollection, name_order: dict[str, int] | None = None
    ) -> None:
        data = next(iter(snapshot_collection)).data
        if not isinstance(data, str):
            raise TypeError(f"prompt snapshots are text, got {type(data).__name__!r}")
        with open(snapshot_collection.location, "w", encoding="utf-8", newline="") as f:
            f.write(data)
