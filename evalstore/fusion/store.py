"""Storing a fused run with its recipe: its rows (``run_row_data``), its ``run_meta`` row (the
same replace rules as an ingested run's), its ir_metadata header, and ``fusion_meta`` /
``fusion_inputs`` (the recipe, and each input run with the content hash it had), in one
transaction.

The fused run's content hash is the sha256 of the TREC run file ``export run`` writes for it
(:mod:`evalstore.ingest.run_export`: the header, then its rows), so fusing the same runs the same way
again is "unchanged", and the exported file ingested elsewhere has the same identity.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import FusionError
from ..ingest.checks import check_name
from ..ingest.ir_metadata import render
from ..ingest.run_export import content_sha256, line_tag
from ..ingest.run_text import run_file_chunks
from ..ingest.staging import Group
from ..ingest.write import run_meta_row, stored_identities
from ..output.text import count
from .compute import Input
from .recipe import Recipe

if TYPE_CHECKING:
    from ..db.handle import StoreHandle


@dataclass
class FusionResult:
    """A fused run: its name, whether it was ``added``, ``replaced`` or ``unchanged``, its rows and
    topics, the recipe (``recipe.description()``), the inputs as fused, how the weights or
    parameters were chosen (:class:`~evalstore.fusion.optimize.Optimization`), notes."""

    name: str
    status: str
    n_rows: int
    n_topics: int
    recipe: Recipe
    inputs: list[Input]
    optimization: Any = None
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.status == "unchanged":
            return f"run {self.name!r}: the same fusion of the same runs is already stored under this name"
        what = self.recipe.description()
        return f"run {self.name!r} {self.status}: {count(self.n_rows, 'row')}, {count(self.n_topics, 'topic')}, {what}"


def fused_source(rows: str) -> str:
    """The fused run (``rows``: its ``cand, topic, doc, score, rank``) in ``run_row_data``'s columns."""
    return f"""SELECT topic, doc, rank, rank AS submitted_rank, score,
                      row_number() OVER (ORDER BY topic, rank) AS line_no
               FROM ({rows})"""


def store_fused(
    store: StoreHandle,
    recipe: Recipe,
    inputs: Sequence[Input],
    rows: str,
    name: str,
    *,
    replace: bool = False,
    optimized: Mapping[str, Any] | None = None,
) -> FusionResult:
    """Store the fusion ``rows`` (a query giving ``cand, topic, doc, score, rank``) as the run
    ``name`` with its recipe (inside the caller's transaction, or one of its own)."""
    check_name(name, "run")
    if name in recipe.runs:
        raise FusionError(f"the fused run cannot take the name of its input {name!r}; choose another --name")
    con = store.con
    tag = line_tag(None, name)
    ins = [i.as_dict() for i in inputs]
    meta = recipe.ir_metadata(tag, ins, optimized)
    header = render(meta)
    source = fused_source(rows)
    sha, n_rows = content_sha256(run_file_chunks(store, f"({source})", header, tag))
    n_rows -= header.count("\n")
    (n_topics,) = con.execute(f"SELECT count(DISTINCT topic) FROM ({rows})").fetchall()[0]
    with store.transaction():
        old = stored_identities(con, "run", [name]).get(name)
        g = Group(0, [], sha, name=name, tag=tag, file_sha=sha)
        run_id, res = run_meta_row(store, g, n_rows, n_topics, 0, replace, "fusion", old)
        if run_id is None:
            return FusionResult(name, "unchanged", n_rows, n_topics, recipe, list(inputs), notes=res.messages)
        con.execute(
            f"""INSERT INTO run_row_data (run_id, topic, doc, rank, line_no, submitted_rank, score)
                SELECT ?, topic, doc, rank, line_no, submitted_rank, score FROM ({source})""",
            [run_id],
        )
        con.execute(
            "UPDATE run_meta SET source = ?, metadata = ?::JSON, metadata_header = ?, kind = 'fused' WHERE run_id = ?",
            ["fuse:" + ",".join(recipe.runs), json.dumps(meta), header, run_id],
        )
        con.execute(
            "INSERT INTO fusion_meta (run_id, recipe, description, sha256) VALUES (?, ?::JSON, ?, ?)",
            [run_id, json.dumps(recipe.to_dict(ins, optimized)), recipe.description(), sha],
        )
        con.execute(
            "INSERT INTO fusion_inputs SELECT ?, unnest(?), unnest(?), unnest(?), unnest(?), unnest(?::DOUBLE[])",
            [
                run_id,
                [i.pos for i in inputs],
                [i.run_id for i in inputs],
                [i.name for i in inputs],
                [i.sha256 for i in inputs],
                list(recipe.weights) if recipe.weights is not None else [None] * len(inputs),
            ],
        )
    return FusionResult(name, res.status, n_rows, n_topics, recipe, list(inputs), notes=res.messages)


def check_overlap(store: StoreHandle, inputs: Sequence[Input], inputs_table: str) -> None:
    """Refuse input runs that share no topic with the other inputs (runs of another collection:
    fusing them only puts unrelated rankings side by side), as ``compare`` refuses runs that share
    no topic with its qrels; ``--allow-disjoint`` (``allow_disjoint=True``) skips this check."""
    rows = store.con.execute(
        f"""WITH t AS (SELECT DISTINCT i.pos, r.topic FROM run_row_data r JOIN {inputs_table} i USING (run_id))
            SELECT a.pos, count(DISTINCT a.topic) FROM t a
            WHERE NOT EXISTS (SELECT 1 FROM t b WHERE b.topic = a.topic AND b.pos <> a.pos)
            GROUP BY a.pos
            HAVING count(*) = (SELECT count(*) FROM t c WHERE c.pos = a.pos) ORDER BY a.pos"""
    ).fetchall()
    if not rows:
        return
    names = {i.pos: i.name for i in inputs}
    lonely = ", ".join(f"{names[pos]!r} ({n} topic(s))" for pos, n in rows)
    what = (
        f"the input runs share no topic with each other: {lonely}"
        if len(rows) == len(inputs)
        else f"the input run(s) {lonely} share no topic with the other inputs"
    )
    raise FusionError(
        f"{what}; are they runs of one collection? Fusing them would only put unrelated rankings side by side: "
        f"pass --allow-disjoint to fuse them anyway"
    )


def coverage_notes(store: StoreHandle, inputs: Sequence[Input], inputs_table: str) -> list[str]:
    """Notes on input runs that lack topics others have (their documents count as missing there)."""
    rows = store.con.execute(
        f"""WITH t AS (SELECT DISTINCT r.topic FROM run_row_data r JOIN {inputs_table} i USING (run_id))
            SELECT i.pos, count(*) FROM {inputs_table} i CROSS JOIN t
            WHERE NOT EXISTS (SELECT 1 FROM run_row_data r WHERE r.run_id = i.run_id AND r.topic = t.topic)
            GROUP BY i.pos ORDER BY i.pos"""
    ).fetchall()
    names = {i.pos: i.name for i in inputs}
    return [
        f"the run {names[pos]!r} lacks {n} topic(s) of the other runs: its documents count as missing there"
        for pos, n in rows
    ]
