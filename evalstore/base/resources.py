"""Where the SQL files, migrations and the bundled sample collection live.

In a wheel, ``sql/`` and ``migrations/`` are shipped inside the package as ``evalstore/_sql`` and
``evalstore/_migrations``; in a source checkout (editable install, ``python cli.py``) they are the
top-level folders of the repository.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PKG = Path(__file__).resolve().parent.parent  # the evalstore package (this module is in base/)


def _find(packaged: str, toplevel: str) -> Path:
    inside = _PKG / packaged
    if inside.is_dir():
        return inside
    repo = _PKG.parent / toplevel
    if repo.is_dir():
        return repo
    raise FileNotFoundError(f"evalstore installation is incomplete: neither {inside} nor {repo} exists")


@cache
def sql_dir() -> Path:
    return _find("_sql", "sql")


@cache
def migrations_dir() -> Path:
    return _find("_migrations", "migrations")


def sample_dir() -> Path:
    """The bundled sample collection (qrels + runs), see evalstore/data/sample/README.md."""
    return _PKG / "data" / "sample"


def rag_sample_dir() -> Path:
    """The bundled RAG sample (answers, nuggets, assignments, support labels), see
    evalstore/data/rag/README.md."""
    return _PKG / "data" / "rag"


@cache
def read_sql(name: str) -> str:
    return (sql_dir() / name).read_text(encoding="utf-8")


@cache
def sql_blocks(name: str) -> dict[str, str]:
    """The blocks of an SQL file that is not a metric family (``sql/fusion.sql``, ``sql/pool.sql``):
    ``-- @block NAME`` starts one; comment lines are dropped."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in read_sql(name).splitlines():
        if line.startswith("-- @block "):
            current = out.setdefault(line.split()[2], [])
        elif current is not None and not line.lstrip().startswith("--"):
            current.append(line)
    return {k: "\n".join(v).strip() for k, v in out.items()}
