"""Docs that stay true: every cross-reference in the code's docstrings and in the Markdown docs
(``:mod:`evalstore.evaluation```, ``:func:`.render```, ``:class:`~evalstore.Store```, ...)
names something that exists, and the generated references (docs/metrics.md, docs/cli.md) are
the code's own."""

from __future__ import annotations

import functools
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
    assert not _resolve(".no_such_module", "evalstore.db")
    assert _resolve(".handle", "evalstore.db")
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
    """A path into the project (``tests/evalstore/base/test_aggregate.py``, ``sql/bpref.sql``, ...) named in
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


# --------------------------------------------------------------------------- names in backticks
#: The docs people write (the generated references, docs/cli.md and docs/metrics.md, are the code's
#: own and name command arguments and metrics in capitals).
WRITTEN = [d for d in DOCS if d.name not in {"cli.md", "metrics.md"}]
TICKED = re.compile(r"`([^`\n]+)`")
MODULE_PATH = re.compile(r"^[A-Za-z0-9_]+(?:/[A-Za-z0-9_]+)*(?:\.py|/)$")
REGISTRY = re.compile(r"^[A-Z][A-Z_]{3,}[A-Z]$")
DOTTED = re.compile(r"^([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*)+)(?:\(|$)")
FILE_NAME = re.compile(r"\.(py|md|sql|txt|gz|json|csv|tsv|html|svg|png|toml|yaml|duckdb|parquet)$")
PACKAGE = ROOT / "evalstore"


def _blocks(text: str) -> list[str]:
    """A Markdown text's paragraphs and list items: a module file named in one is read in the folder
    the block named last before it (``* **Output** (`evalstore/output/`): `table.py` ...``)."""
    return re.split(r"\n\s*\n|\n(?=\* )", text)


def _where(name: str, folders: list[Path]) -> Path | None:
    """Where a module path of the docs (``store.py``, ``ingest/formats.py``, ``db/``) is: in a
    folder the block named before it, at the project's root or in evalstore/ (a file name alone: or
    in bench/, tests/, tools/). A path into another project (its first folder is none of ours) is
    not checked (``ROOT``)."""
    bases = [*reversed(folders), ROOT, PACKAGE]
    if "/" not in name.rstrip("/"):
        bases += [ROOT / "bench", ROOT / "tests", ROOT / "tools"]
    elif not any((b / name.split("/")[0]).exists() for b in bases):
        return ROOT
    return next((b / name for b in bases if (b / name).exists()), None)


def _missing_paths(text: str) -> list[str]:
    out = []
    for block in _blocks(text):
        folders: list[Path] = []
        for n in TICKED.findall(block):
            if not MODULE_PATH.match(n):
                continue
            found = _where(n, folders)
            if found is None:
                out.append(n)
            elif "/" in n.rstrip("/") or n.endswith("/"):
                folders.append(found if found.is_dir() else found.parent)
    return out


def test_every_module_path_in_backticks_exists():
    """``comparison/render.py`` or ``rows.py`` in a doc where no such module exists is caught."""
    missing = [f"{d.relative_to(ROOT)}: {n}" for d in WRITTEN for n in _missing_paths(d.read_text(encoding="utf-8"))]
    assert missing == []


def test_a_missing_module_path_is_caught():
    text = "* **Output** (`evalstore/output/`): `table.py`, `rows.py`, `comparison/render.py`, `db/`\n"
    assert _missing_paths(text) == ["rows.py", "comparison/render.py"]
    assert _missing_paths("`evaluation/` (`stored.py`), `ingest/formats.py`, `readers.py`") == []
    assert _missing_paths("`judges/`: `stored.py`") == ["stored.py"]
    assert _missing_paths("`mteb/benchmarks/_create_table.py`, `store.py`") == []


def _defined_names() -> set[str]:
    """The module-level names (registries, constants) assigned in evalstore and the tests."""
    import ast

    out = set()
    for path in [*PACKAGE.rglob("*.py"), *(ROOT / "tests").rglob("*.py")]:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


#: DuckDB's COPY options the docs warn about (no keywords)
COPY_OPTIONS = {"OVERWRITE", "PARTITION_BY"}


def _not_a_registry(name: str) -> bool:
    """An all-capitals word that is an SQL keyword or a metric's name (``PIVOT``, ``NWRR``, ``GM_AP``)."""
    import duckdb

    from evalstore.errors import MetricError
    from evalstore.metrics.registry import parse_metric

    keywords = {k for (k,) in duckdb.sql("SELECT upper(keyword_name) FROM duckdb_keywords()").fetchall()}
    if name in keywords or name in COPY_OPTIONS:
        return True
    try:
        parse_metric(name)
    except MetricError:
        return False
    return True


def test_every_registry_named_exists():
    """An all-capitals name in backticks (``INPUT_FORMATS``, ``LINE_KINDS``, ``LAYERS``) is a module-level
    name of evalstore or the tests, unless it is an SQL keyword or a metric."""
    defined = _defined_names()
    assert {"INPUT_FORMATS", "OUTPUT_FORMATS", "LAYERS"} <= defined
    missing = sorted(
        f"{d.relative_to(ROOT)}: {n}"
        for d in WRITTEN
        for n in set(TICKED.findall(d.read_text(encoding="utf-8")))
        if REGISTRY.match(n) and n not in defined and not _not_a_registry(n)
    )
    assert missing == []


def test_a_missing_registry_is_caught():
    assert not _not_a_registry("FORMATS") and "FORMATS" not in _defined_names()
    assert _not_a_registry("PIVOT") and _not_a_registry("GM_AP")


@functools.cache
def _relations() -> set[str]:
    """The tables and views of the store's schema (``runs.metadata`` is a column, not a module's)."""
    pattern = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.I)
    return {m.lower() for p in (ROOT / "migrations").glob("*.sql") for m in pattern.findall(p.read_text())}


@functools.cache
def _modules() -> list[str]:
    return [_module_name(p) for p in PACKAGE.rglob("*.py")]


def _dotted_resolves(head: str, rest: str) -> bool | None:
    """Does ``head.rest`` (``evalstore.db.drop.plan_drop``, ``Store.evaluate``, ``store.sql``: a Store's,
    ``engine.metric_sql``: a module's) name something that exists? None when ``head`` is no name of
    evalstore's (``np.argsort``) or a table of the store (``runs.metadata``)."""
    if head == "evalstore":
        return _exists(head + rest)
    import evalstore

    if head == "store":  # a Store: its methods and the attributes its handle sets (store.con)
        from evalstore.db.handle import StoreHandle

        first = rest.split(".")[1]
        return _exists(f"evalstore.Store{rest}") or first in StoreHandle.__init__.__code__.co_names
    if head in evalstore.__all__:
        return _exists(f"evalstore.{head}{rest}")
    if head in _relations():
        return None
    matching = [m for m in _modules() if m.rsplit(".", 1)[-1] == head or m.endswith(f".{head}.__init__")]
    if not matching:
        return None
    return any(_exists(m + rest) for m in matching)


def _broken_dotted(text: str) -> list[str]:
    out = []
    for n in TICKED.findall(text):
        m = DOTTED.match(n)
        if m and not FILE_NAME.search(m[0]) and _dotted_resolves(m[1], m[2]) is False:
            out.append(n)
    return out


def test_every_function_named_exists():
    """A dotted name in backticks that starts at evalstore, one of its public names or one of its
    modules (``evalstore.open``, ``Store.design``, ``ranked_list.render``) names something that exists."""
    broken = [f"{d.relative_to(ROOT)}: {n}" for d in WRITTEN for n in _broken_dotted(d.read_text(encoding="utf-8"))]
    assert broken == []


def test_a_missing_function_is_caught():
    assert _broken_dotted("`Store.evaluate(x)`, `store.sql(...)`, `evalstore.open`, `np.argsort`, `store.py`") == []
    assert _broken_dotted("`ranked_list.render`, `runs.metadata`") == []
    assert _broken_dotted("`Store.no_such`, `evalstore.db.drop.nothing`, `engine.nothing()`") == [
        "Store.no_such",
        "evalstore.db.drop.nothing",
        "engine.nothing()",
    ]
