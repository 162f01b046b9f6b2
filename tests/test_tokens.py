"""Token counts: exact with the offline o200k cache, a labelled estimate without it, never a crash."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pes_agent.llm import tokens
from pes_agent.llm.tokens import (
    count_messages,
    count_tokens,
    estimate_tokens,
    reset_token_cache,
    tokenizer_available,
)
from pes_agent.llm.types import Message

SHARED_CACHE = Path(__file__).resolve().parents[1].parent / "shared" / "tiktoken"
O200K_FILE = "fb374d419588a4632f3f557e76b4b70aebbca790"
needs_o200k = pytest.mark.skipif(
    not (SHARED_CACHE / O200K_FILE).is_file(), reason=f"offline o200k cache not found in {SHARED_CACHE}"
)


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    reset_token_cache()
    yield
    reset_token_cache()


@pytest.fixture
def shared_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(SHARED_CACHE))


@pytest.fixture
def get_encoding_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every encoding pes-agent asks tiktoken for."""
    import tiktoken

    calls: list[str] = []
    real = tiktoken.get_encoding

    def recording(name: str) -> Any:
        calls.append(name)
        return real(name)

    monkeypatch.setattr(tiktoken, "get_encoding", recording)
    return calls


@needs_o200k
@pytest.mark.usefixtures("shared_cache")
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hello world", 2),
        ("The quick brown fox jumps over the lazy dog.", 10),
        # special-token text is counted as ordinary text, not rejected
        ("Plan: call webSearch, then <|endoftext|> summarise.", 17),
        ("", 0),
    ],
)
def test_exact_o200k_count_with_the_offline_cache(text: str, expected: int) -> None:
    count = count_tokens(text)
    assert (count.tokens, count.source, count.encoding) == (expected, "tiktoken", "o200k_base")


@needs_o200k
@pytest.mark.usefixtures("shared_cache")
def test_messages_count_is_the_sum_of_contents_without_chat_overhead() -> None:
    messages = [
        Message(role="system", content="hello world"),
        Message(role="user", content="The quick brown fox jumps over the lazy dog."),
    ]
    count = count_messages(messages)
    assert (count.tokens, count.source) == (12, "tiktoken")
    assert count_messages([m.to_dict() for m in messages]).tokens == 12


def test_empty_cache_dir_gives_a_labelled_estimate_without_calling_tiktoken(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import tiktoken

    def no_download(name: str) -> Any:
        raise AssertionError(f"tiktoken.get_encoding({name!r}) called: it would try to download")

    monkeypatch.setattr(tiktoken, "get_encoding", no_download)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with caplog.at_level(logging.WARNING, logger="pes_agent"):
        first = count_tokens("abcdefghij")
        second = count_messages([Message(role="user", content="abcd"), Message(role="user", content="abcde")])
    assert (first.tokens, first.source, first.encoding) == (3, "estimate", "o200k_base")
    assert (second.tokens, second.source) == (1 + 2, "estimate")
    assert not tokenizer_available()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, "the fallback is announced once, not on every count"
    assert "TIKTOKEN_CACHE_DIR" in warnings[0].getMessage()


def test_cache_disabled_by_empty_variable_gives_an_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert count_tokens("twelve chars").source == "estimate"


def test_a_tiktoken_failure_becomes_an_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    """An encoding the offline check cannot vouch for is tried, and any failure is absorbed."""
    import tiktoken

    def broken(name: str) -> Any:
        raise ValueError(f"Unknown encoding {name}")

    monkeypatch.setattr(tiktoken, "get_encoding", broken)
    count = count_tokens("abcdefgh", encoding="my_plugin_encoding")
    assert (count.tokens, count.source, count.encoding) == (2, "estimate", "my_plugin_encoding")


@needs_o200k
@pytest.mark.usefixtures("shared_cache")
def test_encoding_is_loaded_once(get_encoding_calls: list[str]) -> None:
    for text in ("one", "two", "three"):
        count_tokens(text)
    count_messages([Message(role="user", content="four")])
    assert tokenizer_available()
    assert get_encoding_calls == ["o200k_base"]


def test_estimate_is_characters_over_four_rounded_up() -> None:
    assert [estimate_tokens(t) for t in ("", "a", "abcd", "abcde")] == [0, 1, 1, 2]


def test_importing_the_module_does_not_import_tiktoken() -> None:
    code = "import sys, pes_agent.llm.tokens; print('tiktoken' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(Path(tokens.__file__).resolve().parents[2])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"
