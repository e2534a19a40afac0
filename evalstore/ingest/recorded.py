"""Runs recorded as a pipeline produces them (:class:`evalstore.pyterrier.Recorder`): identity by
content, never by a cache file.

:func:`record_run` stores a run given in memory under ``name`` only when its content is new: the
same rows as a run recorded before under ``name`` (or one of its variants ``name@<sha>``) store
nothing; other rows are a new run, under ``name`` while that is free, else ``name@<first 8 digits
of the sha256>``. Nothing is ever replaced, so an experiment's earlier runs stay as they were and a
changed pipeline cannot be mistaken for the old one (PyTerrier's stale ``save_dir``, issue #304).
The run's ir_metadata header (``runs.metadata``; ``export run`` writes it) names what made it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .checks import check_name
from .dicts import run_from_dict, run_sha256
from .ir_metadata import render
from .sources import run_table

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


@dataclass(frozen=True)
class Recorded:
    name: str  # the stored run that holds the content
    status: str  # 'added' or 'unchanged'
    sha256: str
    n_rows: int

    def summary(self) -> str:
        if self.status == "unchanged":
            return f"run {self.name!r}: the same rows are already stored (sha256 {self.sha256[:12]}), nothing to do"
        return f"run {self.name!r} recorded: {self.n_rows} rows (sha256 {self.sha256[:12]})"


def record_run(store: StoreHandle, name: str, run: Any, metadata: dict[str, Any] | None = None) -> Recorded:
    """Store ``run`` (a DataFrame, an Arrow table, a dict) as a run named after ``name`` when its
    content is new (see the module docstring), with ``metadata`` as its ir_metadata header."""
    check_name(name, "run")
    table = run_table(run, f"run {name!r}")
    con = store.con
    con.register("_recorded_run", table)
    try:
        sha = run_sha256(con, "_recorded_run")
    finally:
        con.unregister("_recorded_run")
    known = con.execute(
        "SELECT name, sha256 FROM run_meta WHERE name = ? OR name LIKE ? ESCAPE '\\' ORDER BY name",
        [name, _like(name) + "@%"],
    ).fetchall()
    same = [n for n, s in known if s == sha]
    if same:
        return Recorded(same[0], "unchanged", sha, table.num_rows)
    stored = name if name not in {n for n, _ in known} else f"{name}@{sha[:8]}"
    with store.transaction():
        run_from_dict(store, stored, table.select(["topic", "doc", "score"]), source=f"<recorded {name}>")
        if metadata:
            header = render(metadata)
            con.execute(
                "UPDATE run_meta SET metadata = ?::JSON, metadata_header = ? WHERE name = ?",
                [json.dumps(metadata, ensure_ascii=False, default=str), header, stored],
            )
    return Recorded(stored, "added", sha, table.num_rows)


def _like(text: str) -> str:
    """``text`` as a literal LIKE pattern (``%``, ``_`` and the escape character escaped)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
