"""The package's shape, checked: no import circle among evalstore's modules, its folders in declared
layers that import only downward (both counting imports inside functions and type-only imports),
and no function over 80 lines."""

from __future__ import annotations

import ast
from pathlib import Path

from support import ROOT

PACKAGE = ROOT / "evalstore"
MAX_FUNCTION_LINES = 80


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name: str, path: Path) -> set[str]:
    """The evalstore modules ``name`` imports anywhere in its text (a name imported from a package
    counts as its submodule when there is one, else as the package)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            out |= {f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names}
    return {m for m in out if m in MODULES and m != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle():
    graph = {name: _imports(name, path) for name, path in MODULES.items()}
    assert sum(map(len, graph.values())) > 300
    assert _cycles(graph) == []


def test_a_circle_is_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


#: evalstore's top-level modules and folders (``__init__`` = the package's own ``__init__.py``) in
#: layers, lowest first; every module of a folder belongs to its folder's layer (no exception). A
#: module of one layer imports from its own layer and the layers below, never from a layer above,
#: and the folders of one layer import each other without a circle. The rule counts every import:
#: inside functions, type-only, and of optional dependencies' code (no exception is needed).
#: docs/architecture.md ("Shape") describes them.
LAYERS: list[tuple[str, set[str]]] = [
    ("foundations", {"errors", "version", "base"}),
    ("statistics on arrays", {"stats"}),
    ("the database", {"db"}),
    ("tables and writers", {"output"}),
    ("metrics", {"metrics"}),
    ("opening a store", {"opening"}),
    ("ingest", {"ingest"}),
    ("intervals", {"intervals"}),
    ("results", {"results"}),
    ("evaluation", {"evaluation", "layout", "spark"}),
    ("built on evaluation", {"explain", "subsample", "pool"}),
    ("analyses", {"meta", "judges", "repro", "fusion"}),
    ("comparisons", {"comparison"}),
    ("the evaluation entry point", {"api"}),
    ("the store", {"store"}),
    ("front ends", {"web", "__init__", "cli", "pyterrier"}),
    ("entry points", {"entry", "__main__"}),
]  # fmt: skip


def _folder(module: str) -> str:
    """The layer node of a module: its top-level module or folder under evalstore."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _folder_graph() -> dict[str, dict[str, set[str]]]:
    """node -> imported node -> the module imports behind the arrow."""
    graph: dict[str, dict[str, set[str]]] = {_folder(m): {} for m in MODULES}
    for name, path in MODULES.items():
        for other in _imports(name, path):
            a, b = _folder(name), _folder(other)
            if a != b:
                graph[a].setdefault(b, set()).add(f"{name} -> {other}")
    return graph


def _upward(graph: dict[str, dict[str, set[str]]], layers: list[tuple[str, set[str]]]) -> list[str]:
    """The arrows from a node to a node of a higher layer (with the imports behind them)."""
    level = {node: i for i, (_, nodes) in enumerate(layers) for node in nodes}
    return [
        f"{a} ({layers[level[a]][0]}) -> {b} ({layers[level[b]][0]}): {sorted(why)}"
        for a, targets in sorted(graph.items())
        for b, why in sorted(targets.items())
        if level[b] > level[a]
    ]


def test_every_folder_has_one_layer():
    declared = [node for _, nodes in LAYERS for node in nodes]
    assert len(declared) == len(set(declared)), "a node in two layers"
    assert set(_folder_graph()) == set(declared), "add a new module or folder to LAYERS"


def test_no_folder_imports_a_layer_above_it():
    graph = _folder_graph()
    assert sum(map(len, graph.values())) > 150
    assert _upward(graph, LAYERS) == []
    assert _cycles({a: set(targets) for a, targets in graph.items()}) == []


def test_an_upward_import_is_found():
    graph = {"low": {"high": {"evalstore.low.x -> evalstore.high"}}, "high": {}}
    assert _upward(graph, [("low", {"low"}), ("high", {"high"})]) == [
        "low (low) -> high (high): ['evalstore.low.x -> evalstore.high']"
    ]
    assert _upward(graph, [("high", {"high"}), ("low", {"low"})]) == []


def test_no_function_over_80_lines():
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path in MODULES.values()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []


def _unit_test_files_without_a_module(tests: Path, package: Path) -> list[str]:
    """The test files under ``tests`` not named after a module or package at the same path below
    ``package`` (``tests/evalstore/ingest/test_fast.py`` tests ``evalstore/ingest/fast.py``)."""
    out = []
    for path in sorted(tests.rglob("test_*.py")):
        rel = path.relative_to(tests)
        name = rel.stem.removeprefix("test_")
        target = package / rel.parent / name
        if not (target.with_suffix(".py").is_file() or (target / "__init__.py").is_file()):
            out.append(str(rel))
    return out


def test_unit_tests_mirror_the_package():
    """tests/README.md: the tests of evalstore/<path>/<module>.py are in
    tests/evalstore/<path>/test_<module>.py; scenarios have folders of their own."""
    assert _unit_test_files_without_a_module(ROOT / "tests" / "evalstore", PACKAGE) == []


def test_a_test_file_without_its_module_is_found(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "mod.py").write_text("")
    (tmp_path / "tests" / "sub").mkdir(parents=True)
    for name in ("test_mod.py", "test_issue_12.py"):
        (tmp_path / "tests" / "sub" / name).write_text("")
    assert _unit_test_files_without_a_module(tmp_path / "tests", tmp_path / "pkg") == ["sub/test_issue_12.py"]


#: Function-local imports of the package allowed at most (each keeps a heavy optional library, or the
#: command line's start, out of the way until used; the line says why).
MAX_LOCAL_IMPORTS = 10


def _local_imports() -> list[tuple[str, int, str]]:
    """``(module path, line, text)`` of every import of an evalstore module inside a function."""
    out = []
    for path in MODULES.values():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for fn in ast.walk(ast.parse(text)):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("evalstore")):
                    out.append((str(path.relative_to(ROOT)), node.lineno, lines[node.end_lineno - 1]))
    return out


def test_few_function_local_imports_each_with_its_reason():
    local = _local_imports()
    assert len(local) <= MAX_LOCAL_IMPORTS, [f"{p}:{n}" for p, n, _ in local]
    assert [f"{p}:{n}" for p, n, line in local if "#" not in line] == []
