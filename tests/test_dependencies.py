"""The package and its tests import only what pyproject.toml declares.

A fresh ``pip install ".[test]"`` must be enough for ``pytest``: an import served by a package that
happens to be installed for another reason (Click, which Typer 0.29 no longer brings) passes on a
developer's machine and fails on a new one. Every third-party module imported anywhere in
``evalstore/``, ``tests/``, ``bench/`` or ``cli.py`` must come from a declared distribution (the core
dependencies or an extra), and what every test imports (``tests/support.py``, the ``conftest.py``
files) from the core dependencies or the ``test`` extra."""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

from support import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: tomli (the test extra declares it there)
    import tomli as tomllib

#: modules of the project itself (the package, cli.py, the tests' helpers at the top of tests/, the bench scripts)
LOCAL = {"evalstore", "cli"} | {p.stem for folder in ("tests", "bench") for p in (ROOT / folder).glob("*.py")}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(req: str) -> str:
    return _norm(re.split(r"[\s<>=!~\[;]", req, maxsplit=1)[0])


def declared() -> dict[str, set[str]]:
    """{"core": distributions, extra: distributions} from pyproject.toml (self-references resolved)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    groups = {"core": {_requirement_name(r) for r in project["dependencies"]}}
    extras = project["optional-dependencies"]
    for name, reqs in extras.items():
        groups[name] = {_requirement_name(r) for r in reqs if not r.startswith("evalstore")}
    for name, reqs in extras.items():  # evalstore[web] inside web-test, evalstore[test] inside dev
        for r in reqs:
            if r.startswith("evalstore["):
                for inner in r[len("evalstore[") : r.index("]")].split(","):
                    groups[name] |= groups[inner.strip()]
    return groups


def _guarded(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """An import inside ``try: ... except ImportError`` or ``if TYPE_CHECKING:``."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.Try) and any(
            isinstance(h.type, ast.Name) and h.type.id in {"ImportError", "ModuleNotFoundError"} for h in node.handlers
        ):
            return True
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports(path: Path, top_level_only: bool = False) -> list[tuple[str, bool]]:
    """(top-level module, guarded) of each absolute import of a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = []
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(a.name.split(".")[0], _guarded(node, parents)) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module.split(".")[0], _guarded(node, parents)))
    return found


def third_party(module: str) -> bool:
    return module not in sys.stdlib_module_names and module not in LOCAL and module != "__future__"


def _sources() -> list[Path]:
    files = [ROOT / "cli.py"]
    for folder in ("evalstore", "tests", "bench", "tools"):
        files += [p for p in (ROOT / folder).rglob("*.py") if "fixtures" not in p.parts]
    return files


def test_every_import_is_declared():
    groups = declared()
    everything = set().union(*groups.values())
    dists = packages_distributions()
    missing = []
    for path in _sources():
        for module, guarded in imports(path):
            if not third_party(module):
                continue
            provided = {_norm(d) for d in dists.get(module, [])}
            if not provided:  # not installed here: declared under its own name, or guarded
                if not guarded and _norm(module) not in everything:
                    missing.append(f"{path.relative_to(ROOT)}: {module} (not installed, import not guarded)")
                continue
            if not provided & everything:
                missing.append(f"{path.relative_to(ROOT)}: {module} (from {', '.join(sorted(provided))})")
    assert not missing, "imports of undeclared distributions:\n" + "\n".join(missing)


def test_what_every_test_imports_comes_with_the_test_extra():
    groups = declared()
    allowed = groups["core"] | groups["test"]
    dists = packages_distributions()
    shared = [ROOT / "tests" / "support.py", *(ROOT / "tests").rglob("conftest.py")]
    wrong = []
    for path in shared:
        for module, guarded in imports(path, top_level_only=True):
            if third_party(module) and not guarded and not {_norm(d) for d in dists.get(module, [])} & allowed:
                wrong.append(f"{path.relative_to(ROOT)}: {module}")
    assert not wrong, "imported by every test but not in the core or test dependencies:\n" + "\n".join(wrong)


def test_the_check_finds_an_undeclared_import(tmp_path):
    """The rule sees Click, the import that broke a fresh install (Typer 0.29 dropped it)."""
    probe = tmp_path / "probe.py"
    probe.write_text("from click.testing import Result\ntry:\n    import polars\nexcept ImportError:\n    pass\n")
    assert imports(probe) == [("click", False), ("polars", True)]
    assert "click" not in set().union(*declared().values())


def test_the_web_tests_skip_without_httpx():
    """Issue 39.10: with `pip install ".[web,test]"` (no httpx: the web-test extra brings it),
    collection stopped with an error; the web tests skip, saying what to install."""
    import subprocess

    blocker = (
        "import sys, importlib.abc\n"
        "class NoHttpx(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'httpx' or name.startswith('httpx.'):\n"
        "            raise ModuleNotFoundError('No module named httpx (blocked)', name=name)\n"
        "sys.meta_path.insert(0, NoHttpx())\n"
        "import pytest\n"
        # a folder above the web tests' (their conftest.py is then not an initial one, as with plain `pytest`)
        "sys.exit(pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', '-rs', 'tests/safety']))\n"
    )
    done = subprocess.run([sys.executable, "-c", blocker], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 5), done.stdout[-2000:] + done.stderr[-2000:]
    assert "error" not in done.stdout.lower().split("short test summary")[-1] and "httpx" in done.stdout
