"""Docs that stay true: every cross-reference in the code's docstrings and in the Markdown docs
(``:mod:`evalstore.evaluation```, ``:func:`.render```, ``:class:`~evalstore.Store```, ...)
names something that exists, and the generated references (docs/metrics.md, docs/cli.md) are
the code's own."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from support import ROOT

from evalstore.cli import reference
from evalstore.metrics import docs as metric_docs

ROLE = re.compile(r":(mod|func|class|meth|data|attr|exc):`~?([A-Za-z0-9_.]+)`")
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(target: str, context: str | None) -> bool:
    """Does ``target`` name a module or an object, read from the module ``context`` (relative
    names: ``.render``, ``..store``; bare names: the module's own or its package's)?"""
    candidates = []
    if target.startswith("."):
        if context is None:
            return False
        package = context if _is_package(context) else context.rpartition(".")[0]
        up = len(target) - len(target.lstrip("."))
        base = package.rsplit(".", up - 1)[0] if up > 1 else package
        candidates.append(f"{base}.{target.lstrip('.')}")
    elif target.startswith("evalstore"):
        candidates.append(target)
    else:
        if context is not None:
            candidates += [f"{context}.{target}", f"{context.rpartition('.')[0]}.{target}"]
        candidates.append(f"evalstore.{target}")
    if any(_exists(c) for c in candidates):
        return True
    if context is not None and "." not in target:  # a method or attribute of a class of the module
        module = importlib.import_module(context)
        return any(isinstance(v, type) and hasattr(v, target) for v in vars(module).values())
    return False


def _is_package(name: str) -> bool:
    return hasattr(importlib.import_module(name), "__path__")


def _exists(dotted: str) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def _references() -> list[tuple[str, str, str | None]]:
    out = []
    for path in sorted((ROOT / "evalstore").rglob("*.py")):
        if "web" in path.parts and not _web_installed():
            continue
        for m in ROLE.finditer(path.read_text(encoding="utf-8")):
            out.append((str(path.relative_to(ROOT)), m.group(2), _module_name(path)))
    for path in DOCS:
        for m in ROLE.finditer(path.read_text(encoding="utf-8")):
            out.append((str(path.relative_to(ROOT)), m.group(2), None))
    return out


def _web_installed() -> bool:
    try:
        importlib.import_module("starlette")
        importlib.import_module("jinja2")
    except ImportError:
        return False
    return True


def test_every_cross_reference_resolves():
    refs = _references()
    assert len(refs) > 200
    broken = [f"{where}: {target}" for where, target, context in refs if not _resolve(target, context)]
    assert broken == []


def test_a_broken_reference_is_caught():
    assert not _resolve("evalstore.evaluate_many", None)
    assert not _resolve(".no_such_module", "evalstore.store")
    assert _resolve(".handle", "evalstore.store")
    assert _resolve("evalstore.Store.evaluate", None)


@pytest.mark.parametrize("module", [metric_docs, reference], ids=["metrics.md", "cli.md"])
def test_generated_docs_are_up_to_date(module):
    # the checkout's docs/, not DOC_PATH: CI installs the package (non-editable), so the module
    # imported here lives in site-packages, which has no docs folder beside it
    checked_in = ROOT / "docs" / module.DOC_PATH.name
    assert checked_in.read_text(encoding="utf-8") == module.markdown()


def test_docs_cite_no_private_paths():
    """Users have no ../shared folder: the docs cite papers and tools, not paths into it."""
    for path in [*DOCS, *(ROOT / "evalstore").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        assert "../shared/papers" not in text and "shared/reference/" not in text, path


PROJECT_PATH = re.compile(r"\b((?:tests|docs|sql|migrations|bench|tools|evalstore)/[A-Za-z0-9_./-]*[A-Za-z0-9_])")


#: paths that exist only once made: the bench's output, the SQL and migrations copied into a wheel
MADE = ("bench/out", "evalstore/_sql", "evalstore/_migrations")


def _project_paths(text: str) -> set[str]:
    """The paths into the project that a text names (file names with a suffix, or folders)."""
    return {p.rstrip(".") for p in PROJECT_PATH.findall(text) if not p.startswith(MADE)}


def test_every_project_path_named_exists():
    """A path into the project (``tests/evalstore/test_aggregate.py``, ``sql/bpref.sql``, ...) named in
    the docs, the docstrings, the SQL headers or the migrations exists."""
    sources = [*DOCS, *ROOT.glob("evalstore/**/*.py"), *ROOT.glob("sql/*.sql"), *ROOT.glob("migrations/*.sql")]
    missing = sorted(
        f"{src.relative_to(ROOT)}: {p}"
        for src in sources
        for p in _project_paths(src.read_text())
        if not (ROOT / p).exists() and not (ROOT / p).with_suffix("").exists()
    )
    assert missing == []


def test_a_missing_project_path_is_caught():
    assert _project_paths("see ``tests/test_aggregate.py`` and sql/bpref.sql.") == {
        "tests/test_aggregate.py",
        "sql/bpref.sql",
    }
