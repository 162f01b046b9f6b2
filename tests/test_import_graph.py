"""No import cycles inside `pes_agent`: the module graph, read from the source, has no ring.

Every ``import`` and ``from ... import`` of a `pes_agent` module is an edge, wherever it stands: at
the top of a module, in a ``try``, or inside a function (a deferred import is still a dependency, and
hiding one in a function is no way to open a ring). Only imports under ``if TYPE_CHECKING:`` are left
out: they never run. ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to
``pkg``; relative imports are resolved against the importing module's package. Importing a module is
not counted as an edge to its parent packages (a package's ``__init__`` may hand on its submodules'
names without making every submodule part of a ring).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "pes_agent"

Graph = dict[str, set[str]]


def module_names(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` below ``package_dir`` (a package is its ``__init__``)."""
    root = package_dir.parent
    names: dict[str, Path] = {}
    for file in sorted(package_dir.rglob("*.py")):
        parts = list(file.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = file
    return names


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run, at any depth; the body of ``if TYPE_CHECKING:`` is skipped
    (its ``else`` is not)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute name ``from <this> import ...`` refers to."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    anchor = package[: len(package) - (node.level - 1)]
    return ".".join([*anchor, node.module] if node.module else anchor)


def _within(name: str, modules: Mapping[str, Path]) -> str | None:
    """``name`` if it is a module of the package, else its longest prefix that is, else None."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def import_graph(package_dir: Path) -> Graph:
    modules = module_names(package_dir)
    graph: Graph = {name: set() for name in modules}
    for module, file in modules.items():
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
        is_package = file.name == "__init__.py"
        for node in _imports(tree):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [_within(alias.name, modules) for alias in node.names]
            else:
                base = _base(module, is_package, node)
                for alias in node.names:
                    submodule = f"{base}.{alias.name}"
                    targets.append(submodule if submodule in modules else _within(base, modules))
            graph[module].update(t for t in targets if t is not None and t != module)
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted, in order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def ring(graph: Mapping[str, set[str]], component: list[str]) -> list[str]:
    """One closed path through ``component``, starting and ending at its first module."""
    members = set(component)
    start = component[0]
    paths: dict[str, list[str]] = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(graph[node] & members):
            if target == start:
                return [*paths[node], start]
            if target not in paths:
                paths[target] = [*paths[node], target]
                queue.append(target)
    raise AssertionError(f"{component} is no cycle")  # pragma: no cover


def describe(graph: Mapping[str, set[str]]) -> str:
    lines = []
    for component in cycles(graph):
        lines.append(f"{', '.join(component)}: {' -> '.join(ring(graph, component))}")
    return "\n".join(lines)


def test_pes_agent_has_no_import_cycles() -> None:
    graph = import_graph(PACKAGE_DIR)
    assert len(graph) > 50, "the walk found too few modules: is PACKAGE_DIR right?"
    found = describe(graph)
    if found:
        pytest.fail(
            "import cycles in pes_agent (move the shared piece into a lower module that both import;\n"
            "an import inside a function still counts, one under `if TYPE_CHECKING:` does not):\n" + found,
            pytrace=False,
        )


# --- the walk itself, on a package written for the test ---------------------------------------------


def _write(root: Path, files: Mapping[str, str]) -> Path:
    for relative, text in files.items():
        file = root / relative
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_a_deferred_import_closes_a_ring(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg.b import thing\n",
            "pkg/b.py": "def thing():\n    from pkg import a\n    return a\n",
        },
    )
    graph = import_graph(pkg)
    assert cycles(graph) == [["pkg.a", "pkg.b"]]
    assert describe(graph) == "pkg.a, pkg.b: pkg.a -> pkg.b -> pkg.a"


def test_type_checking_imports_are_no_edges_but_their_else_is(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "import pkg.b\n",
            "pkg/b.py": (
                "import typing\nfrom typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from pkg.a import x\n"
                "if typing.TYPE_CHECKING:\n    import pkg.a\nelse:\n    from . import c\n"
            ),
            "pkg/c.py": "",
        },
    )
    graph = import_graph(pkg)
    assert graph["pkg.b"] == {"pkg.c"}
    assert cycles(graph) == []


@pytest.mark.parametrize(
    ("module", "source", "target"),
    [
        ("pkg/sub/m.py", "from . import n\n", "pkg.sub.n"),
        ("pkg/sub/m.py", "from .. import top\n", "pkg.top"),
        ("pkg/sub/m.py", "from ..top import name\n", "pkg.top"),
        ("pkg/sub/__init__.py", "from .n import name\n", "pkg.sub.n"),
        ("pkg/sub/m.py", "from pkg.sub import n\n", "pkg.sub.n"),
        ("pkg/sub/m.py", "from pkg.sub import not_a_module\n", "pkg.sub"),
        ("pkg/sub/m.py", "import pkg.top as t\n", "pkg.top"),
    ],
)
def test_import_targets_are_resolved(tmp_path: Path, module: str, source: str, target: str) -> None:
    files = {"pkg/__init__.py": "", "pkg/top.py": "", "pkg/sub/__init__.py": "", "pkg/sub/n.py": ""}
    pkg = _write(tmp_path, {**files, module: source})
    graph = import_graph(pkg)
    name = module.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    assert graph[name] == {target}
