"""The contract the code cites is in the repository: every ``docs/...`` file a module, test or README
names exists, every section cited by name is a heading there, and every rule cited by number exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

_SOURCES = [
    *ROOT.joinpath("pes_agent").rglob("*.py"),
    *ROOT.joinpath("tests").rglob("*.py"),
    *ROOT.joinpath("tests", "fixtures").rglob("*.md"),
    *ROOT.joinpath("tests", "fixtures", "scenarios").glob("*.json"),
    *DOCS.glob("*.md"),
    ROOT / "README.md",
]
_CITE = re.compile(r"docs/([a-z_]+\.md)")
_OUTSIDE = re.compile(r"\b(?:DESIGN|RECOVERY|PARITY|STYLE|LAYOUT|ENGINES|MODELS)\.md\b")
_RULE = re.compile(
    r'docs/recovery\.md[,:]? \(?\\?"(Rules made exact|The gate, in order)\\?",? (?:step )?(\d)'
)


def _texts() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in _SOURCES if p.is_file() and p != Path(__file__)}


def test_every_cited_docs_file_exists() -> None:
    cited = {
        (path.relative_to(ROOT), name) for path, text in _texts().items() for name in _CITE.findall(text)
    }
    assert cited, "nothing cites docs/: the pattern is wrong"
    missing = sorted(f"{path}: docs/{name}" for path, name in cited if not (DOCS / name).is_file())
    assert not missing


def test_no_code_cites_a_contract_file_outside_the_repository() -> None:
    outside = sorted(
        f"{path.relative_to(ROOT)}: {m.group(0)}"
        for path, text in _texts().items()
        for m in _OUTSIDE.finditer(text)
    )
    assert not outside


def test_cited_recovery_rules_exist() -> None:
    recovery = (DOCS / "recovery.md").read_text(encoding="utf-8")
    sections = {
        "Rules made exact": recovery.split("## Rules made exact", 1)[1].split("\n## ", 1)[0],
        "The gate, in order": recovery.split("## The gate, in order", 1)[1].split("\n## ", 1)[0],
    }
    cited = {(s, int(n)) for text in _texts().values() for s, n in _RULE.findall(text)}
    assert ("Rules made exact", 1) in cited
    for section, number in sorted(cited):
        assert re.search(rf"^{number}\. ", sections[section], re.M), (
            f"{section} {number} is not in docs/recovery.md"
        )


def test_failure_classes_f1_to_f15_are_defined() -> None:
    recovery = (DOCS / "recovery.md").read_text(encoding="utf-8")
    for n in range(1, 16):
        assert f"| F{n} |" in recovery
